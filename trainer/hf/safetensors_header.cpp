#include "hf/safetensors_header.hpp"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

using nlohmann::json;

namespace wireup::train::safetensors {
namespace {

[[noreturn]] void refuse(const std::string& name, const std::string& what) {
  throw InputError(name + ": " + what);
}

// Parses `text` as one JSON value, refusing nesting deeper than `max_depth`
// and an object that names a key twice (nlohmann keeps the last silently).
// `top_member(key, value)` sees each member of the top-level object once it
// is complete; returning false drops it from the tree, so the caller can hold
// one member at a time.
json parse_strict(std::string_view text, const std::string& name, int max_depth,
                  const std::function<bool(const std::string&, json&)>& top_member) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  std::vector<std::string> last_key;
  bool top_object = false;
  auto cb = [&](int depth, json::parse_event_t ev, json& parsed) -> bool {
    switch (ev) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= max_depth)
          refuse(name, "JSON nested deeper than " + std::to_string(max_depth) + " levels");
        if (depth == 0) top_object = ev == json::parse_event_t::object_start;
        if (ev == json::parse_event_t::object_start) keys.emplace_back(), last_key.emplace_back();
        break;
      case json::parse_event_t::key: {
        std::string k = parsed.get<std::string>();
        if (!keys.back().insert(k).second) refuse(name, "'" + k + "' is named twice");
        last_key.back() = std::move(k);
        break;
      }
      case json::parse_event_t::object_end: {
        keys.pop_back();
        last_key.pop_back();
        break;
      }
      case json::parse_event_t::array_end:
      case json::parse_event_t::value:
        break;
    }
    // A member of the top-level object is complete.
    const bool member_done = ev == json::parse_event_t::object_end ||
                             ev == json::parse_event_t::array_end ||
                             ev == json::parse_event_t::value;
    if (member_done && depth == 1 && top_object && top_member)
      return top_member(last_key.front(), parsed);
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), cb);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    refuse(name, std::string("not JSON (") + e.what() + ")");
  }
}

// A multiplication that refuses to pass 2^64.
std::uint64_t times(std::uint64_t a, std::uint64_t b, const std::string& what) {
  if (b != 0 && a > UINT64_MAX / b) throw InputError(what + " passes 2^64");
  return a * b;
}

std::uint64_t unsigned_of(const json& v, const std::string& what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw InputError(what + " " + v.dump() + " is not a non-negative integer");
  return v.get<std::uint64_t>();
}

TensorEntry tensor_of(const std::string& key, const json& v) {
  TensorEntry e;
  e.name = key;
  if (!v.is_object()) throw InputError("is " + v.dump() + ", not a tensor object");
  for (const char* k : {"dtype", "shape", "data_offsets"})
    if (!v.contains(k)) throw InputError(std::string("has no ") + k);
  if (!v["dtype"].is_string()) throw InputError("dtype is not a string");
  e.dtype = v["dtype"].get<std::string>();
  const std::size_t es = dtype_size(e.dtype);
  if (es == 0) throw InputError("unknown dtype " + e.dtype);
  const json& shape = v["shape"];
  if (!shape.is_array() || shape.size() > kMaxDims)
    throw InputError("shape is not an array of at most " + std::to_string(kMaxDims) + " sizes");
  std::uint64_t numel = 1;
  for (const auto& d : shape) {
    const std::uint64_t n = unsigned_of(d, "shape size");
    if (n > static_cast<std::uint64_t>(INT64_MAX)) throw InputError("shape size passes 2^63");
    numel = times(numel, n, "element count");
    e.shape.push_back(static_cast<std::int64_t>(n));
  }
  const std::uint64_t bytes = times(numel, es, "byte count");
  const json& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2) throw InputError("data_offsets is not [begin, end]");
  e.begin = unsigned_of(off[0], "data_offsets begin");
  e.end = unsigned_of(off[1], "data_offsets end");
  if (e.end < e.begin || e.end - e.begin != bytes)
    throw InputError("data [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ") for " +
                     std::to_string(numel) + " " + e.dtype + " elements (" + std::to_string(bytes) +
                     " bytes)");
  return e;
}

std::map<std::string, std::string> metadata_of(const json& v) {
  std::map<std::string, std::string> out;
  if (v.is_null()) return out;
  if (!v.is_object()) throw InputError("__metadata__ is not an object");
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it->is_string())
      throw InputError("__metadata__ value of " + it.key() + " is not a string (" +
                       std::string(it->type_name()) + ")");
    out[it.key()] = it->get<std::string>();
  }
  return out;
}

// Sorted by begin, the tensors' data must tile [0, data_size) exactly.
void check_coverage(std::vector<TensorEntry>& ts, std::uint64_t data_size,
                    const std::string& name) {
  std::sort(ts.begin(), ts.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t at = 0;
  for (const auto& t : ts) {
    if (t.begin != at)
      refuse(name, "tensor " + t.name + ": data starts at byte " + std::to_string(t.begin) +
                       ", expected " + std::to_string(at) +
                       (t.begin < at ? " (overlaps the tensor before)" : " (a gap before it)"));
    if (t.end > data_size)
      refuse(name, "tensor " + t.name + ": data [" + std::to_string(t.begin) + ", " +
                       std::to_string(t.end) + ") lies outside the file's " +
                       std::to_string(data_size) + " data bytes (truncated?)");
    at = t.end;
  }
  if (at != data_size)
    refuse(name, "tensor data ends at byte " + std::to_string(at) + " of the data section's " +
                     std::to_string(data_size) + " (bytes after the last tensor)");
}

}  // namespace

std::uint64_t TensorEntry::numel() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

std::size_t dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

void check_header_length(std::uint64_t n, std::uint64_t file_size, const std::string& name) {
  if (file_size < 8) refuse(name, "not a safetensors file (shorter than its 8-byte header length)");
  if (n < 2 || n > kMaxHeaderBytes || n > file_size - 8)
    refuse(name, "not a safetensors file (header length " + std::to_string(n) + " for a file of " +
                     std::to_string(file_size) + " bytes; at most " +
                     std::to_string(kMaxHeaderBytes) + " expected)");
}

Header parse_header(std::string_view text, std::uint64_t data_size, const std::string& name) {
  Header h;
  auto member = [&](const std::string& key, json& v) {
    try {
      if (key == "__metadata__") {
        h.metadata = metadata_of(v);
      } else {
        h.tensors.push_back(tensor_of(key, v));
      }
    } catch (const InputError& e) {
      refuse(name, (key == "__metadata__" ? std::string() : "tensor " + key + ": ") + e.what());
    }
    return false;  // converted: the tree need not keep it
  };
  const json top = parse_strict(text, name, kMaxDepth, member);
  if (!top.is_object()) refuse(name, "safetensors header is not a JSON object");
  check_coverage(h.tensors, data_size, name);
  return h;
}

std::map<std::string, std::string> parse_index(std::string_view text, const std::string& name) {
  io::check_json_shape(text, name, 8, kMaxIndexValues);
  const json j = parse_strict(text, name, 8, nullptr);
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    refuse(name, "no weight_map (a JSON object of tensor -> file expected)");
  std::map<std::string, std::string> out;
  for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
    const std::string file = it->is_string() ? it->get<std::string>() : "";
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos)
      refuse(name, "weight_map maps " + it.key() + " to " + it->dump() +
                       " (the name of a file in the same directory expected)");
    out[it.key()] = file;
  }
  return out;
}

}  // namespace wireup::train::safetensors
