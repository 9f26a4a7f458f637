#include "wireup/data/shard_set.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "row_reader.hpp"
#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

namespace wireup::data {
namespace {

void check_against_manifest(const ShardFile& f, const ShardEntry& e, const Manifest& m) {
  const auto& h = f.header();
  const std::string name = f.path().string();
  const auto mismatch = [&](const char* what, std::uint64_t file, std::uint64_t manifest) {
    throw InputError(name + ": " + what + " " + std::to_string(file) + " in the shard header but " +
                     std::to_string(manifest) +
                     " in the manifest (shard replaced or manifest "
                     "from another run?)");
  };
  if (h.token_count != e.tokens) mismatch("token count", h.token_count, e.tokens);
  if (h.doc_count != e.documents) mismatch("document count", h.doc_count, e.documents);
  if (h.token_bytes != m.token_bytes) mismatch("token width", h.token_bytes, m.token_bytes);
  if (h.vocab_size != m.tokenizer.vocab_size)
    mismatch("vocabulary size", h.vocab_size, m.tokenizer.vocab_size);
  // A chat or preference manifest's shards carry the loss mask (version 2),
  // a token data set's do not (version 1).
  const std::uint32_t version = m.masked() ? kShardVersionMasked : kShardVersion;
  if (h.version != version) mismatch("format version", h.version, version);
  if (m.masked() && h.trained_count != e.trained_tokens)
    mismatch("trained token count", h.trained_count, e.trained_tokens);
}

// Checksums the chosen shards on a few threads: Lustre and NVMe both serve
// parallel streams faster than one.
void verify_checksums(const std::vector<ShardFile>& files, const std::vector<ShardEntry>& entries,
                      const std::vector<std::size_t>& which) {
  if (which.empty()) return;
  const std::size_t threads =
      std::min<std::size_t>({which.size(), 4, std::max(1u, std::thread::hardware_concurrency())});
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::exception_ptr first_error;
  std::size_t first_index = SIZE_MAX;
  const auto work = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < which.size();) {
      const std::size_t i = which[k];
      try {
        const auto digest = sha256_file(files[i].path());
        if (digest != entries[i].sha256)
          throw InputError(files[i].path().string() + ": SHA-256 " + digest +
                           " does not match the manifest's " + entries[i].sha256 +
                           " (corrupted or partially copied shard)");
      } catch (...) {
        const std::lock_guard lock(mu);
        // Report the lowest-numbered bad shard so the message is deterministic.
        if (i < first_index) {
          first_index = i;
          first_error = std::current_exception();
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace

ShardSet::ShardSet(const std::filesystem::path& dir, const Manifest& manifest,
                   const SplitEntry& split, const std::string& split_name, ReadMode mode,
                   Verify verify, std::uint64_t rank, std::uint64_t world_size)
    : manifest_file_(dir / kManifestName),
      vocab_size_(manifest.tokenizer.vocab_size),
      token_bytes_(manifest.token_bytes) {
  if (split.shards.empty())
    throw InputError((dir / kManifestName).string() + ": the " + split_name +
                     " split has no shards");
  starts_.push_back(0);
  std::vector<std::size_t> to_hash;
  for (std::size_t i = 0; i < split.shards.size(); ++i) {
    const auto& e = split.shards[i];
    shards_.emplace_back(dir / e.file, mode);
    check_against_manifest(shards_.back(), e, manifest);
    if (shards_.back().file_bytes() != e.bytes)
      throw InputError(shards_.back().path().string() + ": " +
                       std::to_string(shards_.back().file_bytes()) +
                       " bytes but the manifest "
                       "lists " +
                       std::to_string(e.bytes));
    starts_.push_back(starts_.back() + e.tokens);
    if (verify == Verify::All ||
        (verify == Verify::Partitioned && world_size > 0 && i % world_size == rank))
      to_hash.push_back(i);
  }
  verify_checksums(shards_, split.shards, to_hash);
}

std::size_t ShardSet::shard_of(std::uint64_t token) const {
  // The last shard starting at or before `token`.
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), token);
  return static_cast<std::size_t>(it - starts_.begin()) - 1;
}

std::string ShardSet::locate(std::uint64_t token) const {
  if (tokens() == 0) return "(an empty split)";
  const auto s = shard_of(std::min(token, tokens() - 1));
  const ShardFile& f = shards_[s];
  return f.path().string() + " at byte " +
         std::to_string(f.header().tokens_offset + (token - starts_[s]) * f.header().token_bytes);
}

std::string ShardSet::describe(std::uint64_t token) const {
  const auto s = shard_of(token);
  const std::uint64_t local = token - starts_[s];
  const auto docs = shards_[s].doc_offsets();  // an error path: read once, here only
  const auto doc = std::upper_bound(docs.begin(), docs.end(), local) - docs.begin() - 1;
  return shards_[s].path().string() + ": token " + std::to_string(local) + " (document " +
         std::to_string(doc) + ")";
}

// Calls fn(shard, local_first, n) for each shard's piece of a token range.
template <class Fn>
void ShardSet::for_pieces(std::uint64_t first, std::uint64_t count, Fn fn) const {
  if (first >= tokens()) return;
  count = std::min(count, tokens() - first);
  for (auto s = shard_of(first); count > 0 && s < shards_.size(); ++s) {
    const std::uint64_t n = std::min(count, starts_[s + 1] - first);
    if (n > 0) fn(shards_[s], first - starts_[s], n);
    first += n;
    count -= n;
  }
}

void ShardSet::read_raw(std::uint64_t first, std::uint64_t count, unsigned char* out) const {
  if (first > tokens() || count > tokens() - first)
    throw std::out_of_range("ShardSet::read_raw past the end of the split");
  unsigned char* const start = out;
  for_pieces(first, count, [&](const ShardFile& f, std::uint64_t at, std::uint64_t n) {
    f.read_raw(at, n, out);
    out += n * f.header().token_bytes;
  });
  check_ids(first, count, start);
}

void ShardSet::read_mask(std::uint64_t first, std::uint64_t count, std::uint8_t* out) const {
  if (first > tokens() || count > tokens() - first)
    throw std::out_of_range("ShardSet::read_mask past the end of the split");
  for_pieces(first, count, [&](const ShardFile& f, std::uint64_t at, std::uint64_t n) {
    f.read_mask(at, n, out);
    out += n;
  });
}

std::vector<std::uint64_t> ShardSet::doc_starts() const {
  std::vector<std::uint64_t> out = {0};
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    const auto offsets = shards_[s].doc_offsets();
    for (std::size_t d = 1; d < offsets.size(); ++d) out.push_back(starts_[s] + offsets[d]);
  }
  return out;
}

void ShardSet::check_ids(std::uint64_t first, std::uint64_t count, const unsigned char* raw) const {
  const auto bad = detail::first_id_at_least(raw, count, token_bytes_, vocab_size_);
  if (!bad) return;
  std::uint32_t id = 0;
  for (unsigned k = token_bytes_; k-- > 0;) id = id << 8 | raw[*bad * token_bytes_ + k];
  throw InputError(describe(first + *bad) + " has id " + std::to_string(id) +
                   ", not below the vocabulary size " + std::to_string(vocab_size_) + " of " +
                   manifest_file_.string() +
                   " (a shard from another tokenizer, or damaged before its checksum was taken)");
}

const unsigned char* ShardSet::mapped(std::uint64_t first, std::uint64_t count) const {
  if (first >= tokens() || count > tokens() - first) return nullptr;
  const auto s = shard_of(first);
  const unsigned char* base = shards_[s].mapped_tokens();
  if (base == nullptr || count > starts_[s + 1] - first) return nullptr;
  return base + (first - starts_[s]) * shards_[s].header().token_bytes;
}

void ShardSet::prefetch(std::uint64_t first, std::uint64_t count) const {
  for_pieces(first, count,
             [](const ShardFile& f, std::uint64_t at, std::uint64_t n) { f.prefetch(at, n); });
}

void ShardSet::readahead(std::uint64_t first, std::uint64_t count) const {
  for_pieces(first, count,
             [](const ShardFile& f, std::uint64_t at, std::uint64_t n) { f.readahead(at, n); });
}

std::uint64_t window_count(std::uint64_t tokens, std::uint64_t context) {
  if (context == 0 || tokens < 2) return 0;
  return (tokens - 1) / context;
}

}  // namespace wireup::data
