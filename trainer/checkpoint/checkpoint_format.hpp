#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/adapter_meta.hpp"
#include "checkpoint/run_identity.hpp"
#include "models/model_config.hpp"

namespace wireup::train {

// What one checkpoint holds, as written to its metadata.json (written last:
// a step directory without it is not a checkpoint). Each unit's parameters
// form one flat fp32 buffer, and so does each other tensor of its state (the
// unit_tensors: the parameters, then the optimizer's moments); writer ranks
// store slices of each ("chunks"). Any world size can read it back by
// intersecting ranges.
struct ChunkRef {
  int unit = 0;
  std::string kind;                // one of the checkpoint's unit_tensors: "param", "exp_avg"
  std::int64_t global_offset = 0;  // element offset in the unit's flat buffer
  std::int64_t numel = 0;
  std::uint64_t file_offset = 0;  // bytes
  std::string sha256;
};

struct RankFile {
  std::string file;  // relative to the step directory
  std::uint64_t bytes = 0;
  std::vector<ChunkRef> chunks;
};

struct UnitMeta {
  std::string name;
  std::int64_t numel = 0;  // real parameters (the rest of a slice is padding)
  std::vector<std::string> param_names;
  std::vector<std::vector<std::int64_t>> param_shapes;
};

struct CheckpointMeta {
  int version = 1;
  std::string wireup_version;
  std::int64_t step = 0;
  std::uint64_t seed = 0;
  ModelConfig model;
  std::string preset;
  std::string sharding;
  int world_size = 1;
  int shard_group_size = 1;
  std::int64_t optimizer_steps = 0;
  double beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  std::string data_position;  // the loader's position JSON, or "synthetic:<draws>"
  // The chat template of the data set trained on (its manifest's
  // chat.template: what generate renders prompts with); "" for text.
  std::string chat_template;
  // A LoRA run's: its units are the adapters, the base is named here.
  std::optional<AdapterMeta> lora;
  // A DPO run's: its settings and reference.
  std::optional<DpoMeta> dpo;
  // The tensors of each unit's state, by name, in the order they are written
  // (TrainingState::tensor_names); a metadata.json without the field holds
  // kDefaultUnitTensors.
  std::vector<std::string> unit_tensors;
  std::vector<UnitMeta> units;
  std::vector<RankFile> files;
};

// The identity a checkpoint records: its model and lora objects.
inline RunIdentity identity_of(const CheckpointMeta& m) { return {m.model, m.lora, m.dpo}; }

// What a unit's state is when metadata.json does not say: its parameters and
// AdamW's two moments.
inline const std::vector<std::string> kDefaultUnitTensors{"param", "exp_avg", "exp_avg_sq"};
// Tensor names: 1 to kMaxUnitTensors of them, each 1-32 of [a-z0-9_], no
// name twice (unit_tensors_problem: "" or what is wrong).
constexpr std::size_t kMaxUnitTensors = 16;
std::string unit_tensors_problem(const std::vector<std::string>& names);

// The most bytes of a metadata.json read (a 405B model's on 1024 ranks: about
// 80 MB), its JSON's depth and values (checked before the parse: a tree under
// ~800 MB), and the largest world size a checkpoint may name.
constexpr std::uint64_t kMaxMetadataBytes = 256ull << 20;
constexpr std::size_t kMaxMetadataDepth = 8;
constexpr std::uint64_t kMaxMetadataValues = 1ull << 23;
constexpr int kMaxWorldSize = 1 << 20;

std::string to_json(const CheckpointMeta& m);
std::string to_json(const RankFile& f);
// `name` (the file) starts every error message. Besides the fields' types:
// 1 <= shard_group_size <= world_size <= kMaxWorldSize, world_size a multiple
// of shard_group_size; each unit's numel the sum of its parameters' shapes
// (checked for overflow); each chunk inside its file's recorded bytes
// (file_offset + 4*numel, checked for overflow), each unit's numel within the
// rank files' recorded bytes; JSON no deeper than kMaxMetadataDepth, with
// at most kMaxMetadataValues values.
CheckpointMeta checkpoint_meta_from_json(const std::string& text, const std::string& name);
RankFile rank_file_from_json(const std::string& text, const std::string& name);

// Where the elements [begin, begin+count) of one unit's `kind` come from.
struct ReadPiece {
  std::size_t file = 0;         // index into meta.files
  std::size_t chunk = 0;        // index into that file's chunks
  std::int64_t chunk_skip = 0;  // elements into the chunk
  std::int64_t dest = 0;        // elements into the destination
  std::int64_t count = 0;
};
// Throws InputError if some real element (below the unit's numel) is covered
// by no chunk. Elements at or past numel are padding: left to the caller (zero).
std::vector<ReadPiece> plan_reads(const CheckpointMeta& m, int unit, const std::string& kind,
                                  std::int64_t begin, std::int64_t count);

// "step-00000040"
std::string step_dir_name(std::int64_t step);

}  // namespace wireup::train
