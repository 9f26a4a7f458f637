#include "eval/model_size.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "hf/hf_config.hpp"
#include "models/family_registry.hpp"
#include "wireup/error.hpp"

namespace wireup::train {

const ModelFieldNames kHfConfigFields{"hidden_size",         "intermediate_size",
                                      "num_hidden_layers",   "num_attention_heads",
                                      "num_key_value_heads", "vocab_size"};
const ModelFieldNames kCheckpointFields{"model.hidden", "model.intermediate", "model.layers",
                                        "model.heads",  "model.kv_heads",     "model.vocab"};

namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

std::string gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

}  // namespace

void check_model_size(const ModelConfig& m, const std::string& name, const ModelFieldNames& f,
                      int world, std::uint64_t memory_bytes) {
  auto bound = [&](const char* field, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    if (v < lo || v > hi)
      throw InputError(name + ": " + field + "=" + std::to_string(v) + ": expected " +
                       std::to_string(lo) + " to " + std::to_string(hi));
  };
  bound(f.hidden, m.hidden, 2, kMaxHidden);
  bound(f.intermediate, m.intermediate, 1, kMaxIntermediate);
  bound(f.layers, m.layers, 1, kMaxLayers);
  bound(f.heads, m.heads, 1, m.hidden);
  bound(f.kv_heads, m.kv_heads, 1, m.heads);
  bound(f.vocab, m.vocab, 2, kMaxVocab);
  const std::uint64_t params = u(total_params(m));
  const std::uint64_t need = params / u(world < 1 ? 1 : world) * 4;  // fp32, no gradient
  if (need <= memory_bytes) return;
  const bool blocks = u(m.layers) * u(block_params(m)) >= u(m.vocab) * u(m.hidden);
  const std::string fields = blocks ? std::string(f.layers) + "=" + std::to_string(m.layers) +
                                          ", " + f.hidden + "=" + std::to_string(m.hidden) + ", " +
                                          f.intermediate + "=" + std::to_string(m.intermediate)
                                    : std::string(f.vocab) + "=" + std::to_string(m.vocab) + ", " +
                                          f.hidden + "=" + std::to_string(m.hidden);
  throw InputError(name + ": " + fields + " make a model of " + std::to_string(params) +
                   " parameters: " + gib(need) + " per rank at world " + std::to_string(world) +
                   " (fp32 parameter shard), more than the " + gib(memory_bytes) +
                   " of memory this process may use");
}

ModelConfig model_config_from_hf_config(const std::string& text, const std::string& name) {
  hf::check_config_text(text, name);
  nlohmann::json c;
  try {
    c = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw InputError(name + ": not JSON (" + e.what() + ")");
  }
  if (!c.is_object()) throw InputError(name + ": not a JSON object");
  auto integer = [&](const char* key) -> std::int64_t {
    if (!c.contains(key) || !c[key].is_number_integer())
      throw InputError(name + ": " + key + " is missing or not an integer");
    return c[key].get<std::int64_t>();
  };
  auto real = [&](const char* key, double fallback) {
    if (!c.contains(key) || c[key].is_null()) return fallback;
    if (!c[key].is_number()) throw InputError(name + ": " + key + " is not a number");
    return c[key].get<double>();
  };
  ModelConfig m;
  m.hidden = integer("hidden_size");
  m.intermediate = integer("intermediate_size");
  m.layers = integer("num_hidden_layers");
  m.heads = integer("num_attention_heads");
  m.kv_heads = c.contains("num_key_value_heads") && !c["num_key_value_heads"].is_null()
                   ? integer("num_key_value_heads")
                   : m.heads;
  m.vocab = integer("vocab_size");
  m.rope_theta = real("rope_theta", 10000.0);
  m.norm_eps = real("rms_norm_eps", 1e-6);
  hf::read_model_extras(text, m);  // rope scaling, tied embeddings, bos/eos
  return m;
}

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  std::uint64_t bytes = pages > 0 && page > 0 ? u(pages) * u(page) : UINT64_MAX;
  // An address-space cap (ulimit -v) lower than the memory is the bound.
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    bytes = std::min<std::uint64_t>(bytes, as.rlim_cur);
  return bytes;
}

}  // namespace wireup::train
