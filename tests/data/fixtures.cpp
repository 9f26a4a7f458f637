#include "fixtures.hpp"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>

#include "wireup/data/shard_writer.hpp"
#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

namespace wireup::test {
namespace fs = std::filesystem;

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() /
          ("wireup-data-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string quick_error(const std::function<void()>& what) {
  const auto start = std::chrono::steady_clock::now();
  std::string message = "(no error)";
  try {
    what();
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  return message;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

namespace {

data::SplitEntry write_split(const fs::path& dir, const std::string& prefix, const SplitSpec& spec,
                             std::uint32_t vocab) {
  data::SplitEntry split;
  std::uint64_t next = 0;
  for (std::size_t k = 0; k < spec.shard_tokens.size(); ++k) {
    const std::string name = prefix + "-" + std::to_string(k) + ".bin";
    data::ShardWriter w(dir / name, vocab, 1, 2);
    std::vector<std::uint32_t> doc;
    for (std::uint64_t left = spec.shard_tokens[k]; left > 0;) {
      const auto n = std::min(left, spec.doc_tokens);
      doc.clear();
      for (std::uint64_t i = 0; i < n; ++i)
        doc.push_back(static_cast<std::uint32_t>(next++ % vocab));
      w.add_document(doc);
      left -= n;
    }
    data::ShardEntry e;
    e.file = name;
    e.tokens = w.token_count();
    e.documents = w.doc_count();
    e.sha256 = w.finish();
    e.bytes = w.file_bytes();
    split.shards.push_back(e);
  }
  return split;
}

data::SplitEntry write_chat_split(const fs::path& dir, const std::string& prefix,
                                  const std::vector<std::uint64_t>& docs, std::uint32_t vocab) {
  data::SplitEntry split;
  if (docs.empty()) return split;
  const std::string name = prefix + "-0.bin";
  data::ShardWriter w(dir / name, vocab, 1, 2, /*masked=*/true);
  std::uint64_t next = 0;
  std::vector<std::uint32_t> doc;
  std::vector<std::uint8_t> mask;
  for (const auto n : docs) {
    doc.clear();
    mask.clear();
    for (std::uint64_t i = 0; i < n; ++i, ++next) {
      doc.push_back(static_cast<std::uint32_t>(next % vocab));
      mask.push_back(expected_trained(next, i == 0) ? 1 : 0);
    }
    w.add_document(doc, mask);
  }
  data::ShardEntry e;
  e.file = name;
  e.tokens = w.token_count();
  e.documents = w.doc_count();
  e.trained_tokens = w.trained_count();
  e.sha256 = w.finish();
  e.bytes = w.file_bytes();
  split.shards.push_back(e);
  return split;
}

data::Manifest base_manifest(const fs::path& dir, std::uint32_t vocab) {
  data::Manifest m;
  m.token_bytes = data::token_bytes_for_vocab(vocab);
  m.tokenizer.file = "tokenizer.model";
  write_file(dir / m.tokenizer.file, "not a real model");
  m.tokenizer.sha256 = wireup::sha256_hex("not a real model");
  m.tokenizer.source = "test";
  m.tokenizer.vocab_size = vocab;
  m.tokenizer.bos_id = 1;
  m.tokenizer.eos_id = 2;
  m.validation_fraction = 0.1;
  m.created_by = "wireup tests";
  return m;
}

}  // namespace

data::Manifest write_chat_dataset(const fs::path& dir, const std::vector<std::uint64_t>& train_docs,
                                  const std::vector<std::uint64_t>& validation_docs,
                                  std::uint32_t vocab) {
  data::Manifest m = base_manifest(dir, vocab);
  m.train = write_chat_split(dir, "train", train_docs, vocab);
  m.validation = write_chat_split(dir, "validation", validation_docs, vocab);
  m.inputs.push_back({"synthetic", 0, m.train.documents() + m.validation.documents()});
  m.chat = data::ChatEntry{"llama3", "", "assistant", 0};
  write_file(dir / "manifest.json", data::manifest_to_json(m));
  return m;
}

data::Manifest write_dataset(const fs::path& dir, const SplitSpec& train,
                             const SplitSpec& validation, std::uint32_t vocab) {
  data::Manifest m = base_manifest(dir, vocab);
  m.train = write_split(dir, "train", train, vocab);
  m.validation = write_split(dir, "validation", validation, vocab);
  m.inputs.push_back({"synthetic", 0, m.train.documents() + m.validation.documents()});
  write_file(dir / "manifest.json", data::manifest_to_json(m));
  return m;
}

}  // namespace wireup::test
