#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ordered_pool.hpp"
#include "split_writer.hpp"
#include "wireup/chat/preference.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/prep/input_files.hpp"
#include "wireup/prep/prep.hpp"

// Internal to wireup-prep: preference rows (wireup/chat/preference.hpp), one
// pair a JSONL row, read in input order into the pool's chunks, their ids
// made there, each pair written as two documents of one shard.
namespace wireup::prep {

// Where a row is: its input's index and its line.
struct RowAt {
  std::size_t file = 0;
  std::uint64_t line = 0;
  auto operator<=>(const RowAt&) const = default;
};

// Pairs --skip-bad-rows left out, by reason, and the first one's message (in
// input order). The reading thread and the writing thread count in their own.
struct SkippedPairs {
  std::uint64_t count = 0;
  std::map<std::string, std::uint64_t> by_reason;
  std::string first;
  RowAt first_at;
  // Counts one; without skip_bad_rows, throws InputError naming `where`.
  void add(const chat::PairError& e, const std::string& where, RowAt at, bool skip_bad_rows);
  void merge(const SkippedPairs& other);
};

// What the inputs hold, told by the first non-blank line of the first JSONL
// input: preference pairs (text or conversational), or not.
chat::RowKind first_row_kind(const std::vector<InputFile>& files, const PrepOptions& o);

// Every input's rows, in input order, to the pool in chunks (each pair marked
// train or validation as a document is); returns the manifest's inputs. A
// pair of the other format than `conversational` (the first row's) is bad
// (bad_value).
std::vector<data::InputEntry> read_pairs(const std::vector<InputFile>& files, const PrepOptions& o,
                                         OrderedPool& pool, SkippedPairs& skipped,
                                         bool conversational);

// On a pool thread: a chunk's pairs to ids, two documents each (chosen, then
// rejected; a refused pair gives two empty ones and its error).
void encode_pairs(Chunk& c, const chat::PairEncoder& encoder);

// On the writing thread, in input order: each pair to its split, whole.
// Returns the pairs written.
std::uint64_t write_pairs(Chunk& c, SplitWriter& train, SplitWriter& validation,
                          SkippedPairs& skipped, bool skip_bad_rows);

}  // namespace wireup::prep
