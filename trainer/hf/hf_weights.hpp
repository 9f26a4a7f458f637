#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hf/safetensors.hpp"

namespace wireup::train {

// The weight files of a Hugging Face directory: model.safetensors, or the
// shards model.safetensors.index.json names (each file and tensor checked
// when opened; InputError naming the file). Plain C++.
class HfWeights {
 public:
  explicit HfWeights(const std::filesystem::path& dir);

  // nullptr if absent.
  std::pair<const safetensors::Reader*, const safetensors::TensorEntry*> find(
      const std::string& name) const;
  std::size_t size() const { return where_.size(); }
  // Every tensor's name, sorted.
  std::vector<std::string> names() const;
  // "name dtype [shape] sha256(first 4 KiB of its data)" of every tensor,
  // sorted by name, a line each: a base's identity without reading it whole.
  std::string tensor_lines() const;
  std::string describe() const;

 private:
  std::vector<std::unique_ptr<safetensors::Reader>> readers_;
  std::map<std::string, std::size_t> where_;
};

// "[2,3]"
std::string shape_str(const std::vector<std::int64_t>& s);

}  // namespace wireup::train
