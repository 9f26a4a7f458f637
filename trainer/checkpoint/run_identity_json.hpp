#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "models/model_config.hpp"
#include "wireup/error.hpp"

// The model object of metadata.json and of a memory snapshot's identity line
// (run_identity.hpp), for the two serializers of wireup_checkpoint_format.
namespace wireup::train {

// An integer field of type T: InputError for a fraction, a string or a value
// outside T (a number like 4.4e89 would otherwise convert with undefined
// behaviour).
template <typename T>
T json_integer(const nlohmann::json& v, const char* what) {
  if (v.is_number_unsigned() && std::in_range<T>(v.get<std::uint64_t>()))
    return static_cast<T>(v.get<std::uint64_t>());
  if (v.is_number_integer() && std::in_range<T>(v.get<std::int64_t>()))
    return static_cast<T>(v.get<std::int64_t>());
  throw InputError(std::string(what) + " is " + v.dump() + ", not an integer in range");
}

// Every ModelConfig field; "head_dim" the effective head width.
nlohmann::json model_json(const ModelConfig& c);
// Its inverse; checkpoints written before a field existed read as the
// defaults (family llama, untied, unscaled, token ids unknown).
ModelConfig model_from_json(const nlohmann::json& mo);

}  // namespace wireup::train
