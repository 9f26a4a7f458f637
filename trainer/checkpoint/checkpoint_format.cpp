#include "checkpoint/checkpoint_format.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "run_identity_json.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/text.hpp"

namespace wireup::train {

using nlohmann::json;

namespace {

json chunk_json(const ChunkRef& c) {
  return {{"unit", c.unit},
          {"kind", c.kind},
          {"global_offset", c.global_offset},
          {"numel", c.numel},
          {"file_offset", c.file_offset},
          {"sha256", c.sha256}};
}

json file_json(const RankFile& f) {
  json chunks = json::array();
  for (const auto& c : f.chunks) chunks.push_back(chunk_json(c));
  return {{"file", f.file}, {"bytes", f.bytes}, {"chunks", chunks}};
}

template <typename T>
T integer(const json& v, const char* what) {
  return json_integer<T>(v, what);
}

std::vector<std::int64_t> shape_of(const json& v) {
  if (!v.is_array()) throw InputError("shape is not an array");
  std::vector<std::int64_t> out;
  for (const auto& d : v) out.push_back(integer<std::int64_t>(d, "shape size"));
  return out;
}

RankFile file_from(const json& j) {
  RankFile f;
  f.file = j.at("file").get<std::string>();
  f.bytes = integer<std::uint64_t>(j.at("bytes"), "bytes");
  for (const auto& c : j.at("chunks")) {
    ChunkRef r;
    r.unit = integer<int>(c.at("unit"), "unit");
    r.kind = c.at("kind").get<std::string>();
    r.global_offset = integer<std::int64_t>(c.at("global_offset"), "global_offset");
    r.numel = integer<std::int64_t>(c.at("numel"), "numel");
    r.file_offset = integer<std::uint64_t>(c.at("file_offset"), "file_offset");
    r.sha256 = c.at("sha256").get<std::string>();
    if (r.numel < 0 || r.global_offset < 0 || r.global_offset > INT64_MAX - r.numel)
      throw InputError("negative chunk range, or one past 2^63");
    // 4 * numel must neither wrap nor pass the file's end.
    if (r.file_offset > f.bytes ||
        static_cast<std::uint64_t>(r.numel) > (f.bytes - r.file_offset) / 4)
      throw InputError(f.file + ": chunk of " + std::to_string(r.numel) + " elements at byte " +
                       std::to_string(r.file_offset) + " lies past the file's " +
                       std::to_string(f.bytes) + " bytes");
    f.chunks.push_back(r);
  }
  if (f.file.empty() || f.file.find('/') != std::string::npos || f.file[0] == '.')
    throw InputError("bad shard file name '" + f.file + "'");
  return f;
}

// The world sizes, the units' sizes against their shapes and the rank files.
void check_sizes(const CheckpointMeta& m) {
  if (m.shard_group_size < 1 || m.world_size < m.shard_group_size || m.world_size > kMaxWorldSize ||
      m.world_size % m.shard_group_size != 0)
    throw InputError("world_size " + std::to_string(m.world_size) + " and shard_group_size " +
                     std::to_string(m.shard_group_size) +
                     ": expected 1 <= shard_group_size <= world_size <= " +
                     std::to_string(kMaxWorldSize) + ", world_size a multiple of shard_group_size");
  std::uint64_t file_elements = 0;
  for (const auto& f : m.files)
    file_elements = std::min(file_elements + f.bytes / 4, UINT64_MAX / 2);
  for (const auto& u : m.units) {
    std::uint64_t sum = 0;
    for (const auto& shape : u.param_shapes) {
      std::uint64_t n = 1;
      for (const auto d : shape) {
        if (d < 0 || (d > 0 && n > (std::uint64_t{1} << 62) / static_cast<std::uint64_t>(d)))
          throw InputError("unit " + u.name + ": a parameter shape is negative or passes 2^62");
        n *= static_cast<std::uint64_t>(d);
      }
      sum += n;
      if (sum > (std::uint64_t{1} << 62)) throw InputError("unit " + u.name + ": passes 2^62");
    }
    if (u.numel < 0 || static_cast<std::uint64_t>(u.numel) != sum)
      throw InputError("unit " + u.name + ": numel " + std::to_string(u.numel) +
                       ", its parameters' shapes make " + std::to_string(sum));
    if (static_cast<std::uint64_t>(u.numel) > file_elements)
      throw InputError("unit " + u.name + ": numel " + std::to_string(u.numel) +
                       " is more than the rank files' " + std::to_string(file_elements) +
                       " recorded elements");
  }
}

// metadata.json's unit_tensors, units and files into `m`: every chunk of a
// listed unit and of a listed tensor.
void units_from(const json& j, CheckpointMeta& m) {
  m.unit_tensors = j.contains("unit_tensors") ? j["unit_tensors"].get<std::vector<std::string>>()
                                              : kDefaultUnitTensors;
  if (const std::string bad = unit_tensors_problem(m.unit_tensors); !bad.empty())
    throw InputError(bad);
  for (const auto& u : j.at("units")) {
    UnitMeta um;
    um.name = u.at("name");
    um.numel = integer<std::int64_t>(u.at("numel"), "unit numel");
    for (const auto& p : u.at("params")) {
      um.param_names.push_back(p.at("name"));
      um.param_shapes.push_back(shape_of(p.at("shape")));
    }
    m.units.push_back(um);
  }
  for (const auto& f : j.at("files")) m.files.push_back(file_from(f));
  for (const auto& f : m.files)
    for (const auto& c : f.chunks)
      if (c.unit < 0 || static_cast<std::size_t>(c.unit) >= m.units.size())
        throw InputError("chunk of unknown unit " + std::to_string(c.unit));
      else if (std::find(m.unit_tensors.begin(), m.unit_tensors.end(), c.kind) ==
               m.unit_tensors.end())
        throw InputError("chunk of unit " + std::to_string(c.unit) + " of kind " +
                         wireup::quoted(c.kind) + ", not one of unit_tensors");
}

template <typename F>
auto parsing(const std::string& name, F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    throw InputError(name + ": " + e.what());
  } catch (const std::exception& e) {
    throw InputError(name + ": not a wireup checkpoint description (" + e.what() + ")");
  }
}

}  // namespace

std::string unit_tensors_problem(const std::vector<std::string>& names) {
  if (names.empty() || names.size() > kMaxUnitTensors)
    return std::to_string(names.size()) + " unit tensors (expected 1 to " +
           std::to_string(kMaxUnitTensors) + ")";
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    const bool plain = !n.empty() && n.size() <= 32 && std::all_of(n.begin(), n.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!plain) return "unit tensor name " + wireup::quoted(n) + " (expected 1-32 of [a-z0-9_])";
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), n) !=
        names.begin() + static_cast<std::ptrdiff_t>(i))
      return "unit tensor " + n + " named twice";
  }
  return "";
}

std::string step_dir_name(std::int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%08lld", static_cast<long long>(step));
  return buf;
}

std::string to_json(const RankFile& f) { return file_json(f).dump(); }

RankFile rank_file_from_json(const std::string& text, const std::string& name) {
  io::check_json_shape(text, name, kMaxMetadataDepth, kMaxMetadataValues);
  return parsing(name, [&] { return file_from(json::parse(text)); });
}

std::string to_json(const CheckpointMeta& m) {
  json units = json::array();
  for (const auto& u : m.units) {
    json params = json::array();
    for (std::size_t i = 0; i < u.param_names.size(); ++i)
      params.push_back({{"name", u.param_names[i]}, {"shape", u.param_shapes[i]}});
    units.push_back({{"name", u.name}, {"numel", u.numel}, {"params", params}});
  }
  json files = json::array();
  for (const auto& f : m.files) files.push_back(file_json(f));
  json model = model_json(m.model);
  model["preset"] = m.preset;
  json j = {
      {"format", "wireup-checkpoint"},
      {"version", m.version},
      {"wireup_version", m.wireup_version},
      {"step", m.step},
      {"seed", m.seed},
      {"model", model},
      {"world",
       {{"world_size", m.world_size},
        {"shard_group_size", m.shard_group_size},
        {"sharding", m.sharding}}},
      {"optimizer",
       {{"type", "adamw"},
        {"steps", m.optimizer_steps},
        {"beta1", m.beta1},
        {"beta2", m.beta2},
        {"eps", m.eps},
        {"weight_decay", m.weight_decay}}},
      {"data_position", m.data_position},
      {"chat_template", m.chat_template.empty() ? json(nullptr) : json(m.chat_template)},
      {"lora", m.lora ? json::parse(adapter_meta_json(*m.lora)) : json(nullptr)},
      {"dpo", m.dpo ? json::parse(dpo_meta_json(*m.dpo)) : json(nullptr)},
      {"unit_tensors", m.unit_tensors.empty() ? kDefaultUnitTensors : m.unit_tensors},
      {"units", units},
      {"files", files},
  };
  return j.dump(1);
}

CheckpointMeta checkpoint_meta_from_json(const std::string& text, const std::string& name) {
  io::check_json_shape(text, name, kMaxMetadataDepth, kMaxMetadataValues);
  return parsing(name, [&] {
    const json j = json::parse(text);
    if (j.at("format") != "wireup-checkpoint") throw InputError("format is not wireup-checkpoint");
    CheckpointMeta m;
    m.version = integer<int>(j.at("version"), "version");
    if (m.version != 1) throw InputError("unsupported version " + std::to_string(m.version));
    m.wireup_version = j.value("wireup_version", "");
    m.step = integer<std::int64_t>(j.at("step"), "step");
    m.seed = integer<std::uint64_t>(j.at("seed"), "seed");
    const auto& mo = j.at("model");
    m.preset = mo.value("preset", "");
    m.model = model_from_json(mo);
    const auto& w = j.at("world");
    m.world_size = integer<int>(w.at("world_size"), "world_size");
    m.shard_group_size = integer<int>(w.at("shard_group_size"), "shard_group_size");
    m.sharding = w.at("sharding");
    const auto& o = j.at("optimizer");
    m.optimizer_steps = integer<std::int64_t>(o.at("steps"), "optimizer steps");
    m.beta1 = o.at("beta1");
    m.beta2 = o.at("beta2");
    m.eps = o.at("eps");
    m.weight_decay = o.at("weight_decay");
    m.data_position = j.at("data_position").get<std::string>();
    if (j.contains("chat_template") && !j["chat_template"].is_null())
      m.chat_template = j["chat_template"].get<std::string>();
    if (j.contains("lora") && !j["lora"].is_null())
      m.lora = adapter_meta_from_json(j["lora"].dump(), name);
    if (j.contains("dpo") && !j["dpo"].is_null()) m.dpo = dpo_meta_from_json(j["dpo"].dump(), name);
    units_from(j, m);
    check_sizes(m);
    return m;
  });
}

std::vector<ReadPiece> plan_reads(const CheckpointMeta& m, int unit, const std::string& kind,
                                  std::int64_t begin, std::int64_t count) {
  const std::int64_t real_end = std::min(begin + count, m.units.at(unit).numel);
  std::vector<ReadPiece> out;
  std::int64_t covered = 0;
  for (std::size_t fi = 0; fi < m.files.size(); ++fi) {
    const auto& chunks = m.files[fi].chunks;
    for (std::size_t ci = 0; ci < chunks.size(); ++ci) {
      const auto& c = chunks[ci];
      if (c.unit != unit || c.kind != kind) continue;
      const std::int64_t lo = std::max(begin, c.global_offset);
      const std::int64_t hi = std::min(real_end, c.global_offset + c.numel);
      if (hi <= lo) continue;
      out.push_back({fi, ci, lo - c.global_offset, lo - begin, hi - lo});
      covered += hi - lo;
    }
  }
  const std::int64_t need = std::max<std::int64_t>(0, real_end - begin);
  if (covered != need)
    throw InputError("unit " + m.units.at(unit).name + " " + kind + ": chunks cover " +
                     std::to_string(covered) + " of the " + std::to_string(need) +
                     " elements needed (missing or overlapping shard files)");
  return out;
}

}  // namespace wireup::train
