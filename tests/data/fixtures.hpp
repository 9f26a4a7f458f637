#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "wireup/data/manifest.hpp"

namespace wireup::test {

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A synthetic data set: shard k of a split holds the given documents. With
// `counting`, token i of the split's concatenated stream is i % vocab, so a
// reader's output can be checked by position alone.
struct SplitSpec {
  std::vector<std::uint64_t> shard_tokens;  // tokens per shard
  std::uint64_t doc_tokens = 7;             // documents are this long (last one shorter)
};
data::Manifest write_dataset(const std::filesystem::path& dir, const SplitSpec& train,
                             const SplitSpec& validation, std::uint32_t vocab = 50000);

// A synthetic chat data set (manifest version 2, masked shards, one shard
// a split): documents of the given lengths, token i of the split's stream
// being i % vocab and trained exactly when expected_trained(i, first of its
// document) says so.
data::Manifest write_chat_dataset(const std::filesystem::path& dir,
                                  const std::vector<std::uint64_t>& train_docs,
                                  const std::vector<std::uint64_t>& validation_docs,
                                  std::uint32_t vocab = 50000);
inline bool expected_trained(std::uint64_t i, bool first_of_document) {
  return !first_of_document && i % 3 != 0;
}

// The expected token at stream position i for write_dataset's data.
inline std::uint64_t expected_token(std::uint64_t i, std::uint32_t vocab = 50000) {
  return i % vocab;
}

// The message of the InputError `what` throws ("(no error)" when it throws none),
// checking that it came within 30 s (a blocked read never comes): input from outside is refused
// unread, never waited on.
std::string quick_error(const std::function<void()>& what);

std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, const std::string& bytes);

}  // namespace wireup::test
