// Writes the seed corpus of the trainer's fuzz targets, one valid file of each
// kind: CORPUS/fuzz_safetensors/{header,index}, CORPUS/fuzz_hf_config/config.json,
// CORPUS/fuzz_checkpoint_meta/{metadata.json,rank.json}, CORPUS/fuzz_memory_snapshot/
// {manifest,node,part} (the reader's letter first). Usage: make_trainer_seeds CORPUS
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint/memory_snapshot_manifest.hpp"
#include "checkpoint/memory_snapshot_part.hpp"
#include "checkpoint_meta_fixture.hpp"
#include "hf/hf_config.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"

namespace fs = std::filesystem;
using namespace wireup::train;

namespace {

void put(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

// Two tensors (a [2, 2] F32, b [3] BF16) and their 22 data bytes.
std::string safetensors_file() {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}})";
  std::string out(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + header + std::string(22, '\x01');
}

// A 2-node, 4-rank snapshot: its manifest, node a1's report of it, rank 2's part.
void put_memory_snapshot(const fs::path& dir) {
  SnapshotManifest m{"4242", 1000, 40, {"a1", "a1", "a2", "a2"}, {}, {}, {}};
  const std::string sum = "0123456789abcdef0123456789abcdef";
  for (int r = 0; r < 4; ++r) m.parts.push_back({r, m.rank_node[r], 96, sum});
  m.replicas = {{0, "a2", 96, sum}, {2, "a1", 96, sum}};
  put(dir, "manifest", "m" + to_text(m));
  NodeMemory n{"a1", true, "", {}};
  n.snapshots.push_back({40, "", m, {0, 1}, {2}});
  n.snapshots.push_back({30, "no complete marker", std::nullopt, {}, {}});
  put(dir, "node", "n" + to_text(n));
  PartHeader h{40,
               40,
               4,
               2,
               "shard 3 offset 17",
               {"param", "exp_avg", "exp_avg_sq"},
               {{"embed", 0, 2}, {"layers.0", 2, 2}}};
  put(dir, "part", "p" + to_text(h) + std::string(h.tensor_bytes(), '\x3f'));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const fs::path corpus = argv[1];
  put(corpus / "fuzz_safetensors", "header", safetensors_file());
  put(corpus / "fuzz_safetensors", "index",
      R"({"metadata":{"total_size":22},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
      R"("b":"model-00002-of-00002.safetensors"}})");
  put(corpus / "fuzz_hf_config", "config.json", hf::config_json(preset("tiny"), "float32"));
  put(corpus / "fuzz_hf_config", "llama3.json", hf::config_json(preset("llama3.1-8b"), "bfloat16"));
  const CheckpointMeta m = test::two_rank_meta();
  put(corpus / "fuzz_checkpoint_meta", "metadata.json", to_json(m));
  put(corpus / "fuzz_checkpoint_meta", "rank.json", "r" + to_json(m.files[1]));
  put_memory_snapshot(corpus / "fuzz_memory_snapshot");
  return 0;
}
