#include "wireup/data/shard_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

namespace wireup::data {
namespace {

static_assert(std::endian::native == std::endian::little,
              "shards are little-endian and copied as-is; add byte swapping for big-endian hosts");

constexpr std::size_t kBufBytes = std::size_t{4} << 20;

[[noreturn]] void io_error(const std::filesystem::path& p, const char* what) {
  throw InputError(p.string() + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

ShardWriter::ShardWriter(std::filesystem::path path, std::uint32_t vocab_size, std::uint32_t bos_id,
                         std::uint32_t eos_id, bool masked)
    : path_(std::move(path)), masked_(masked) {
  if (vocab_size == 0) throw InputError(path_.string() + ": vocabulary size must be positive");
  header_ = make_header(vocab_size, bos_id, eos_id, 0, 0);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) io_error(path_, "cannot create shard");
  buf_.reserve(kBufBytes);
  // Placeholder header: zeros fail the magic check until finish() writes it.
  buf_.assign(kShardHeaderBytes, 0);
}

ShardWriter::~ShardWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
}

void ShardWriter::flush() {
  const unsigned char* p = buf_.data();
  std::size_t left = buf_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_error(path_, "write failed");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  buf_.clear();
}

void ShardWriter::write_all(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    if (buf_.size() == kBufBytes) flush();
    const std::size_t take = std::min(size, kBufBytes - buf_.size());
    buf_.insert(buf_.end(), p, p + take);
    p += take;
    size -= take;
  }
}

void ShardWriter::add_document(std::span<const std::uint32_t> tokens,
                               std::span<const std::uint8_t> mask) {
  if (finished_) throw std::logic_error("ShardWriter: add_document after finish");
  if (tokens.empty()) throw std::logic_error("ShardWriter: empty document");
  if (masked_ ? mask.size() != tokens.size() : !mask.empty())
    throw std::logic_error("ShardWriter: a mask must come with every document of a masked shard");
  for (const auto t : tokens)
    if (t >= header_.vocab_size)
      throw InputError(path_.string() + ": token id " + std::to_string(t) +
                       " is outside the vocabulary of " + std::to_string(header_.vocab_size));
  doc_starts_.push_back(tokens_);
  if (masked_) {
    mask_bits_.resize((tokens_ + tokens.size() + 7) / 8, 0);
    for (std::size_t i = 0; i < mask.size(); ++i) {
      if (mask[i] == 0) continue;
      const std::uint64_t at = tokens_ + i;
      mask_bits_[at / 8] = static_cast<std::uint8_t>(mask_bits_[at / 8] | (1u << (at % 8)));
      ++trained_;
    }
  }
  if (header_.token_bytes == 4) {
    write_all(tokens.data(), tokens.size_bytes());
  } else {
    std::uint16_t narrow[1024];
    for (std::size_t i = 0; i < tokens.size(); i += 1024) {
      const std::size_t n = std::min<std::size_t>(1024, tokens.size() - i);
      for (std::size_t j = 0; j < n; ++j) narrow[j] = static_cast<std::uint16_t>(tokens[i + j]);
      write_all(narrow, n * 2);
    }
  }
  tokens_ += tokens.size();
}

std::string ShardWriter::finish() {
  if (finished_) throw std::logic_error("ShardWriter: finish called twice");
  header_ = make_header(header_.vocab_size, header_.bos_id, header_.eos_id, tokens_,
                        doc_starts_.size(), masked_, trained_);
  const std::uint64_t end = header_.tokens_offset + tokens_ * header_.token_bytes;
  const unsigned char zeros[8] = {};
  write_all(zeros, header_.doc_index_offset - end);
  write_all(doc_starts_.data(), doc_starts_.size() * 8);
  write_all(&tokens_, 8);  // closing offset: the token count
  if (masked_) write_all(mask_bits_.data(), mask_bits_.size());
  flush();
  const auto head = encode_header(header_);
  if (::pwrite(fd_, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size()))
    io_error(path_, "cannot write header");
  if (::fsync(fd_) != 0) io_error(path_, "fsync failed");
  if (::close(fd_) != 0) {
    fd_ = -1;
    io_error(path_, "close failed");
  }
  fd_ = -1;
  // Read back rather than hash while streaming: the header is written last.
  auto digest = sha256_file(path_);
  finished_ = true;
  return digest;
}

}  // namespace wireup::data
