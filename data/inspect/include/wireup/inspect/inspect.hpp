#pragma once
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

namespace wireup::prep {

struct InspectOptions {
  std::filesystem::path dataset;   // a prepared directory or its manifest.json
  std::string split = "train";     // or "validation"
  std::uint64_t docs = 3;          // documents to show, >= 1
  std::uint64_t max_tokens = 256;  // ids (and their text) shown per document, >= 1
  // Decodes the text; default: the copy the manifest records, checked
  // against its SHA-256.
  std::optional<std::filesystem::path> tokenizer;
};

// `wireup-prep inspect`: the data set's facts, then its first documents in
// the order the trainer's stream holds them, ids and decoded text. Shard
// headers and sizes are checked against the manifest (checksums are
// --verify's). InputError naming the file on a missing data set, a bad
// split, a tokenizer that is missing or does not match, or a corrupt shard:
// nothing is printed when it comes before the first document is complete;
// a later document's error ends the listing there. Memory does not grow
// with the number of documents listed.
void inspect_dataset(const InspectOptions& options, std::ostream& out);

}  // namespace wireup::prep
