// wireup_chat's preference pairs: TRL's four row formats, its implicit
// prompt rule, the reasons a row is refused ([chat]); the ids of each format
// with the real Llama 3 and Qwen3 vocabularies against the rule
// (docs/wireup-prep-preference.md): the completion is what follows the
// prompt's ids, nothing else is added for chat, EOS for text ([chat_vocab]).
#include <catch2/catch.hpp>
#include <string>

#include "tokenizer_fixtures.hpp"
#include "wireup/chat/chat_encoder.hpp"
#include "wireup/chat/preference.hpp"

using namespace wireup;
using namespace wireup::chat;

namespace {

// The reason a row is refused ("" when it parses).
std::string reason_of(const std::string& row) {
  try {
    parse_preference_row(row);
    return "";
  } catch (const PairError& e) {
    return e.reason();
  }
}

std::vector<int> as_ints(const std::vector<std::uint32_t>& ids, std::size_t from = 0) {
  return {ids.begin() + static_cast<std::ptrdiff_t>(from), ids.end()};
}

// The ids under the mask, decoded.
std::string completion_text(const tokenizer::Tokenizer& tok, const std::vector<std::uint32_t>& ids,
                            const std::vector<std::uint8_t>& mask) {
  std::vector<int> out;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (mask[i]) out.push_back(static_cast<int>(ids[i]));
  return tok.decode(out);
}

const char* kChatRow =
    R"({"prompt": [{"role": "user", "content": "What color is the sky?"}],
        "chosen": [{"role": "assistant", "content": "It is blue."}],
        "rejected": [{"role": "assistant", "content": "It is green."}]})";

}  // namespace

TEST_CASE("preference rows: TRL's four formats", "[chat]") {
  const auto explicit_text = parse_preference_row(
      R"({"prompt": "The sky is", "chosen": " blue.", "rejected": " green."})");
  CHECK_FALSE(explicit_text.conversational);
  CHECK(explicit_text.prompt == "The sky is");
  CHECK(explicit_text.chosen == " blue.");
  CHECK(explicit_text.rejected == " green.");
  // Implicit: the common prefix is the prompt, the space before the split goes to the completions.
  CHECK(parse_preference_row(
            R"({"chosen": "The sky is blue.", "rejected": "The sky is green."})") == explicit_text);

  const auto chat = parse_preference_row(kChatRow);
  CHECK(chat.conversational);
  REQUIRE(chat.prompt_messages.size() == 1);
  CHECK(chat.prompt_messages[0] == Message{Role::User, "What color is the sky?"});
  CHECK(chat.chosen_messages == std::vector<Message>{{Role::Assistant, "It is blue."}});
  CHECK(chat.rejected_messages == std::vector<Message>{{Role::Assistant, "It is green."}});
  // Implicit: whole messages compared; the shared user turn is the prompt.
  const auto implicit_chat = parse_preference_row(
      R"({"chosen": [{"role": "user", "content": "What color is the sky?"},
                     {"role": "assistant", "content": "It is blue."}],
          "rejected": [{"role": "user", "content": "What color is the sky?"},
                       {"role": "assistant", "content": "It is green."}]})");
  CHECK(implicit_chat == chat);

  CHECK(preference_row_kind(kChatRow) == RowKind::ConversationalPair);
  CHECK(preference_row_kind(R"({"chosen": "a", "rejected": 3})") == RowKind::TextPair);
  CHECK(preference_row_kind(R"({"messages": []})") == RowKind::NotPair);
  CHECK(preference_row_kind("not json") == RowKind::NotPair);
}

TEST_CASE("the implicit prompt: characters, the space rule, a prefix", "[chat]") {
  std::string p, c = "Say: caf\xc3\xa9", r = "Say: caf\xc3\xa8";  // é and è share their first byte
  extract_implicit_prompt(p, c, r);
  CHECK(p == "Say: caf");  // split at the code point, never inside it
  CHECK(c == "\xc3\xa9");
  CHECK(r == "\xc3\xa8");

  c = "Answer: yes", r = "Answer: no";
  extract_implicit_prompt(p, c, r);
  CHECK(p == "Answer:");
  CHECK(c == " yes");
  CHECK(r == " no");

  // One a prefix of the other: TRL's loop ends at the shorter one's last character.
  c = "abc", r = "abcdef";
  extract_implicit_prompt(p, c, r);
  CHECK(p == "ab");
  CHECK(c == "c");
  CHECK(r == "cdef");

  // No common prefix: no prompt.
  c = "yes", r = "no";
  extract_implicit_prompt(p, c, r);
  CHECK(p.empty());
  CHECK(c == "yes");
}

TEST_CASE("preference rows refused, by reason", "[chat]") {
  CHECK(reason_of(kChatRow).empty());
  CHECK(reason_of("{\"chosen\": ") == "bad_json");
  CHECK(reason_of("[1, 2]") == "bad_json");
  CHECK(reason_of(R"({"prompt": "q", "chosen": "a"})") == "missing_key");
  CHECK(reason_of(R"({"prompt": "q", "chosen": "", "rejected": "b"})") == "empty_completion");
  CHECK(reason_of(R"({"prompt": "q", "chosen": 3, "rejected": "b"})") == "bad_value");
  // Mixed: a string against a list of messages.
  CHECK(reason_of(R"({"prompt": "q", "chosen": [{"role": "assistant", "content": "a"}],
                      "rejected": "b"})") == "bad_value");
  // The prompt must end with a user message; completions hold assistant messages.
  CHECK(reason_of(R"({"prompt": [{"role": "assistant", "content": "q"}],
                      "chosen": [{"role": "assistant", "content": "a"}],
                      "rejected": [{"role": "assistant", "content": "b"}]})") == "bad_value");
  CHECK(reason_of(R"({"prompt": [{"role": "user", "content": "q"}],
                      "chosen": [{"role": "user", "content": "a"}],
                      "rejected": [{"role": "assistant", "content": "b"}]})") == "bad_value");
  CHECK(reason_of(R"({"prompt": [{"role": "user", "content": "q"}], "chosen": [],
                      "rejected": [{"role": "assistant", "content": "b"}]})") ==
        "empty_completion");
  CHECK(reason_of(R"({"prompt": "q", "chosen": "a", "rejected": "b",
                      "tools": [{"name": "f"}]})") == "bad_value");
  try {
    parse_preference_row(R"({"prompt": "q", "chosen": "a"})");
    FAIL("no error");
  } catch (const PairError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("no 'rejected'"));
  }
}

TEST_CASE("Llama 3 ids of a chat pair: the generation prompt, then the turn", "[chat_vocab]") {
  const auto& tok = test::llama3();
  const ChatEncoder chat(tok, "llama3", {Template::Llama3, TrainOn::Assistant, ""});
  const PairEncoder enc(tok, &chat);
  const auto t = enc.encode(parse_preference_row(kChatRow));
  // The prompt: <|begin_of_text|>, the user turn, the assistant's header.
  std::vector<std::uint32_t> prompt;
  {
    auto parts = render(Conversation{{{Role::User, "What color is the sky?"}}}, chat.options());
    add_generation_prompt(parts, chat.options());
    std::vector<std::uint8_t> unused;
    chat.encode_parts(parts, prompt, unused);
  }
  REQUIRE(t.prompt_tokens == prompt.size());
  CHECK(std::vector<std::uint32_t>(t.chosen.begin(), t.chosen.begin() + prompt.size()) == prompt);
  CHECK(t.chosen.front() == 128000);
  // The completion: the content and <|eot_id|>, nothing added after it.
  CHECK(tok.decode(as_ints(t.chosen, prompt.size())) == "It is blue.<|eot_id|>");
  CHECK(completion_text(tok, t.rejected, t.rejected_mask) == "It is green.<|eot_id|>");
  CHECK(std::count(t.chosen_mask.begin(), t.chosen_mask.end(), 1) ==
        static_cast<long>(t.chosen.size() - prompt.size()));
  // Without a template, a chat pair is refused.
  const PairEncoder no_chat(tok, nullptr);
  try {
    no_chat.encode(parse_preference_row(kChatRow));
    FAIL("no error");
  } catch (const PairError& e) {
    CHECK(std::string(e.reason()) == "needs_chat_template");
  }
}

TEST_CASE("Qwen3 ids of a chat pair: the empty think block is the completion's", "[chat_vocab]") {
  const auto& tok = test::qwen3();
  const ChatEncoder chat(tok, "qwen3", {Template::Qwen3, TrainOn::Assistant, ""});
  const auto t = PairEncoder(tok, &chat).encode(parse_preference_row(kChatRow));
  CHECK(tok.decode(as_ints(t.chosen, 0)) ==
        "<|im_start|>user\nWhat color is the sky?<|im_end|>\n<|im_start|>assistant\n"
        "<think>\n\n</think>\n\nIt is blue.<|im_end|>\n");
  CHECK(completion_text(tok, t.chosen, t.chosen_mask) ==
        "<think>\n\n</think>\n\nIt is blue.<|im_end|>\n");
  CHECK(completion_text(tok, t.rejected, t.rejected_mask) ==
        "<think>\n\n</think>\n\nIt is green.<|im_end|>\n");
}

TEST_CASE("text pair ids: BOS, the prompt, the completion and EOS", "[chat_vocab]") {
  const auto& tok = test::llama3();
  const PairEncoder enc(tok, nullptr);
  const auto t = enc.encode(
      parse_preference_row(R"({"chosen": "The sky is blue.", "rejected": "The sky is green."})"));
  std::vector<std::uint32_t> want{static_cast<std::uint32_t>(tok.bos_id())};
  for (const int id : test::ids_of(tok, "The sky is blue."))
    want.push_back(static_cast<std::uint32_t>(id));
  want.push_back(static_cast<std::uint32_t>(tok.eos_id()));
  CHECK(t.chosen == want);
  CHECK(t.prompt_tokens == 1 + test::ids_of(tok, "The sky is").size());
  CHECK(completion_text(tok, t.chosen, t.chosen_mask) == " blue.<|end_of_text|>");
  // EOS spelled at the end is that one token, not added twice.
  const auto spelled = enc.encode(parse_preference_row(
      R"({"prompt": "The sky is", "chosen": " blue.<|end_of_text|>", "rejected": " green."})"));
  CHECK(spelled.chosen == want);
  // Qwen3's tokenizer has no BOS: none is put first.
  const auto q = PairEncoder(test::qwen3(), nullptr)
                     .encode(parse_preference_row(
                         R"({"prompt": "The sky is", "chosen": " blue.", "rejected": " green."})"));
  CHECK(test::qwen3().decode(as_ints(q.chosen)) == "The sky is blue.<|endoftext|>");
}

TEST_CASE("a prompt whose ids are not a prefix of the pair's is refused", "[chat_vocab]") {
  const auto& tok = test::llama3();
  // "is " then "blue": the tokenizer reads " blue" as one token, so the prompt's
  // trailing space token is not at the start of the full ids.
  try {
    PairEncoder(tok, nullptr)
        .encode(parse_preference_row(R"({"prompt": "The sky is ", "chosen": "blue.",
                                          "rejected": "green."})"));
    FAIL("no error");
  } catch (const PairError& e) {
    CHECK(std::string(e.reason()) == "prompt_not_prefix");
  }
}
