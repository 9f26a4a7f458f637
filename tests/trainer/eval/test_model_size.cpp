// A model's shapes from a file checked before anything is allocated (no Torch).
#include <catch2/catch.hpp>

#include "eval/model_size.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;
using Catch::Matchers::Contains;

TEST_CASE("the size check counts parameters as the trainer does (total_params)") {
  ModelConfig m = preset("llama3-8b");
  // 8030261248 fp32 parameters are 29.9 GiB: one rank with 30 GiB holds them, with 29 not.
  CHECK_NOTHROW(check_model_size(m, "config.json", kHfConfigFields, 1, 30ull << 30));
  CHECK_THROWS_AS(check_model_size(m, "config.json", kHfConfigFields, 1, 29ull << 30),
                  wireup::InputError);
  m.tied = true;  // 525 M fewer: 27.9 GiB
  CHECK_NOTHROW(check_model_size(m, "config.json", kHfConfigFields, 1, 28ull << 30));
}

TEST_CASE("a field outside its bound is named") {
  ModelConfig m = preset("tiny");
  m.layers = 1000000000;
  CHECK_THROWS_WITH(check_model_size(m, "/hf/config.json", kHfConfigFields, 1, 1ull << 40),
                    Contains("/hf/config.json: num_hidden_layers=1000000000: expected 1 to 4096"));
  m = preset("tiny");
  m.vocab = 1ll << 40;
  CHECK_THROWS_WITH(check_model_size(m, "metadata.json", kCheckpointFields, 1, 1ull << 40),
                    Contains("model.vocab=1099511627776"));
  m = preset("tiny");
  m.heads = -1;
  CHECK_THROWS_WITH(check_model_size(m, "c", kHfConfigFields, 1, 1ull << 40),
                    Contains("num_attention_heads=-1"));
}

TEST_CASE("a model larger than memory names the fields that make it so") {
  ModelConfig m = preset("llama3-8b");
  CHECK_NOTHROW(check_model_size(m, "c", kHfConfigFields, 1, 128ull << 30));
  CHECK_NOTHROW(check_model_size(m, "c", kHfConfigFields, 8, 16ull << 30));
  // 4 bytes a parameter (no gradient): 29.9 GiB fits 32 GiB, 8 bytes would not.
  CHECK_NOTHROW(check_model_size(m, "c", kHfConfigFields, 1, 32ull << 30));
  CHECK_THROWS_WITH(check_model_size(m, "c", kHfConfigFields, 1, 29ull << 30),
                    Contains("29.9 GiB per rank at world 1 (fp32 parameter shard)"));
  CHECK_THROWS_WITH(check_model_size(m, "/hf/config.json", kHfConfigFields, 1, 8ull << 30),
                    Contains("/hf/config.json: num_hidden_layers=32, hidden_size=4096, "
                             "intermediate_size=14336 make a model of 8030261248 parameters") &&
                        Contains("more than the 8.0 GiB of memory this process may use"));
  m.layers = 1;
  CHECK_THROWS_WITH(check_model_size(m, "c", kHfConfigFields, 1, 1ull << 30),
                    Contains("vocab_size=128256, hidden_size=4096 make"));
  CHECK(physical_memory_bytes() > (64ull << 20));
}

TEST_CASE("config.json's JSON is bounded before it is parsed") {
  CHECK_THROWS_WITH(model_config_from_hf_config(std::string(100000, '['), "/hf/config.json"),
                    Contains("/hf/config.json: JSON nested deeper than 32 levels"));
  std::string wide = "[";
  for (int i = 0; i < 300000; ++i) wide += "1,";
  CHECK_THROWS_WITH(model_config_from_hf_config(wide + "1]", "/hf/config.json"),
                    Contains("/hf/config.json: more than 262144 JSON values"));
}
