// wireup_chat: JSONL rows to conversations, the Llama 3 and Qwen templates,
// Jinja's trim, Qwen3's reasoning rule, the mask rule, the generation
// prompts, tool use refused ([chat]); ids and masks with the real Llama 3
// vocabulary ([chat_vocab]). The byte-for-byte comparison with Hugging Face's
// rendering and tiktoken's ids is chat_template_parity.py.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

#include "tokenizer_fixtures.hpp"
#include "wireup/chat/chat_encoder.hpp"
#include "wireup/chat/chat_template.hpp"
#include "wireup/chat/conversation.hpp"
#include "wireup/error.hpp"

using namespace wireup;
using namespace wireup::chat;
using Catch::Matchers::Contains;

namespace {

Conversation three_turns() {
  return {{{Role::System, "  Be brief.\n"},
           {Role::User, "Hi <|eot_id|> there"},
           {Role::Assistant, "\nHello!  "},
           {Role::User, "Again?"},
           {Role::Assistant, "Yes."}}};
}

// The trained text of each part, joined.
std::string trained_text(const std::vector<Part>& parts) {
  std::string out;
  for (const auto& p : parts)
    if (p.trained_from != Part::kNone) out += p.text.substr(p.trained_from);
  return out;
}

}  // namespace

TEST_CASE("rows: messages, prompt/completion, and what is refused", "[chat]") {
  const auto c = parse_row(
      R"({"id": 7, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u", "name": "x"}, {"role": "assistant", "content": "a"}]})");
  CHECK(c == Conversation{{{Role::System, "s"}, {Role::User, "u"}, {Role::Assistant, "a"}}});
  CHECK(parse_row(R"({"prompt": "p", "completion": "c"})") ==
        Conversation{{{Role::User, "p"}, {Role::Assistant, "c"}}});
  CHECK(
      parse_row(
          R"({"prompt": [{"role": "user", "content": "p"}], "completion": [{"role": "assistant", "content": "c"}]})") ==
      Conversation{{{Role::User, "p"}, {Role::Assistant, "c"}}});
  CHECK_THROWS_WITH(
      parse_row(R"({"messages": [{"role": "tool", "content": "x"}]})"),
      Contains("'messages[0]'.role: unknown role \"tool\"; expected system, user or assistant "
               "(tool use is not supported)"));
  CHECK_THROWS_WITH(
      parse_row(
          R"({"messages": [{"role": "user", "content": 5}, {"role": "assistant", "content": "a"}]})"),
      Contains("'messages[0]'.content: expected a string, found a number"));
  CHECK_THROWS_WITH(parse_row(R"({"messages": [{"role": "assistant", "content": null}]})"),
                    Contains("'messages[0]'.content: expected a string, found null"));
  CHECK_THROWS_WITH(parse_row(R"({"messages": [{"role": "user", "content": "u"}]})"),
                    Contains("no assistant message"));
  CHECK_THROWS_WITH(parse_row(R"({"messages": []})"), Contains("no assistant message"));
  CHECK_THROWS_WITH(parse_row(R"({"messages": [{"role": "user", "content": "u")"),
                    Contains("bad JSON line") && Contains("expected one JSON object per line"));
  CHECK_THROWS_WITH(parse_row(R"({"text": "plain"})"),
                    Contains("expected a JSON object with 'messages'"));
  CHECK_THROWS_WITH(parse_row(R"([1, 2])"), Contains("expected a JSON object, found a list"));
  CHECK_THROWS_WITH(parse_row(R"({"messages": "hi"})"),
                    Contains("'messages': expected a list of messages, found a string"));
  CHECK_THROWS_WITH(
      parse_row(R"({"messages": [{"role": "assistant", "content": "", "tool_calls": []}]})"),
      Contains("'messages[0]'.tool_calls: a tool call; tool use is not supported"));
  CHECK_THROWS_WITH(
      parse_row(R"({"prompt": "p", "completion": 3})"),
      Contains("expected two strings or two lists of messages, found a string and a number"));
  CHECK_THROWS_WITH(parse_row("{\"prompt\": \"\xff\", \"completion\": \"c\"}"),
                    Contains("bad JSON line"));
}

TEST_CASE("trim strips what Python's str.strip() strips, nothing else", "[chat]") {
  CHECK(python_strip("  a b \n\t") == "a b");
  CHECK(python_strip("\x1c\x1f\v\f\r x") == "x");
  CHECK(python_strip("\u00a0\u3000\u2028x\u2029\u202f\u205f\u1680\u2000\u200a\u0085") == "x");
  CHECK(python_strip("\u200bx\u200b") == "\u200bx\u200b");  // zero-width space is not whitespace
  CHECK(python_strip("\u180ex") == "\u180ex");              // nor the Mongolian vowel separator
  CHECK(python_strip(" \n ") == "");
  CHECK(python_strip("") == "");
  CHECK(python_strip("é ") == "é");
}

TEST_CASE("llama3 renders as Meta-Llama-3-8B-Instruct's template", "[chat]") {
  const auto parts = render(three_turns(), {Template::Llama3, TrainOn::Assistant, ""});
  CHECK(rendered_text(parts) ==
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nHi <|eot_id|> there<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nAgain?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nYes.<|eot_id|>");
  // The spelling inside the user's message is text, not the token.
  CHECK(parts[9] == Part{false, "\n\nHi <|eot_id|> there", Part::kNone});
  CHECK(trained_text(parts) == "Hello!<|eot_id|>Yes.<|eot_id|>");
}

TEST_CASE("llama3.1 adds its system block, with the date", "[chat]") {
  const auto with_system = render(three_turns(), {Template::Llama31, TrainOn::Assistant});
  const std::string head =
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
      "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
  CHECK(rendered_text(with_system)
            .rfind(head + "Be brief.<|eot_id|>"
                          "<|start_header_id|>user<|end_header_id|>",
                   0) == 0);
  const auto no_system = render(Conversation{{{Role::User, "q"}, {Role::Assistant, "a"}}},
                                {Template::Llama31, TrainOn::Assistant, "01 Jan 2025"});
  CHECK(rendered_text(no_system) ==
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Cutting Knowledge Date: December 2023\nToday Date: 01 Jan 2025\n\n<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nq<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\na<|eot_id|>");
  CHECK(trained_text(no_system) == "a<|eot_id|>");
}

TEST_CASE("the mask rule: all, assistant, last-assistant", "[chat]") {
  const auto c = three_turns();
  CHECK(trained_text(render(c, {Template::Llama3, TrainOn::LastAssistant, ""})) ==
        "Yes.<|eot_id|>");
  const auto all = render(c, {Template::Llama3, TrainOn::All, ""});
  CHECK(trained_text(all) == rendered_text(all));
  CHECK(parse_train_on("last-assistant", "--train-on") == TrainOn::LastAssistant);
  CHECK_THROWS_WITH(parse_train_on("user", "--train-on"),
                    Contains("--train-on 'user': expected all, assistant or last-assistant"));
  CHECK_THROWS_WITH(
      parse_template("chatml", "--chat-template"),
      Contains("--chat-template 'chatml': expected llama3, llama3.1, qwen2.5 or qwen3"));
}

TEST_CASE("Llama 3 ids: special tokens where the template puts them, masks", "[chat_vocab]") {
  const auto& tok = test::llama3();
  const ChatEncoder enc(tok, "tokenizer 'llama3.tiktoken'",
                        {Template::Llama3, TrainOn::Assistant, ""});
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> mask;
  enc.encode(three_turns(), ids, mask);
  REQUIRE(ids.size() == mask.size());
  CHECK(ids.front() == 128000);
  // Expected: the parts' ids one after another.
  std::vector<std::uint32_t> want;
  for (const auto& p : render(three_turns(), enc.options())) {
    if (p.special) {
      want.push_back(static_cast<std::uint32_t>(tok.special_id(p.text)));
      continue;
    }
    for (const int id : test::ids_of(tok, p.text)) want.push_back(static_cast<std::uint32_t>(id));
  }
  CHECK(ids == want);
  // Exactly 5 <|eot_id|> tokens: the one spelled in the user's text is text.
  CHECK(std::count(ids.begin(), ids.end(), 128009u) == 5);
  std::vector<int> trained;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (mask[i]) trained.push_back(static_cast<int>(ids[i]));
  CHECK(tok.decode(trained) == "Hello!<|eot_id|>Yes.<|eot_id|>");
  CHECK(std::count(mask.begin(), mask.end(), 1) == static_cast<long>(trained.size()));
}

TEST_CASE("the generation prompt: the assistant's header after the turns, untrained", "[chat]") {
  auto parts = render(Conversation{{{Role::User, " 2+2? "}}}, {Template::Llama3, TrainOn::All, ""});
  add_generation_prompt(parts);
  // Hugging Face's apply_chat_template(messages, add_generation_prompt=True).
  CHECK(rendered_text(parts) ==
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n2+2?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
  // <|begin_of_text|>, the user turn (5 parts, all trained: TrainOn::All), the header (4,
  // untrained).
  REQUIRE(parts.size() == 10);
  CHECK(parts[5].trained_from == 0);
  for (std::size_t i = 6; i < parts.size(); ++i) CHECK(parts[i].trained_from == Part::kNone);
}

TEST_CASE("Llama 3 ids of a user turn and the generation prompt", "[chat_vocab]") {
  const auto& tok = test::llama3();
  const ChatEncoder enc(tok, "llama3", {Template::Llama3, TrainOn::Assistant, ""});
  const Conversation user{{{Role::User, "Hi"}}};
  std::vector<std::uint32_t> turn, ids;
  std::vector<std::uint8_t> mask;
  enc.encode(user, turn, mask);
  auto parts = render(user, enc.options());
  add_generation_prompt(parts);
  mask.clear();
  enc.encode_parts(parts, ids, mask);
  // The user turn's ids, then <|start_header_id|> "assistant" <|end_header_id|> "\n\n"
  // as Hugging Face's Llama 3 tokenizer gives them.
  std::vector<std::uint32_t> want = turn;
  want.insert(want.end(), {128006, 78191, 128007, 271});
  CHECK(ids == want);
  CHECK(turn.back() == 128009);
  CHECK(std::count(mask.begin(), mask.end(), 1) == 0);
}

TEST_CASE("a tokenizer without Llama 3's special tokens is refused by name", "[chat_vocab]") {
  const auto cl100k = tokenizer::Tokenizer::load(test::vocab_file("cl100k_base.tiktoken"));
  CHECK_THROWS_WITH(
      ChatEncoder(cl100k, "tokenizer 'cl100k.tiktoken'", {}),
      Contains("tokenizer 'cl100k.tiktoken' has no special token <|begin_of_text|>") &&
          Contains("needs a Llama 3 tokenizer"));
}

namespace {

TemplateOptions qwen(Template t, TrainOn train_on = TrainOn::Assistant) {
  TemplateOptions o;
  o.chat_template = t;
  o.train_on = train_on;
  return o;
}

// The parts' text with each special part in brackets: [<|im_end|>].
std::string marked_text(const std::vector<Part>& parts) {
  std::string out;
  for (const auto& p : parts) out += p.special ? "[" + p.text + "]" : p.text;
  return out;
}

}  // namespace

TEST_CASE("rows: reasoning_content, and tool use refused by field", "[chat]") {
  const auto c = parse_row(
      R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "reasoning_content": "r"}, {"role": "assistant", "content": "b", "reasoning_content": null}]})");
  REQUIRE(c.messages.size() == 3);
  CHECK(c.messages[1].reasoning_content == std::optional<std::string>("r"));
  CHECK_FALSE(c.messages[2].reasoning_content.has_value());
  CHECK_THROWS_WITH(
      parse_row(
          R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "reasoning_content": 3}]})"),
      Contains("'messages[1]'.reasoning_content: expected a string or null, found a number"));
  CHECK_THROWS_WITH(
      parse_row(
          R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "tools": [{"type": "function"}]})"),
      Contains("'tools': tool definitions; tool use is not supported"));
  // No tools (null or empty) renders as none: accepted.
  CHECK(
      parse_row(
          R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "tools": []})")
          .messages.size() == 2);
  CHECK_THROWS_WITH(
      parse_row(
          R"({"messages": [{"role": "user", "content": "q"}, {"role": "tool", "content": "42"}, {"role": "assistant", "content": "a"}]})"),
      Contains("'messages[1]'.role: unknown role \"tool\"") &&
          Contains("(tool use is not supported)"));
}

TEST_CASE("template names and the special tokens each needs", "[chat]") {
  for (const auto t : {Template::Llama3, Template::Llama31, Template::Qwen25, Template::Qwen3})
    CHECK(parse_template(template_name(t), "--chat-template") == t);
  CHECK(template_name(Template::Qwen25) == std::string("qwen2.5"));
  CHECK(template_special_tokens(Template::Qwen25) ==
        std::vector<std::string_view>{"<|im_start|>", "<|im_end|>"});
  CHECK(template_special_tokens(Template::Qwen3) ==
        std::vector<std::string_view>{"<|im_start|>", "<|im_end|>", "<think>", "</think>"});
  CHECK_THROWS_WITH(parse_template("qwen", "--chat-template"),
                    Contains("expected llama3, llama3.1, qwen2.5 or qwen3"));
}

TEST_CASE("qwen2.5: ChatML with its default system message", "[chat]") {
  const Conversation no_system{{{Role::User, " q "}, {Role::Assistant, "a</think>b"}}};
  const auto parts = render(no_system, qwen(Template::Qwen25));
  // Contents as they are (no trim), </think> is text, the default system first.
  CHECK(marked_text(parts) ==
        "[<|im_start|>]system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
        "assistant.[<|im_end|>]\n"
        "[<|im_start|>]user\n q [<|im_end|>]\n"
        "[<|im_start|>]assistant\na</think>b[<|im_end|>]\n");
  CHECK(trained_text(parts) == "a</think>b<|im_end|>");
  const Conversation with_system{
      {{Role::System, "Be brief."}, {Role::User, "q"}, {Role::Assistant, "a", "ignored"}}};
  CHECK(rendered_text(render(with_system, qwen(Template::Qwen25))) ==
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nq<|im_end|>\n"
        "<|im_start|>assistant\na<|im_end|>\n");
  // A system message that is not first is a turn like the others; the default still comes.
  const Conversation late{{{Role::User, "q"}, {Role::System, "s"}, {Role::Assistant, "a"}}};
  CHECK(rendered_text(render(late, qwen(Template::Qwen25)))
            .starts_with("<|im_start|>system\nYou are Qwen"));
}

TEST_CASE("qwen3: reasoning only after the last user query", "[chat]") {
  const Conversation c{{{Role::User, "q1"},
                        {Role::Assistant, "a1", "r1"},
                        {Role::User, "q2"},
                        {Role::Assistant, "a2", "\nr2\n"}}};
  const auto parts = render(c, qwen(Template::Qwen3));
  // No default system; the earlier turn keeps only its answer.
  CHECK(marked_text(parts) ==
        "[<|im_start|>]user\nq1[<|im_end|>]\n[<|im_start|>]assistant\na1[<|im_end|>]\n"
        "[<|im_start|>]user\nq2[<|im_end|>]\n"
        "[<|im_start|>]assistant\n[<think>]\nr2\n[</think>]\n\na2[<|im_end|>]\n");
  CHECK(trained_text(parts) == "a1<|im_end|><think>\nr2\n</think>\n\na2<|im_end|>");
  CHECK(trained_text(render(c, qwen(Template::Qwen3, TrainOn::LastAssistant))) ==
        "<think>\nr2\n</think>\n\na2<|im_end|>");
  // The last turn without reasoning still gets the (empty) block.
  const Conversation plain{{{Role::User, "q"}, {Role::Assistant, "a"}}};
  CHECK(
      rendered_text(render(plain, qwen(Template::Qwen3))) ==
      "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\na<|im_end|>\n");
  // After the last query, an earlier assistant turn gets the block only when it has reasoning.
  const Conversation steps{{{Role::User, "q"},
                            {Role::Assistant, "s1", "r1"},
                            {Role::Assistant, "s2"},
                            {Role::Assistant, "s3"}}};
  CHECK(rendered_text(render(steps, qwen(Template::Qwen3))) ==
        "<|im_start|>user\nq<|im_end|>\n"
        "<|im_start|>assistant\n<think>\nr1\n</think>\n\ns1<|im_end|>\n"
        "<|im_start|>assistant\ns2<|im_end|>\n"
        "<|im_start|>assistant\n<think>\n\n</think>\n\ns3<|im_end|>\n");
}

TEST_CASE("qwen3: reasoning from </think> in the content", "[chat]") {
  const auto last_turn = [](const Message& m) {
    const auto text =
        rendered_text(render(Conversation{{{Role::User, "q"}, m}}, qwen(Template::Qwen3)));
    return text.substr(text.find("<|im_start|>assistant\n") + 22);
  };
  CHECK(last_turn({Role::Assistant, "<think>\n\nwhy\n</think>\n\n\nanswer"}) ==
        "<think>\nwhy\n</think>\n\nanswer<|im_end|>\n");
  // Before the first </think> after the last <think>; after the last </think>.
  CHECK(last_turn({Role::Assistant, "x<think>a<think>b</think>c</think>\nd"}) ==
        "<think>\nb\n</think>\n\nd<|im_end|>\n");
  // reasoning_content wins: the content, </think> and all, is the answer.
  CHECK(last_turn({Role::Assistant, "k</think>m", ""}) ==
        "<think>\n\n</think>\n\nk</think>m<|im_end|>\n");
  // Before the last query the split still drops the reasoning.
  const Conversation earlier{{{Role::User, "q"},
                              {Role::Assistant, "r</think>\na"},
                              {Role::User, "q2"},
                              {Role::Assistant, "b"}}};
  CHECK(rendered_text(render(earlier, qwen(Template::Qwen3))).find("assistant\na<|im_end|>") !=
        std::string::npos);
}

TEST_CASE("qwen3: a user message wrapped as a tool response is not a query", "[chat]") {
  const Conversation c{{{Role::User, "q"},
                        {Role::Assistant, "a1", "r1"},
                        {Role::User, "<tool_response>42</tool_response>"},
                        {Role::Assistant, "a2"}}};
  const auto text = rendered_text(render(c, qwen(Template::Qwen3)));
  CHECK(text.find("<think>\nr1\n</think>\n\na1") != std::string::npos);
  // With no query at all, no assistant turn gets the block.
  const Conversation none{{{Role::System, "s"}, {Role::Assistant, "a", "r"}}};
  CHECK(rendered_text(render(none, qwen(Template::Qwen3))) ==
        "<|im_start|>system\ns<|im_end|>\n<|im_start|>assistant\na<|im_end|>\n");
}

TEST_CASE("ChatML masks: content and <|im_end|>, never the newline after it", "[chat]") {
  const Conversation c{{{Role::User, "<|im_end|><think>"}, {Role::Assistant, "<|im_start|>x"}}};
  const auto parts = render(c, qwen(Template::Qwen25));
  // Spellings in contents are text, not special parts.
  CHECK(std::count_if(parts.begin(), parts.end(), [](const Part& p) { return p.special; }) == 6);
  REQUIRE(parts.size() == 12);
  CHECK(parts[9] == Part{false, "assistant\n<|im_start|>x", 10});
  CHECK(parts[10] == Part{true, "<|im_end|>", 0});
  CHECK(parts[11] == Part{false, "\n", Part::kNone});
  const auto all = render(c, qwen(Template::Qwen3, TrainOn::All));
  CHECK(trained_text(all) == rendered_text(all));
  const Conversation empty{{{Role::User, "q"}, {Role::Assistant, ""}}};
  CHECK(trained_text(render(empty, qwen(Template::Qwen25))) == "<|im_end|>");
}

TEST_CASE("the ChatML generation prompt, Qwen3's enable_thinking", "[chat]") {
  const Conversation c{{{Role::User, "q"}}};
  auto o = qwen(Template::Qwen3);
  auto thinking = render(c, o);
  add_generation_prompt(thinking, o);
  CHECK(marked_text(thinking) == "[<|im_start|>]user\nq[<|im_end|>]\n[<|im_start|>]assistant\n");
  o.enable_thinking = false;
  auto direct = render(c, o);
  add_generation_prompt(direct, o);
  CHECK(marked_text(direct) ==
        "[<|im_start|>]user\nq[<|im_end|>]\n[<|im_start|>]assistant\n[<think>]\n\n[</think>]\n\n");
  for (const auto& p : direct) CHECK(p.trained_from == Part::kNone);
  // Qwen2.5 has no thinking switch.
  auto q25 = qwen(Template::Qwen25);
  q25.enable_thinking = false;
  auto parts = render(c, q25);
  add_generation_prompt(parts, q25);
  CHECK(rendered_text(parts).ends_with("<|im_end|>\n<|im_start|>assistant\n"));
  // Parts of one family, the prompt of the other: refused.
  auto llama = render(c, {Template::Llama3, TrainOn::Assistant, ""});
  CHECK_THROWS_AS(add_generation_prompt(llama, o), std::invalid_argument);
  CHECK_THROWS_AS(add_generation_prompt(parts), std::invalid_argument);
}

TEST_CASE("a Llama 3 tokenizer is refused for the Qwen templates by name", "[chat_vocab]") {
  CHECK_THROWS_WITH(
      ChatEncoder(test::llama3(), "tokenizer 'llama3.tiktoken'", qwen(Template::Qwen3)),
      Contains("tokenizer 'llama3.tiktoken' has no special token <|im_start|>") &&
          Contains("--chat-template qwen3 needs a Qwen3 tokenizer"));
}

TEST_CASE("the published templates' texts are told apart by their bytes", "[chat]") {
  // The copies in templates/, each the chat_template of a tokenizer_config.json.
  const std::pair<const char*, Template> files[] = {{"Meta-Llama-3-8B-Instruct", Template::Llama3},
                                                    {"Llama-3.1-8B-Instruct", Template::Llama31},
                                                    {"Qwen2.5-Instruct", Template::Qwen25},
                                                    {"Qwen3", Template::Qwen3}};
  for (const auto& [name, t] : files) {
    std::ifstream in(std::string(WIREUP_CHAT_TEMPLATES_DIR) + "/" + name + ".chat_template.json");
    REQUIRE(in);
    const auto j = nlohmann::json::parse(in);
    const std::string text = j.at("chat_template").get<std::string>();
    INFO(name);
    CHECK(template_of_published_text(text) == t);
    CHECK_FALSE(template_of_published_text(text + "\n").has_value());  // another text
  }
  CHECK_FALSE(template_of_published_text("").has_value());
}
