// libFuzzer target: a Hugging Face config.json as eval reads it (its shapes,
// bounded before anything is built) and as the import checks it against the
// model flags. Only returns or throws InputError.
#include "eval/model_size.hpp"
#include "fuzz_common.hpp"
#include "hf/hf_config.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"

using namespace wireup;
namespace tr = wireup::train;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::as_string(data, size);
  fuzz::expect_clean([&] {
    tr::ModelConfig m = tr::model_config_from_hf_config(in, "config.json");
    tr::check_model_size(m, "config.json", tr::kHfConfigFields, 1, 1ull << 30);
    tr::check_model_config(m);
  });
  fuzz::expect_clean([&] { tr::hf::check_config(in, "config.json", tr::preset("tiny")); });
  return 0;
}
