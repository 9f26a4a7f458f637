// A checkpoint's metadata for tests that need a valid one without a run: the
// checkpoint format's unit tests and the seed corpus of fuzz_checkpoint_meta
// (tests/fuzz/make_trainer_seeds.cpp). Header only: the fuzz build compiles it
// with its own flags.
#pragma once
#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_format.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"

namespace wireup::train::test {

// Unit 0 of 10 real elements (padded to 12), saved by 2 shard ranks of 6:
// rank 0 holds [0, 6), rank 1 holds [6, 12) (its last 2 are padding).
inline CheckpointMeta two_rank_meta() {
  CheckpointMeta m;
  m.wireup_version = "0.1.0";
  m.step = 40;
  m.seed = 1234;
  m.model = preset("tiny");
  m.preset = "tiny";
  m.sharding = "full";
  m.world_size = 2;
  m.shard_group_size = 2;
  m.optimizer_steps = 40;
  m.beta1 = 0.9, m.beta2 = 0.95, m.eps = 1e-8, m.weight_decay = 0.1;
  m.data_position = "synthetic:40";
  m.units.push_back({"embed", 10, {"tok_embeddings.weight"}, {{5, 2}}});
  for (int r = 0; r < 2; ++r) {
    RankFile f;
    f.file = r == 0 ? "rank-00000.bin" : "rank-00001.bin";
    const char* kinds[] = {"param", "exp_avg", "exp_avg_sq"};
    for (int k = 0; k < 3; ++k)
      f.chunks.push_back({0, kinds[k], 6 * r, 6, static_cast<std::uint64_t>(24 * k),
                          std::string(64, static_cast<char>('a' + k))});
    f.bytes = 72;
    m.files.push_back(f);
  }
  return m;
}

}  // namespace wireup::train::test
