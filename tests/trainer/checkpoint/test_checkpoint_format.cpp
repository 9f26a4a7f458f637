// The checkpoint's metadata JSON and the resharding read plan (no Torch).
#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint_meta_fixture.hpp"
#include "models/model_config.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;
using wireup::InputError;

using test::two_rank_meta;

namespace {

// The InputError checkpoint_meta_from_json raises for `text`, or "no error".
std::string error_of(const std::string& text) {
  try {
    checkpoint_meta_from_json(text, "ck/metadata.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("checkpoint metadata survives a JSON round trip") {
  const CheckpointMeta m = two_rank_meta();
  const CheckpointMeta back = checkpoint_meta_from_json(to_json(m), "metadata.json");
  CHECK(back.step == 40);
  CHECK(back.seed == 1234);
  CHECK(back.model.hidden == m.model.hidden);
  CHECK(back.model.layers == m.model.layers);
  CHECK(back.model.rope_theta == m.model.rope_theta);
  CHECK(back.preset == "tiny");
  CHECK(back.sharding == "full");
  CHECK(back.world_size == 2);
  CHECK(back.shard_group_size == 2);
  CHECK(back.optimizer_steps == 40);
  CHECK(back.beta2 == 0.95);
  CHECK(back.data_position == "synthetic:40");
  REQUIRE(back.units.size() == 1);
  CHECK(back.units[0].param_shapes[0] == std::vector<std::int64_t>{5, 2});
  REQUIRE(back.files.size() == 2);
  CHECK(back.files[1].chunks[2].kind == "exp_avg_sq");
  CHECK(back.files[1].chunks[2].file_offset == 48);
  CHECK(back.files[1].chunks[2].sha256 == std::string(64, 'c'));
  CHECK(to_json(back) == to_json(m));

  const RankFile f = rank_file_from_json(to_json(m.files[0]), "rank-00000.json");
  CHECK(f.bytes == 72);
  CHECK(f.chunks.size() == 3);
}

TEST_CASE("bad checkpoint metadata is an InputError naming the file") {
  const std::string good = to_json(two_rank_meta());
  CHECK_THAT(error_of("{\"format\": \"wireup-checkpoint\", \"version\": 1"),
             Catch::StartsWith("ck/metadata.json: not a wireup checkpoint description"));
  CHECK_THAT(error_of("[]"), Catch::StartsWith("ck/metadata.json: "));
  std::string other = good;
  other.replace(other.find("wireup-checkpoint"), 17, "something-else123");
  CHECK_THAT(error_of(other), Catch::Contains("format is not wireup-checkpoint"));
  std::string v2 = good;
  v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 2");
  CHECK_THAT(error_of(v2), Catch::Contains("unsupported version 2"));
  std::string escape = good;
  escape.replace(escape.find("rank-00001.bin"), 14, "../../etc/pwd");
  CHECK_THAT(error_of(escape), Catch::Contains("bad shard file name"));
  std::string negative = good;
  negative.replace(negative.find("\"numel\": 6"), 10, "\"numel\":-6");
  CHECK_THAT(error_of(negative), Catch::Contains("negative chunk range"));
  std::string unknown_unit = good;
  unknown_unit.replace(unknown_unit.find("\"unit\": 0"), 9, "\"unit\": 7");
  CHECK_THAT(error_of(unknown_unit), Catch::Contains("chunk of unknown unit 7"));
  CHECK_THROWS_WITH(rank_file_from_json("{}", "rank-00000.json"),
                    Catch::StartsWith("rank-00000.json: "));
}

TEST_CASE("a checkpoint names the tensors of a unit's state") {
  CheckpointMeta m = two_rank_meta();
  CHECK(checkpoint_meta_from_json(to_json(m), "m").unit_tensors == kDefaultUnitTensors);
  // A metadata.json without the field holds the parameters and AdamW's moments.
  std::string old = to_json(m);
  const auto from = old.find("\"unit_tensors\"");
  old.erase(from, old.find("],", from) + 2 - from);
  REQUIRE(old.find("unit_tensors") == std::string::npos);
  CHECK(checkpoint_meta_from_json(old, "m").unit_tensors == kDefaultUnitTensors);
  // One more piece of state: a name in the list and its chunks.
  m.unit_tensors = {"param", "exp_avg", "exp_avg_sq", "router_bias"};
  m.files[0].chunks.push_back({0, "router_bias", 0, 6, 72, std::string(64, 'd')});
  m.files[0].bytes = 96;
  const CheckpointMeta back = checkpoint_meta_from_json(to_json(m), "m");
  CHECK(back.unit_tensors == m.unit_tensors);
  CHECK(plan_reads(back, 0, "router_bias", 0, 6).size() == 1);
  CHECK_THROWS_WITH(plan_reads(back, 0, "router_bias", 0, 10),
                    Catch::Contains("cover 6 of the 10"));
  // Chunks of a kind the list does not name, and bad lists.
  CheckpointMeta unnamed = two_rank_meta();
  unnamed.files[1].chunks[0].kind = "momentum";
  CHECK_THAT(error_of(to_json(unnamed)),
             Catch::Contains("chunk of unit 0 of kind 'momentum', not one of unit_tensors"));
  for (const auto& [names, reason] :
       {std::pair<std::vector<std::string>, std::string>{{"param", "param"}, "named twice"},
        {{"Param"}, "expected 1-32 of [a-z0-9_]"},
        {{"param", std::string(33, 'x')}, "expected 1-32 of [a-z0-9_]"},
        {std::vector<std::string>(17, "x"), "17 unit tensors (expected 1 to 16)"}}) {
    CheckpointMeta bad = two_rank_meta();
    bad.unit_tensors = names;
    CHECK_THAT(error_of(to_json(bad)), Catch::Contains(reason));
  }
}

TEST_CASE("sizes in checkpoint metadata are checked before anything is allocated") {
  auto error_of = [](const CheckpointMeta& m) {
    try {
      checkpoint_meta_from_json(to_json(m), "ck/metadata.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(two_rank_meta()) == "no error");
  // 2^62 elements: 4 * numel wraps to 0 bytes.
  CheckpointMeta wrap = two_rank_meta();
  wrap.files[0].chunks[0].numel = std::int64_t{1} << 62;
  CHECK_THAT(error_of(wrap), Catch::StartsWith("ck/metadata.json: rank-00000.bin: chunk of "
                                               "4611686018427387904 elements at byte 0 lies "
                                               "past the file's 72 bytes"));
  CheckpointMeta past = two_rank_meta();
  past.files[1].chunks[2].file_offset = 64;
  CHECK_THAT(error_of(past), Catch::Contains("lies past the file's 72 bytes"));
  for (int world : {0, -1, 1000000000, 3}) {
    CheckpointMeta w = two_rank_meta();
    w.world_size = world;
    CAPTURE(world);
    CHECK_THAT(error_of(w), Catch::Contains("world_size " + std::to_string(world) +
                                            " and shard_group_size 2: expected 1 <= "
                                            "shard_group_size <= world_size <= 1048576"));
  }
  CheckpointMeta wide = two_rank_meta();
  wide.world_size = 1 << 20;
  CHECK(error_of(wide) == "no error");
  CheckpointMeta numel = two_rank_meta();
  numel.units[0].numel = std::int64_t{1} << 40;
  CHECK_THAT(error_of(numel), Catch::Contains("unit embed: numel 1099511627776, its "
                                              "parameters' shapes make 10"));
  CheckpointMeta huge = two_rank_meta();
  huge.units[0].param_shapes[0] = {1 << 20, 1 << 20};
  huge.units[0].numel = std::int64_t{1} << 40;
  CHECK_THAT(error_of(huge), Catch::Contains("more than the rank files' 36 recorded elements"));
  CheckpointMeta wraps = two_rank_meta();
  wraps.units[0].param_shapes[0] = {std::int64_t{1} << 40, std::int64_t{1} << 40};
  CHECK_THAT(error_of(wraps), Catch::Contains("passes 2^62"));
  CHECK_THAT(error_of(two_rank_meta()), Catch::Equals("no error"));
  // Found by fuzz_checkpoint_meta: a number outside int converted with undefined behaviour.
  std::string far = to_json(two_rank_meta());
  far.replace(far.find("\"unit\": 0"), 9, "\"unit\": 4.4e89");
  CHECK_THROWS_WITH(checkpoint_meta_from_json(far, "ck/metadata.json"),
                    Catch::Contains("unit is 4.4e+89, not an integer in range"));
  std::string fraction = to_json(two_rank_meta());
  fraction.replace(fraction.find("\"world_size\": 2"), 15, "\"world_size\": 2.5");
  CHECK_THROWS_WITH(checkpoint_meta_from_json(fraction, "ck/metadata.json"),
                    Catch::Contains("world_size is 2.5, not an integer in range"));
  CHECK_THROWS_WITH(checkpoint_meta_from_json(std::string(100000, '['), "ck/metadata.json"),
                    Catch::StartsWith("ck/metadata.json: JSON nested deeper than 8 levels"));
}

TEST_CASE("plan_reads maps any slice onto the saved chunks") {
  const CheckpointMeta m = two_rank_meta();
  // The whole unit as one rank: two pieces, padding (10, 12) excluded.
  auto all = plan_reads(m, 0, "param", 0, 12);
  REQUIRE(all.size() == 2);
  CHECK(all[0].file == 0);
  CHECK(all[0].chunk == 0);
  CHECK(all[0].chunk_skip == 0);
  CHECK(all[0].dest == 0);
  CHECK(all[0].count == 6);
  CHECK(all[1].file == 1);
  CHECK(all[1].chunk_skip == 0);
  CHECK(all[1].dest == 6);
  CHECK(all[1].count == 4);

  // Rank 1 of 3 (slices of 4): elements [4, 8) straddle the two files.
  auto mid = plan_reads(m, 0, "exp_avg", 4, 4);
  REQUIRE(mid.size() == 2);
  CHECK(mid[0].file == 0);
  CHECK(mid[0].chunk == 1);
  CHECK(mid[0].chunk_skip == 4);
  CHECK(mid[0].dest == 0);
  CHECK(mid[0].count == 2);
  CHECK(mid[1].file == 1);
  CHECK(mid[1].chunk == 1);
  CHECK(mid[1].chunk_skip == 0);
  CHECK(mid[1].dest == 2);
  CHECK(mid[1].count == 2);

  // A slice that is all padding needs no read at all.
  CHECK(plan_reads(m, 0, "param", 10, 2).empty());

  // A missing shard file leaves real elements uncovered: an error, not zeros.
  CheckpointMeta missing = m;
  missing.files.pop_back();
  CHECK_THROWS_WITH(plan_reads(missing, 0, "param", 0, 12),
                    Catch::Contains("chunks cover 6 of the 10 elements"));
  // Overlapping chunks (the same file listed twice) are refused too.
  CheckpointMeta twice = m;
  twice.files.push_back(m.files[0]);
  CHECK_THROWS_AS(plan_reads(twice, 0, "param", 0, 12), InputError);
}

TEST_CASE("step directory names sort by step") {
  CHECK(step_dir_name(40) == "step-00000040");
  CHECK(step_dir_name(200) > step_dir_name(60));
}
