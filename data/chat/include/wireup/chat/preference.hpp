#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/chat/chat_encoder.hpp"
#include "wireup/chat/conversation.hpp"
#include "wireup/error.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

// Preference pairs (prompt, chosen, rejected) as TRL's DPO data sets hold
// them, one JSONL row a pair, and their tokens as TRL (>= 0.29) makes them.
// docs/wireup-prep-preference.md has the rules with examples.
namespace wireup::chat {

// A row that is not a usable pair. `reason` is the short name wireup-prep
// counts skipped rows under: bad_json, missing_key, bad_value,
// empty_completion, needs_chat_template, no_eos, prompt_not_prefix.
class PairError : public InputError {
 public:
  PairError(const char* reason, const std::string& what) : InputError(what), reason_(reason) {}
  const char* reason() const { return reason_; }

 private:
  const char* reason_;
};

// One row. Text rows: strings. Conversational rows: lists of messages (a
// list whose first item is an object with "role", TRL's is_conversational).
struct PreferencePair {
  bool conversational = false;
  std::string prompt, chosen, rejected;                                      // text rows
  std::vector<Message> prompt_messages, chosen_messages, rejected_messages;  // conversational
  bool operator==(const PreferencePair&) const = default;
};

// What a JSONL row holds: no pair (not an object with "chosen" and
// "rejected"), or a pair of text or of messages (chosen or rejected a list
// whose first item is an object with "role"). wireup-prep tells a data set's
// kind by its first row.
enum class RowKind { NotPair, TextPair, ConversationalPair };
RowKind preference_row_kind(std::string_view line);

// {"prompt"?, "chosen", "rejected"}: strings, or lists of messages (the
// prompt ending with a user message, the completions assistant messages).
// Without "prompt" the prompt is implicit and extracted as TRL's
// extract_prompt does (extract_implicit_prompt). PairError saying what is
// wrong, without a location: the caller names file and line.
PreferencePair parse_preference_row(std::string_view line);

// TRL's extract_prompt on text: the common prefix of chosen and rejected, up
// to the first character (code point) that differs, is the prompt; when the
// character before that point is a space, the space goes to the completions.
// When one is a prefix of the other, the prompt stops one character short of
// the shorter one's end (TRL's loop ends there). Sets prompt and cuts the two.
void extract_implicit_prompt(std::string& prompt, std::string& chosen, std::string& rejected);
// The same on message lists: whole messages compared.
void extract_implicit_prompt(std::vector<Message>& prompt, std::vector<Message>& chosen,
                             std::vector<Message>& rejected);

// A pair's ids: each sequence is prompt + completion; mask 1 on the
// completion's tokens.
struct PairTokens {
  std::vector<std::uint32_t> chosen, rejected;
  std::vector<std::uint8_t> chosen_mask, rejected_mask;
  std::size_t prompt_tokens = 0;  // the prompt's ids at the start of both
};

// How pairs become ids.
//   Conversational (a chat template): prompt ids = the prompt rendered with
//   the generation prompt; full ids = prompt + completion rendered without
//   it; the completion is full[len(prompt ids):], nothing added.
//   Text: prompt ids = BOS (when the tokenizer has one) + the prompt's ids;
//   full ids = BOS + ids(prompt + completion) + EOS (an EOS spelled at the
//   completion's end is that one token); the completion is the suffix.
// Either way full must start with the prompt's ids (PairError
// prompt_not_prefix) and each completion must have tokens
// (empty_completion). Const and thread-safe.
class PairEncoder {
 public:
  // `chat`: the chat template's encoder, for conversational rows (nullptr:
  // those are refused, needs_chat_template). Text rows need the
  // tokenizer's EOS (no_eos).
  PairEncoder(const tokenizer::Tokenizer& tokenizer, const ChatEncoder* chat);
  PairTokens encode(const PreferencePair& pair) const;

 private:
  PairTokens encode_text(const PreferencePair& pair) const;
  PairTokens encode_conversation(const PreferencePair& pair) const;

  const tokenizer::Tokenizer& tokenizer_;
  const ChatEncoder* chat_;
};

}  // namespace wireup::chat
