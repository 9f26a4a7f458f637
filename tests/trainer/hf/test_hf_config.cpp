// config.json of export and import, the size flag and the shard split (no Torch).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "hf/hf_config.hpp"
#include "models/family_registry.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;
using nlohmann::json;

TEST_CASE("config.json of a Llama 3.2 model: rope_scaling dict, tied, token ids") {
  const auto j = json::parse(hf::config_json(preset("llama3.2-1b"), "bfloat16"));
  CHECK(j["architectures"] == json{"LlamaForCausalLM"});
  CHECK(j["tie_word_embeddings"] == true);
  CHECK(j["rope_theta"] == 500000.0);
  CHECK(j["max_position_embeddings"] == 131072);
  CHECK(j["rope_scaling"] == json{{"rope_type", "llama3"},
                                  {"factor", 32.0},
                                  {"low_freq_factor", 1.0},
                                  {"high_freq_factor", 4.0},
                                  {"original_max_position_embeddings", 8192}});
  CHECK(j["bos_token_id"] == 128000);
  CHECK(j["eos_token_id"] == 128001);
  CHECK(j["head_dim"] == 64);
  CHECK(j["torch_dtype"] == "bfloat16");
  const auto tiny = json::parse(hf::config_json(preset("tiny"), "float32"));
  CHECK(tiny["rope_scaling"].is_null());
  CHECK(tiny["bos_token_id"].is_null());
  CHECK(tiny["tie_word_embeddings"] == false);
}

TEST_CASE(
    "an exported config.json checks against its own model; tied files go into untied models") {
  for (const char* name : {"llama3.1-8b", "llama3.2-3b", "llama2-7b", "tiny"}) {
    const ModelConfig m = preset(name);
    CHECK(hf::check_config(hf::config_json(m, "float32"), "c.json", m).tied == m.tied);
  }
  ModelConfig untied = preset("llama3.2-1b");
  untied.tied = false;
  CHECK(hf::check_config(hf::config_json(preset("llama3.2-1b"), "f"), "c.json", untied).tied);
  CHECK_THROWS_WITH(hf::check_config(hf::config_json(untied, "f"), "c.json", preset("llama3.2-1b")),
                    Catch::Contains("tie_word_embeddings=false but the model ties them"));
  // rope_type "default" (and the older key "type") is no scaling.
  auto j = json::parse(hf::config_json(preset("tiny"), "float32"));
  j["rope_scaling"] = {{"type", "default"}};
  CHECK_NOTHROW(hf::check_config(j.dump(), "c.json", preset("tiny")));
}

TEST_CASE("one error lists every field wireup cannot represent, and every mismatch") {
  const ModelConfig m = preset("llama3.1-8b");
  auto j = json::parse(hf::config_json(m, "bfloat16"));
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  j["attention_bias"] = true;
  j["mlp_bias"] = true;
  j["head_dim"] = 256;
  j["sliding_window"] = 4096;
  j["num_hidden_layers"] = 31;
  std::string msg;
  try {
    hf::check_config(j.dump(), "DIR/config.json", m);
  } catch (const wireup::InputError& e) {
    msg = e.what();
  }
  CHECK(msg.rfind("DIR/config.json: fields wireup's Llama cannot represent:", 0) == 0);
  for (const char* part :
       {"rope_scaling={\"factor\":4.0,\"rope_type\":\"yarn\"}", "attention_bias=true",
        "mlp_bias=true", "head_dim=256", "sliding_window=4096",
        "does not match the model flags:", "num_hidden_layers=31 but --num_layers 32"})
    CHECK_THAT(msg, Catch::Contains(part));
  // The llama3 values are compared with the flags.
  j = json::parse(hf::config_json(m, "bfloat16"));
  j["rope_scaling"]["factor"] = 32.0;
  CHECK_THROWS_WITH(hf::check_config(j.dump(), "c.json", m),
                    Catch::Contains("but --rope_scaling llama3:8,1,4,8192"));
  j["rope_scaling"].erase("low_freq_factor");
  CHECK_THROWS_WITH(hf::check_config(j.dump(), "c.json", m),
                    Catch::Contains("llama3 needs a number low_freq_factor"));
  CHECK_THROWS_WITH(hf::check_config("{", "c.json", m), Catch::Contains("c.json: not JSON"));
}

TEST_CASE("shard sizes parse; the split follows transformers' rule") {
  CHECK(hf::parse_byte_size("5GB", "--max_shard_size") == 5000000000ull);
  CHECK(hf::parse_byte_size("64KiB", "--max_shard_size") == 65536);
  CHECK(hf::parse_byte_size("1000", "--max_shard_size") == 1000);
  for (const char* bad : {"", "0", "5 GB", "-1", "1e9", "5XB", "99999999999999999GB"})
    CHECK_THROWS_WITH(hf::parse_byte_size(bad, "--max_shard_size"),
                      Catch::Contains("--max_shard_size"));
  CHECK(hf::plan_shards({40, 40, 40, 100, 10}, 100) == std::vector<std::size_t>{0, 0, 1, 2, 3});
  CHECK(hf::plan_shards({40, 40}, 1000) == std::vector<std::size_t>{0, 0});
  CHECK(hf::shard_file_name(1, 3) == "model-00002-of-00003.safetensors");
  const auto idx = json::parse(hf::index_json({"a", "b"}, {"f1", "f2"}, 80));
  CHECK(idx["metadata"]["total_size"] == 80);
  CHECK(idx["weight_map"]["b"] == "f2");
}

TEST_CASE("config.json values of the wrong type are named, not a raw type_error") {
  // Found by fuzz_hf_config: "hidden_act": 1072 ended in nlohmann's type_error.
  const ModelConfig m = preset("tiny");
  std::string text = hf::config_json(m, "float32");
  text.replace(text.find("\"silu\""), 6, "1072");
  CHECK_THROWS_WITH(hf::check_config(text, "c.json", m), Catch::Contains("hidden_act=1072"));
  std::string huge = hf::config_json(preset("llama3.1-8b"), "float32");
  huge.replace(huge.find("8192"), 4, "1e300");
  CHECK_THROWS_WITH(hf::check_config(huge, "c.json", preset("llama3.1-8b")),
                    Catch::Contains("not a positive integer below 10^15"));
}
