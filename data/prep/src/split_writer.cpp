#include "split_writer.hpp"

#include <cstdio>
#include <utility>

namespace wireup::prep {

SplitWriter::SplitWriter(const Staging& staging, std::string prefix, std::uint32_t vocab,
                         std::uint32_t bos, std::uint32_t eos, std::uint64_t shard_tokens,
                         bool masked)
    : staging_(staging),
      prefix_(std::move(prefix)),
      vocab_(vocab),
      bos_(bos),
      eos_(eos),
      shard_tokens_(shard_tokens),
      masked_(masked) {}

void SplitWriter::add(std::span<const std::uint32_t> doc, std::span<const std::uint8_t> mask) {
  if (writer_ && writer_->token_count() > 0 && writer_->token_count() + doc.size() > shard_tokens_)
    close();
  open_if_closed();
  writer_->add_document(doc, mask);
}

void SplitWriter::add_pair(std::span<const std::uint32_t> a, std::span<const std::uint8_t> a_mask,
                           std::span<const std::uint32_t> b, std::span<const std::uint8_t> b_mask) {
  if (writer_ && writer_->token_count() > 0 &&
      writer_->token_count() + a.size() + b.size() > shard_tokens_)
    close();
  open_if_closed();
  writer_->add_document(a, a_mask);
  writer_->add_document(b, b_mask);
}

void SplitWriter::open_if_closed() {
  if (!writer_) {
    char name[64];
    std::snprintf(name, sizeof name, "%s-%05zu.bin", prefix_.c_str(), names_.size());
    names_.emplace_back(name);
    writer_ = std::make_unique<data::ShardWriter>(staging_.file(name), vocab_, bos_, eos_, masked_);
  }
}

void SplitWriter::close() {
  if (!writer_) return;
  data::ShardEntry e;
  e.file = names_.back();
  e.tokens = writer_->token_count();
  e.documents = writer_->doc_count();
  e.trained_tokens = writer_->trained_count();
  e.sha256 = writer_->finish();
  e.bytes = writer_->file_bytes();
  split_.shards.push_back(std::move(e));
  writer_.reset();
}

}  // namespace wireup::prep
