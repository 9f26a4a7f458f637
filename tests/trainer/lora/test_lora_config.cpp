// LoRA's settings: target names both ways, --lora_targets, the checks of --lora_* (no Torch).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "lora/lora_config.hpp"
#include "wireup/error.hpp"

using namespace wireup::train::lora;
using Catch::Matchers::Contains;

namespace {

LoraConfig good() {
  LoraConfig c;
  c.rank = 16;
  c.alpha = 32;
  c.dropout = 0.05;
  return c;
}

}  // namespace

TEST_CASE("the seven projections have their short, HF module and parent names") {
  std::set<std::string> shorts, modules;
  for (Target t : kAllTargets) {
    shorts.insert(short_name(t));
    modules.insert(hf_module(t));
    CHECK(std::string(hf_module(t)) == std::string(short_name(t)) + "_proj");
  }
  CHECK(shorts.size() == 7);
  CHECK(modules.size() == 7);
  CHECK(std::string(hf_module(Target::Gate)) == "gate_proj");
  CHECK(std::string(hf_parent(Target::Q)) == "self_attn");
  CHECK(std::string(hf_parent(Target::O)) == "self_attn");
  CHECK(std::string(hf_parent(Target::Gate)) == "mlp");
  CHECK(std::string(hf_parent(Target::Down)) == "mlp");
}

TEST_CASE("a default config is off, targets all seven and scales by alpha / rank") {
  LoraConfig c;
  CHECK_FALSE(c.enabled());
  CHECK(c.targets.size() == 7);
  CHECK(targets_csv(c.targets) == "q,k,v,o,gate,up,down");
  c = good();
  CHECK(c.enabled());
  CHECK(c.scale() == 2.0);
  c.targets = {Target::Q, Target::V};
  CHECK(c.adapts(Target::V));
  CHECK_FALSE(c.adapts(Target::K));
}

TEST_CASE("--lora_targets takes short or HF names, any order, and sorts and folds them") {
  CHECK(parse_targets("q,k,v,o,gate,up,down") ==
        std::vector<Target>(kAllTargets.begin(), kAllTargets.end()));
  CHECK(parse_targets("v_proj,q") == std::vector<Target>{Target::Q, Target::V});
  CHECK(parse_targets(" down , gate_proj,up ") ==
        std::vector<Target>{Target::Gate, Target::Up, Target::Down});
  CHECK(parse_targets("q,q_proj,q") == std::vector<Target>{Target::Q});
  for (Target t : kAllTargets) CHECK(parse_targets(targets_csv({t})) == std::vector<Target>{t});
  CHECK(targets_csv(parse_targets("o,k")) == "k,o");
}

TEST_CASE("--lora_targets refuses unknown and empty items, naming them and the accepted names") {
  CHECK_THROWS_AS(parse_targets("q,lm_head"), wireup::InputError);
  CHECK_THROWS_WITH(parse_targets("q,lm_head"),
                    Contains("--lora_targets") && Contains("unknown 'lm_head'") &&
                        Contains("q (q_proj)") && Contains("down (down_proj)"));
  CHECK_THROWS_WITH(parse_targets(""), Contains("--lora_targets") && Contains("empty item"));
  CHECK_THROWS_WITH(parse_targets("q,,v"), Contains("empty item"));
  CHECK_THROWS_WITH(parse_targets("q,"), Contains("empty item"));
  CHECK_THROWS_WITH(parse_targets("Q"), Contains("unknown 'Q'"));  // names are case-sensitive
  CHECK_THROWS_WITH(parse_targets("self_attn.q_proj"), Contains("unknown 'self_attn.q_proj'"));
}

TEST_CASE("validate accepts a good config and its bounds") {
  CHECK_NOTHROW(validate(good()));
  LoraConfig c = good();
  c.rank = 1;
  c.dropout = 0;
  CHECK_NOTHROW(validate(c));
  c.rank = kMaxRank;
  c.dropout = 0.999;
  c.alpha = 1e-3;
  CHECK_NOTHROW(validate(c));
}

TEST_CASE("validate names the flag and the value it refuses") {
  LoraConfig c = good();
  c.rank = 0;
  CHECK_THROWS_WITH(validate(c), Contains("--lora_rank 0: expected 1 to 65536"));
  c.rank = kMaxRank + 1;
  CHECK_THROWS_WITH(validate(c), Contains("--lora_rank 65537"));
  c.rank = -4;
  CHECK_THROWS_WITH(validate(c), Contains("--lora_rank -4"));

  c = good();
  c.alpha = 0;
  CHECK_THROWS_WITH(validate(c), Contains("--lora_alpha 0") && Contains("required"));
  c.alpha = -8;
  CHECK_THROWS_WITH(validate(c), Contains("--lora_alpha -8"));
  c.alpha = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(validate(c), Contains("--lora_alpha inf"));
  c.alpha = std::nan("");
  CHECK_THROWS_WITH(validate(c), Contains("--lora_alpha"));

  c = good();
  c.dropout = 1;
  CHECK_THROWS_WITH(validate(c), Contains("--lora_dropout 1: expected 0 <= p < 1"));
  c.dropout = -0.1;
  CHECK_THROWS_WITH(validate(c), Contains("--lora_dropout -0.1"));
  c.dropout = std::nan("");
  CHECK_THROWS_WITH(validate(c), Contains("--lora_dropout"));

  c = good();
  c.targets.clear();
  CHECK_THROWS_WITH(validate(c), Contains("--lora_targets is empty"));
  c.targets = {Target::V, Target::Q};
  CHECK_THROWS_WITH(validate(c), Contains("--lora_targets v,q"));
  c.targets = {Target::Q, Target::Q};
  CHECK_THROWS_WITH(validate(c), Contains("--lora_targets q,q"));
}
