#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wireup::data {

// manifest.json: what wireup-prep wrote and how to check it. Schema in
// docs/data-format.md. File names are plain names inside the manifest's
// directory, so a prepared directory can be copied or moved as a whole.
inline constexpr std::string_view kManifestFormat = "wireup-tokens";
inline constexpr std::uint32_t kManifestVersion = 1;      // token data
inline constexpr std::uint32_t kManifestVersionChat = 2;  // conversations with loss masks
inline constexpr std::uint32_t kManifestVersionPreference = 3;  // preference pairs
inline constexpr std::string_view kManifestName = "manifest.json";
// The largest manifest load_manifest reads, and the JSON shape parse_manifest
// accepts (io::check_json_shape, before the parse): a manifest lists each
// shard in some 250 bytes and 7 values, 5 levels deep, so these hold some
// 60,000 shards (over 100 TB of tokens at the default shard size) while the
// parse tree of a hostile file stays near 100 MB.
inline constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t kMaxManifestValues = std::uint64_t{1} << 20;
inline constexpr std::size_t kMaxManifestDepth = 16;

struct ShardEntry {
  std::string file;
  std::uint64_t bytes = 0;
  std::uint64_t tokens = 0;
  std::uint64_t documents = 0;
  std::string sha256;
  std::uint64_t trained_tokens = 0;  // chat data sets only: tokens the loss mask trains
  bool operator==(const ShardEntry&) const = default;
};

struct SplitEntry {
  std::vector<ShardEntry> shards;
  std::uint64_t tokens() const;
  std::uint64_t documents() const;
  std::uint64_t trained_tokens() const;
  bool operator==(const SplitEntry&) const = default;
};

struct TokenizerEntry {
  std::string type = "sentencepiece";
  std::string file;    // copy inside the directory, e.g. "tokenizer.model"
  std::string sha256;  // of that copy
  std::string source;  // the path given to wireup-prep, or "trained"
  std::uint32_t vocab_size = 0;
  std::int64_t bos_id = -1;  // -1: none
  std::int64_t eos_id = -1;
  bool operator==(const TokenizerEntry&) const = default;
};

struct InputEntry {
  std::string path;
  std::uint64_t bytes = 0;
  std::uint64_t documents = 0;
  bool operator==(const InputEntry&) const = default;
};

// A chat data set (wireup-prep --chat-template): each document is one
// conversation rendered by the template, its shards are version 2 (with the
// loss mask), and the manifest is version 2.
struct ChatEntry {
  std::string chat_template;       // "llama3", "llama3.1", "qwen2.5" or "qwen3"
  std::string date_string;         // llama3.1's "Today Date"; "" for llama3
  std::string train_on;            // "all", "assistant" or "last-assistant"
  std::uint64_t skipped_rows = 0;  // bad rows --skip-bad-rows left out
  bool operator==(const ChatEntry&) const = default;
};

// A preference data set (rows with "chosen" and "rejected"): each pair is two
// documents next to each other in one shard, prompt + chosen then prompt +
// rejected, the loss mask on each completion; shards are version 2 and the
// manifest version 3.
struct PreferenceEntry {
  std::string format;         // "conversational" (chat template) or "text"
  std::string chat_template;  // conversational: "llama3", ...; text: ""
  std::string date_string;    // llama3.1's "Today Date"; else ""
  std::uint64_t skipped_rows = 0;
  std::map<std::string, std::uint64_t> skipped_by_reason;  // sums to skipped_rows
  bool operator==(const PreferenceEntry&) const = default;
};

struct Manifest {
  std::uint32_t token_bytes = 2;
  TokenizerEntry tokenizer;
  bool add_bos = true;
  bool add_eos = true;
  SplitEntry train;
  SplitEntry validation;
  double validation_fraction = 0.0;
  std::uint64_t split_seed = 0;
  std::vector<InputEntry> inputs;
  std::string created_by;
  std::optional<ChatEntry> chat;  // set: a chat data set (manifest version 2)
  std::optional<PreferenceEntry> preference;  // set: preference pairs (manifest version 3)
  // Version 2 shards with a loss mask: chat and preference data sets.
  bool masked() const { return chat.has_value() || preference.has_value(); }
  bool operator==(const Manifest&) const = default;
};

// Stable text (sorted keys, two-space indent, trailing newline): the same
// manifest always serialises to the same bytes.
std::string manifest_to_json(const Manifest& m);

// `name` (the file) starts every error message; each message names the field.
Manifest parse_manifest(std::string_view text, const std::string& name);

// `path` is manifest.json itself or the directory holding it.
std::filesystem::path manifest_path(const std::filesystem::path& path);
Manifest load_manifest(const std::filesystem::path& path);

}  // namespace wireup::data
