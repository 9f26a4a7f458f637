#include "hf/hf_weights.hpp"

#include "checkpoint/checkpoint_files.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/sha256.hpp"

namespace fs = std::filesystem;

namespace wireup::train {

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

HfWeights::HfWeights(const fs::path& dir) {
  const fs::path single = dir / "model.safetensors";
  const fs::path index = dir / "model.safetensors.index.json";
  if (path_exists(single)) {
    readers_.push_back(std::make_unique<safetensors::Reader>(single));
    for (const auto& t : readers_[0]->tensors()) where_[t.name] = 0;
    return;
  }
  if (!path_exists(index))
    throw InputError(single.string() + ": missing (and no model.safetensors.index.json)");
  const auto weight_map =
      safetensors::parse_index(read_text(index, safetensors::kMaxIndexBytes), index.string());
  std::map<std::string, std::size_t> opened;
  for (const auto& [tensor, file] : weight_map) {
    auto o = opened.find(file);
    if (o == opened.end() && !path_exists(dir / file))
      throw InputError((dir / file).string() + ": missing (" + index.filename().string() +
                       " maps " + tensor + " to it)");
    if (o == opened.end()) {
      readers_.push_back(std::make_unique<safetensors::Reader>(dir / file));
      o = opened.emplace(file, readers_.size() - 1).first;
    }
    if (!readers_[o->second]->find(tensor))
      throw InputError((dir / file).string() + ": no tensor " + tensor + " (named in " +
                       index.filename().string() + ")");
    where_[tensor] = o->second;
  }
}

std::pair<const safetensors::Reader*, const safetensors::TensorEntry*> HfWeights::find(
    const std::string& name) const {
  const auto it = where_.find(name);
  if (it == where_.end()) return {nullptr, nullptr};
  const auto* r = readers_[it->second].get();
  return {r, r->find(name)};
}

std::vector<std::string> HfWeights::names() const {
  std::vector<std::string> out;
  for (const auto& [name, r] : where_) out.push_back(name);
  return out;
}

std::string HfWeights::tensor_lines() const {
  std::string out;
  for (const auto& [name, r] : where_) {
    const auto* e = readers_[r]->find(name);
    out += name + " " + e->dtype + " " + shape_str(e->shape) + " " +
           sha256_hex(readers_[r]->read_head(*e, 4096)) + "\n";
  }
  return out;
}

std::string HfWeights::describe() const {
  return readers_.size() == 1 ? readers_[0]->path().string()
                              : readers_[0]->path().parent_path().string() + " (" +
                                    std::to_string(readers_.size()) + " safetensors files)";
}

}  // namespace wireup::train
