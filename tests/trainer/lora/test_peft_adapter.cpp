// PEFT's adapter directory: adapter_config.json both ways and its refusals, tensor names and
// shapes of adapter_model.safetensors (no Torch).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "lora/peft_adapter.hpp"
#include "wireup/error.hpp"

using namespace wireup::train::lora;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kData = WIREUP_LORA_TEST_DATA;

LoraConfig config(std::int64_t rank, double alpha, std::vector<Target> targets) {
  LoraConfig c;
  c.rank = rank;
  c.alpha = alpha;
  c.dropout = 0.1;
  c.targets = std::move(targets);
  return c;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The written config for rank 8, alpha 16, q and v, with `key` set to `v`.
std::string with(const std::string& key, const json& v) {
  json j = json::parse(adapter_config_json(config(8, 16, {Target::Q, Target::V}), "base"));
  j[key] = v;
  return j.dump();
}

std::string without(const std::string& key) {
  json j = json::parse(adapter_config_json(config(8, 16, {Target::Q, Target::V}), "base"));
  j.erase(key);
  return j.dump();
}

// A temporary directory, removed on destruction.
struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("wireup_lora_test." + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// Llama 3.2 1B's block: hidden 2048, 32 heads and 8 KV heads of 64, intermediate 8192.
const BaseShape kBase{2, 2048, 2048, 512, 8192};

std::vector<TensorShape> tensors_of(const LoraConfig& c, const BaseShape& b) {
  std::vector<TensorShape> out;
  for (std::int64_t layer = 0; layer < b.layers; ++layer)
    for (Target t : c.targets) {
      const auto d = projection_dims(t, b.hidden, b.q_dim, b.kv_dim, b.intermediate);
      out.push_back({peft_tensor_name(layer, t, Matrix::B), {d.out, c.rank}});
      out.push_back({peft_tensor_name(layer, t, Matrix::A), {c.rank, d.in}});
    }
  return out;
}

}  // namespace

TEST_CASE("adapter_config.json as written is PEFT's, and reads back the same config") {
  const LoraConfig c = config(16, 32, {Target::Q, Target::K, Target::V, Target::O, Target::Down});
  const std::string text = adapter_config_json(c, "meta-llama/Llama-3.2-1B");
  const json j = json::parse(text);
  CHECK(j["peft_type"] == "LORA");
  CHECK(j["task_type"] == "CAUSAL_LM");
  CHECK(j["r"] == 16);
  CHECK(j["lora_alpha"].is_number_integer());
  CHECK(j["lora_alpha"] == 32);
  CHECK(j["lora_dropout"] == 0.1);
  CHECK(j["target_modules"] == json({"q_proj", "k_proj", "v_proj", "o_proj", "down_proj"}));
  CHECK(j["bias"] == "none");
  CHECK(j["use_rslora"] == false);
  CHECK(j["use_dora"] == false);
  CHECK(j["fan_in_fan_out"] == false);
  CHECK(j["inference_mode"] == true);
  CHECK(j["init_lora_weights"] == true);
  CHECK(j["modules_to_save"].is_null());
  CHECK(j["layers_to_transform"].is_null());
  CHECK(j["rank_pattern"] == json::object());
  CHECK(j["alpha_pattern"] == json::object());
  CHECK(j["base_model_name_or_path"] == "meta-llama/Llama-3.2-1B");

  const PeftAdapterConfig back = parse_adapter_config(text, "adapter_config.json");
  CHECK(back.lora.rank == c.rank);
  CHECK(back.lora.alpha == c.alpha);
  CHECK(back.lora.dropout == c.dropout);
  CHECK(back.lora.targets == c.targets);
  CHECK(back.base_model_name_or_path == "meta-llama/Llama-3.2-1B");

  // A fractional alpha stays a float, and reads back exactly.
  const LoraConfig f = config(4, 5.5, {Target::Up});
  CHECK(json::parse(adapter_config_json(f, ""))["lora_alpha"] == 5.5);
  CHECK(parse_adapter_config(adapter_config_json(f, ""), "x").lora.alpha == 5.5);
  CHECK(parse_adapter_config(adapter_config_json(f, ""), "x").lora.scale() == 5.5 / 4);
}

TEST_CASE("a PEFT 0.13+ adapter_config.json: its newer keys ignored, target_modules sorted") {
  const PeftAdapterConfig p = read_adapter_config(kData + "/peft_adapter");
  CHECK(p.lora.rank == 16);
  CHECK(p.lora.alpha == 32);
  CHECK(p.lora.dropout == 0.05);
  CHECK(p.lora.scale() == 2.0);
  CHECK(p.lora.targets == std::vector<Target>(kAllTargets.begin(), kAllTargets.end()));
  CHECK(p.base_model_name_or_path == "meta-llama/Llama-3.2-1B-Instruct");
  CHECK(json::parse(read(kData + "/peft_adapter/adapter_config.json")).contains("megatron_config"));
}

TEST_CASE("missing optional keys take PEFT's defaults") {
  const std::string minimal =
      R"({"peft_type": "LORA", "r": 4, "lora_alpha": 8, "target_modules": ["v_proj", "q_proj"]})";
  const PeftAdapterConfig p = parse_adapter_config(minimal, "a.json");
  CHECK(p.lora.rank == 4);
  CHECK(p.lora.dropout == 0);
  CHECK(p.lora.targets == std::vector<Target>{Target::Q, Target::V});
  CHECK(p.base_model_name_or_path.empty());
  // null is PEFT's "not set", as is a repeated module.
  CHECK_NOTHROW(parse_adapter_config(with("task_type", nullptr), "a.json"));
  CHECK(parse_adapter_config(with("target_modules", {"q_proj", "q_proj"}), "a.json").lora.targets ==
        std::vector<Target>{Target::Q});
  CHECK_NOTHROW(parse_adapter_config(with("modules_to_save", json::array()), "a.json"));
  CHECK_NOTHROW(parse_adapter_config(with("exclude_modules", json::array()), "a.json"));
}

TEST_CASE("what the trainer does not support is refused, naming the key and the file") {
  const auto refused = [](const std::string& text, const std::string& what) {
    CHECK_THROWS_AS(parse_adapter_config(text, "/a/adapter_config.json"), wireup::InputError);
    CHECK_THROWS_WITH(parse_adapter_config(text, "/a/adapter_config.json"),
                      Contains("/a/adapter_config.json: ") && Contains(what));
  };
  refused(with("peft_type", "LOHA"), "peft_type=\"LOHA\": expected \"LORA\"");
  refused(without("peft_type"), "peft_type missing");
  refused(with("task_type", "SEQ_CLS"), "task_type=\"SEQ_CLS\": expected \"CAUSAL_LM\"");
  refused(with("use_dora", true), "use_dora=true: expected false");
  refused(with("use_rslora", true), "use_rslora=true: expected false");
  refused(with("use_dora", "no"), "use_dora=\"no\": expected false");
  refused(with("fan_in_fan_out", true), "fan_in_fan_out=true");
  refused(with("lora_bias", true), "lora_bias=true");
  refused(with("bias", "lora_only"), "bias=\"lora_only\": expected \"none\"");
  refused(with("bias", "all"), "bias=\"all\"");
  refused(with("modules_to_save", {"lm_head"}), "modules_to_save=[\"lm_head\"]");
  refused(with("exclude_modules", {"q_proj"}), "exclude_modules=");
  refused(with("layers_to_transform", {0, 1}), "layers_to_transform=[0,1]: expected null");
  refused(with("layers_to_transform", 0), "layers_to_transform=0");
  refused(with("layers_pattern", "layers"), "layers_pattern=\"layers\"");
  refused(with("layer_replication", {{0, 4}}), "layer_replication=");
  refused(with("rank_pattern", {{"q_proj", 4}}), "rank_pattern={\"q_proj\":4}");
  refused(with("alpha_pattern", {{"q_proj", 4}}), "alpha_pattern=");
}

TEST_CASE("r, lora_alpha, lora_dropout and target_modules out of range are refused by name") {
  const auto refused = [](const std::string& text, const std::string& what) {
    CHECK_THROWS_WITH(parse_adapter_config(text, "c.json"), Contains("c.json: " + what));
  };
  refused(with("r", 0), "r=0: expected an integer 1 to 65536");
  refused(with("r", -8), "r=-8");
  refused(with("r", 8.5), "r=8.5");
  refused(with("r", 65537), "r=65537");
  refused(with("r", "8"), "r=\"8\"");
  refused(without("r"), "r missing");
  refused(without("lora_alpha"), "lora_alpha missing");
  refused(with("lora_alpha", 0), "lora_alpha=0: expected a number > 0");
  refused(with("lora_alpha", -16), "lora_alpha=-16");
  refused(with("lora_alpha", "16"), "lora_alpha=\"16\"");
  refused(with("lora_dropout", 1.0), "lora_dropout=1.0: expected a number 0 <= p < 1");
  refused(with("lora_dropout", -0.5), "lora_dropout=-0.5");
  refused(without("target_modules"), "target_modules missing");
  refused(with("target_modules", ".*\\.(q|v)_proj"),
          "target_modules=\".*\\\\.(q|v)_proj\": a string is a regular expression");
  refused(with("target_modules", "all-linear"), "target_modules=\"all-linear\": a string");
  refused(with("target_modules", json::array()), "target_modules=[]");
  refused(with("target_modules", {"q_proj", "lm_head"}),
          "target_modules names \"lm_head\": not a projection the trainer adapts");
  refused(with("target_modules", {"embed_tokens"}), "target_modules names \"embed_tokens\"");
  refused(with("target_modules", {"q"}), "target_modules names \"q\"");
  refused(with("base_model_name_or_path", 3), "base_model_name_or_path=3");
}

TEST_CASE("text that is not a JSON object, or too deep, is refused naming the file") {
  CHECK_THROWS_WITH(parse_adapter_config("{", "x/adapter_config.json"),
                    Contains("x/adapter_config.json: not JSON"));
  CHECK_THROWS_WITH(parse_adapter_config("[1]", "x.json"), Contains("x.json: not a JSON object"));
  CHECK_THROWS_WITH(parse_adapter_config(std::string(1000, '['), "x.json"),
                    Contains("x.json: JSON nested deeper than 16"));
}

TEST_CASE("read_adapter_config names a missing or unreadable file") {
  TempDir dir;
  const std::string file = (dir.path / "adapter_config.json").string();
  CHECK_THROWS_AS(read_adapter_config(dir.path.string()), wireup::InputError);
  CHECK_THROWS_WITH(read_adapter_config(dir.path.string()), Contains(file));
  std::filesystem::create_directory(file);
  CHECK_THROWS_WITH(read_adapter_config(dir.path.string()),
                    Contains(file) && Contains("not a regular file"));
  std::filesystem::remove(file);
  std::ofstream(file) << adapter_config_json(config(2, 4, {Target::K}), "b");
  CHECK(read_adapter_config(dir.path.string()).lora.targets == std::vector<Target>{Target::K});
}

TEST_CASE("tensor names are PEFT's and parse back") {
  CHECK(peft_tensor_name(0, Target::Q, Matrix::A) ==
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
  CHECK(peft_tensor_name(31, Target::Down, Matrix::B) ==
        "base_model.model.model.layers.31.mlp.down_proj.lora_B.weight");
  for (std::int64_t layer : {0, 7, 10, 127})
    for (Target t : kAllTargets)
      for (Matrix m : {Matrix::A, Matrix::B}) {
        const auto id = parse_peft_tensor_name(peft_tensor_name(layer, t, m));
        REQUIRE(id);
        CHECK(*id == PeftTensorId{layer, t, m});
      }
}

TEST_CASE("names not of PEFT's form parse to nothing") {
  for (const char* name :
       {"base_model.model.model.layers.0.mlp.q_proj.lora_A.weight",  // wrong parent
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight",
        "base_model.model.model.layers.0.self_attn.q_proj.lora_C.weight",
        "base_model.model.model.layers.0.self_attn.q_proj.weight",
        "base_model.model.model.layers.-1.self_attn.q_proj.lora_A.weight",
        "base_model.model.model.layers.+1.self_attn.q_proj.lora_A.weight",
        "base_model.model.model.layers.01.self_attn.q_proj.lora_A.weight",
        "base_model.model.model.layers.99999999999.self_attn.q_proj.lora_A.weight",
        "base_model.model.model.layers..self_attn.q_proj.lora_A.weight",
        "base_model.model.layers.0.self_attn.q_proj.lora_A.weight",
        "model.layers.0.self_attn.q_proj.lora_A.weight", "base_model.model.lm_head.lora_A.weight",
        "base_model.model.model.embed_tokens.lora_embedding_A",
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weightx", ""})
    CHECK_FALSE(parse_peft_tensor_name(name));
}

TEST_CASE("projection widths follow the Llama block") {
  // Llama 3 8B: hidden 4096, 32 heads and 8 KV heads of 128, intermediate 14336.
  const auto dims = [](Target t) { return projection_dims(t, 4096, 4096, 1024, 14336); };
  CHECK(dims(Target::Q).in == 4096);
  CHECK(dims(Target::Q).out == 4096);
  CHECK((dims(Target::K).in == 4096 && dims(Target::K).out == 1024));
  CHECK((dims(Target::V).in == 4096 && dims(Target::V).out == 1024));
  // Qwen3 0.6B: hidden 1024, 16 heads of 128: q_dim 2048 != hidden.
  CHECK((projection_dims(Target::O, 1024, 2048, 1024, 3072).in == 2048));
  CHECK((projection_dims(Target::O, 1024, 2048, 1024, 3072).out == 1024));
  CHECK((dims(Target::Gate).in == 4096 && dims(Target::Gate).out == 14336));
  CHECK((dims(Target::Up).in == 4096 && dims(Target::Up).out == 14336));
  CHECK((dims(Target::Down).in == 14336 && dims(Target::Down).out == 4096));
}

TEST_CASE("check_adapter_tensors returns the expected set, in any file order") {
  const LoraConfig c = config(8, 16, {Target::Q, Target::V, Target::Down});
  const auto expected = check_adapter_tensors(tensors_of(c, kBase), c, kBase, "a.safetensors");
  REQUIRE(expected.size() == 2 * 3 * 2);
  CHECK(expected[0].name == "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
  CHECK(expected[0].shape == std::vector<std::int64_t>{8, 2048});
  CHECK(expected[3].name == "base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight");
  CHECK(expected[3].shape == std::vector<std::int64_t>{512, 8});
  CHECK(expected[5].id == PeftTensorId{0, Target::Down, Matrix::B});
  CHECK(expected[5].shape == std::vector<std::int64_t>{2048, 8});
  CHECK(expected[11].id == PeftTensorId{1, Target::Down, Matrix::B});
}

TEST_CASE("check_adapter_tensors names the first offending tensor") {
  const LoraConfig c = config(8, 16, {Target::Q, Target::V});
  const auto refused = [&](std::vector<TensorShape> t, const std::string& what) {
    CHECK_THROWS_AS(check_adapter_tensors(t, c, kBase, "d/adapter_model.safetensors"),
                    wireup::InputError);
    CHECK_THROWS_WITH(check_adapter_tensors(t, c, kBase, "d/adapter_model.safetensors"),
                      Contains("d/adapter_model.safetensors: tensor '") && Contains(what));
  };
  auto t = tensors_of(c, kBase);
  t.push_back({"base_model.model.lm_head.lora_A.weight", {8, 2048}});
  refused(t, "base_model.model.lm_head.lora_A.weight': not a LoRA tensor of PEFT's form");

  t = tensors_of(c, kBase);
  t.push_back({peft_tensor_name(2, Target::Q, Matrix::A), {8, 2048}});
  refused(t, "layers.2.self_attn.q_proj.lora_A.weight': layer 2, but the base model has 2 layers");

  t = tensors_of(c, kBase);
  t.push_back({peft_tensor_name(0, Target::K, Matrix::A), {8, 2048}});
  refused(t, "k_proj.lora_A.weight': k_proj is not among the adapter's target_modules");

  t = tensors_of(c, kBase);
  t.push_back(t.front());
  refused(t, "' given twice");

  t = tensors_of(c, kBase);
  t[1].shape = {8, 4096};  // layer 0 q_proj A
  refused(t, "layers.0.self_attn.q_proj.lora_A.weight': shape [8, 4096], expected [8, 2048]");
  t = tensors_of(c, kBase);
  t[2].shape = {2048, 8};  // layer 0 v_proj B: [kv_dim, r]
  refused(t, "v_proj.lora_B.weight': shape [2048, 8], expected [512, 8] (lora_B: [out, r])");
  t = tensors_of(c, kBase);
  t[1].shape = {16, 2048};  // another rank than r
  refused(t, "expected [8, 2048] (lora_A: [r, in]) for r=8");
  t = tensors_of(c, kBase);
  t[1].shape = {8, 2048, 1};
  refused(t, "shape [8, 2048, 1]");

  t = tensors_of(c, kBase);
  t.erase(t.begin() + 4);  // layer 1 q_proj B
  refused(t, "layers.1.self_attn.q_proj.lora_B.weight' missing");
  refused({}, "layers.0.self_attn.q_proj.lora_A.weight' missing");
}
