// A LoRA checkpoint's "lora" metadata (no Torch): the JSON both ways, inside
// metadata.json, and the rule that decides whether a run may resume it.
#include <catch2/catch.hpp>

#include "checkpoint/adapter_meta.hpp"
#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint_meta_fixture.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;

namespace {

AdapterMeta adapters(std::int64_t rank = 8, const std::string& fingerprint = std::string(64, 'a')) {
  AdapterMeta a;
  a.lora.rank = rank;
  a.lora.alpha = 16;
  a.lora.dropout = 0.05;
  a.lora.targets = {lora::Target::Q, lora::Target::V, lora::Target::Down};
  a.base = "/fsx/models/Llama-3.1-8B";
  a.base_fingerprint = fingerprint;
  return a;
}

}  // namespace

TEST_CASE("a LoRA checkpoint's metadata keeps its adapters' settings and base") {
  CheckpointMeta m = test::two_rank_meta();
  m.lora = adapters();
  const CheckpointMeta back = checkpoint_meta_from_json(to_json(m), "metadata.json");
  REQUIRE(back.lora);
  CHECK(back.lora->lora.rank == 8);
  CHECK(back.lora->lora.alpha == 16);
  CHECK(back.lora->lora.dropout == 0.05);
  CHECK(back.lora->lora.targets == m.lora->lora.targets);
  CHECK(back.lora->base == "/fsx/models/Llama-3.1-8B");
  CHECK(back.lora->base_fingerprint == std::string(64, 'a'));
  // A full model's checkpoint has none, and one written before LoRA existed reads so too.
  CHECK_FALSE(checkpoint_meta_from_json(to_json(test::two_rank_meta()), "m").lora);
}

TEST_CASE("a bad \"lora\" object is refused naming the file") {
  std::string text = adapter_meta_json(adapters());
  text.replace(text.find("q,v,down"), 8, "q,lm_head");
  CHECK_THROWS_WITH(adapter_meta_from_json(text, "s/metadata.json"),
                    Catch::Contains("s/metadata.json") && Catch::Contains("lm_head"));
  CHECK_THROWS_AS(adapter_meta_from_json("{\"rank\": 8}", "m"), wireup::InputError);
}

TEST_CASE("resuming adapters needs the same base and the same adapters") {
  const auto same = adapters();
  CHECK(adapter_mismatch(std::nullopt, std::nullopt).empty());
  CHECK(adapter_mismatch(same, same).empty());
  AdapterMeta dropout = same;
  dropout.lora.dropout = 0.2;  // a training setting: may change on resume
  CHECK(adapter_mismatch(same, dropout).empty());
  AdapterMeta moved = same;
  moved.base = "/scratch/copy-of-llama";  // the same files elsewhere
  CHECK(adapter_mismatch(same, moved).empty());

  const std::string other = adapter_mismatch(same, adapters(8, std::string(64, 'b')));
  CHECK_THAT(other, Catch::Contains("aaaaaaaaaaaaaaaa") && Catch::Contains("bbbbbbbbbbbbbbbb"));
  CHECK_THAT(adapter_mismatch(same, adapters(16)),
             Catch::Contains("rank 8") && Catch::Contains("rank 16"));
  CHECK_THAT(adapter_mismatch(same, std::nullopt), Catch::Contains("full model"));
  CHECK_THAT(adapter_mismatch(std::nullopt, same), Catch::Contains("full model"));
}
