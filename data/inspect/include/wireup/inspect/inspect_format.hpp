#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// What `wireup-prep inspect` prints, as plain functions of plain data: the
// data set's facts, the documents to show and each document's ids and text.
namespace wireup::prep {

struct SplitFacts {
  std::string name;  // "train", "validation"
  std::uint64_t shards = 0, documents = 0, tokens = 0;
};

// A chat data set's manifest facts (wireup-prep --chat-template).
struct ChatFacts {
  std::string chat_template, date_string, train_on;
  std::uint64_t conversations = 0, tokens = 0, trained = 0, skipped_rows = 0;
};

// A preference data set's manifest facts (rows with "chosen" and "rejected").
struct PreferenceFacts {
  std::string format, chat_template;
  std::uint64_t pairs = 0, tokens = 0, trained = 0, skipped_rows = 0;
};

struct DatasetFacts {
  std::string manifest;  // its path
  std::string created_by;
  std::uint32_t vocab_size = 0;
  std::int64_t bos_id = -1, eos_id = -1;  // -1: none
  bool add_bos = false, add_eos = false;
  std::uint32_t token_bytes = 2;
  std::string tokenizer_type, tokenizer_file, tokenizer_sha256, tokenizer_source;
  std::string decoder;  // the tokenizer file that decodes the text shown
  std::vector<SplitFacts> splits;
  std::optional<ChatFacts> chat;
  std::optional<PreferenceFacts> preference;
};

// The header block: one "key  value" line per fact.
std::string format_header(const DatasetFacts& facts);

// A document by place: shard (index in the manifest's list), document within
// that shard, and its index within the split.
struct DocRef {
  std::size_t shard = 0;
  std::uint64_t doc = 0;
  std::uint64_t index = 0;
  bool operator==(const DocRef&) const = default;
};

// A split's documents in storage order (shards in manifest order, documents
// as stored), given each shard's document count: the first, and the one
// after `ref`; nullopt past the end. One at a time, so listing many
// documents holds no list of them.
std::optional<DocRef> first_document(const std::vector<std::uint64_t>& docs_per_shard);
std::optional<DocRef> next_document(const std::vector<std::uint64_t>& docs_per_shard,
                                    const DocRef& ref);

// The ids whose text is shown: `ids` less a leading BOS and a trailing EOS
// when the data set adds them (they are markers, not text; -1: none).
std::vector<int> text_ids(const std::vector<std::uint32_t>& ids, std::int64_t bos_id,
                          std::int64_t eos_id);

struct DocView {
  std::string split;
  DocRef ref;
  std::string shard_file;
  std::uint64_t first_token = 0;   // in its shard
  std::uint64_t tokens = 0;        // the whole document's
  std::vector<std::uint32_t> ids;  // its first ids (all of them when ids.size() == tokens)
  std::string text;                // decoded from text_ids(ids)
  // Chat data sets: the loss mask of `ids` (1: trained), and the decoded
  // text of each run of trained ids among them.
  std::vector<std::uint8_t> mask;
  std::vector<std::string> trained_runs;
  // Preference data sets: "pair N chosen" or "pair N rejected" (the mask then
  // marks the completion).
  std::string pair_label;
};

// The runs of consecutive trained ids (mask 1) as [begin, end) index pairs.
std::vector<std::pair<std::size_t, std::size_t>> trained_spans(
    const std::vector<std::uint8_t>& mask);

// A blank line, a title line, the ids (and how many are left out; with a
// mask, each trained id followed by '*'), the text escaped in double
// quotes, and with a mask a line of the trained runs' texts.
std::string format_document(const DocView& doc);

}  // namespace wireup::prep
