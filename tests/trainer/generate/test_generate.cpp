// wireup-train generate's plain-C++ rules: the sampling rule (greedy, the
// nucleus, seeded draws), the flags and their errors, the prompts file, the
// stop rule and the output line.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generate/generate_options.hpp"
#include "generate/generation_io.hpp"
#include "generate/sampling.hpp"
#include "wireup/error.hpp"

using namespace wireup::train::generate;
using Catch::Matchers::Contains;

namespace {

std::vector<float> log_probs(const std::vector<double>& p) {
  std::vector<float> out;
  for (double q : p) out.push_back(static_cast<float>(std::log(q)));
  return out;
}

std::vector<std::int32_t> draws(const std::vector<float>& logits, SamplingRule rule,
                                std::uint64_t seed, int n, std::uint64_t stream = 0) {
  TokenSampler s(rule, seed, stream);
  std::vector<std::int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(s.pick(logits.data(), logits.size()));
  return out;
}

GenerateOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "generate");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  GenerateOptions o;
  const bool parsed = parse_generate_options(static_cast<int>(argv.size()), argv.data(), o);
  REQUIRE(parsed);
  return o;
}

const std::vector<std::string> kGood = {"--init_from_hf", "hf", "--tokenizer",      "tok.model",
                                        "--prompt",       "Hi", "--max_new_tokens", "8"};

std::vector<std::string> with(std::vector<std::string> extra, bool drop_prompt = false) {
  std::vector<std::string> a;
  for (std::size_t i = 0; i < kGood.size(); i += 2)
    if (!(drop_prompt && kGood[i] == "--prompt")) a.insert(a.end(), {kGood[i], kGood[i + 1]});
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("wireup-generate-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("greedy: the lowest id among the largest logits", "[generate]") {
  const std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f};
  CHECK(argmax(l.data(), l.size()) == 1);
  // Temperature 0 never draws: any seed gives the argmax.
  CHECK(draws(l, {0.0, 0.3}, 1, 3) == std::vector<std::int32_t>{1, 1, 1});
  CHECK(draws(l, {0.0, 1.0}, 99, 3) == std::vector<std::int32_t>{1, 1, 1});
}

TEST_CASE("the nucleus: the most probable tokens up to top_p, renormalised", "[generate]") {
  const auto l = log_probs({0.1, 0.4, 0.05, 0.3, 0.15});
  const Nucleus n = nucleus(l.data(), l.size(), {1.0, 0.75});
  CHECK(n.ids == std::vector<std::int32_t>{1, 3, 4});  // 0.4 + 0.3 < 0.75 <= + 0.15
  REQUIRE(n.probs.size() == 3);
  CHECK(n.probs[0] == Approx(0.4 / 0.85).epsilon(1e-6));
  CHECK(n.probs[2] == Approx(0.15 / 0.85).epsilon(1e-6));
  CHECK(nucleus(l.data(), l.size(), {1.0, 0.39}).ids == std::vector<std::int32_t>{1});
  CHECK(nucleus(l.data(), l.size(), {1.0, 1.0}).ids.size() == 5);
  // Temperature sharpens (T < 1) or flattens (T > 1) before the cut.
  CHECK(nucleus(l.data(), l.size(), {0.25, 0.75}).ids == std::vector<std::int32_t>{1, 3});
  CHECK(nucleus(l.data(), l.size(), {4.0, 0.75}).ids.size() == 4);
  // Equal probabilities: the lower id first.
  const std::vector<float> flat(4, 1.0f);
  CHECK(nucleus(flat.data(), flat.size(), {1.0, 0.5}).ids == std::vector<std::int32_t>{0, 1});
}

TEST_CASE("sampling: only nucleus tokens, at their probabilities", "[generate]") {
  const auto l = log_probs({0.1, 0.4, 0.05, 0.3, 0.15});
  std::map<std::int32_t, int> count;
  const int n = 20000;
  for (std::int32_t id : draws(l, {1.0, 0.75}, 7, n)) ++count[id];
  CHECK(count.size() == 3);
  CHECK(count.count(0) == 0);
  CHECK(count.count(2) == 0);
  CHECK(count[1] / double(n) == Approx(0.4 / 0.85).margin(0.015));
  CHECK(count[3] / double(n) == Approx(0.3 / 0.85).margin(0.015));
  count.clear();  // top_p 1: every token at its probability
  for (std::int32_t id : draws(l, {1.0, 1.0}, 7, n)) ++count[id];
  CHECK(count[2] / double(n) == Approx(0.05).margin(0.01));
  CHECK(count[1] / double(n) == Approx(0.4).margin(0.015));
}

TEST_CASE("a seed gives the same draws; other seeds and streams others", "[generate]") {
  const std::vector<float> l(50, 0.0f);  // uniform over 50 tokens
  const auto a = draws(l, {1.0, 1.0}, 42, 64);
  CHECK(a == draws(l, {1.0, 1.0}, 42, 64));
  CHECK(a != draws(l, {1.0, 1.0}, 43, 64));
  CHECK(a != draws(l, {1.0, 1.0}, 42, 64, 1));
  // The generator is written out (xoshiro256** from SplitMix64): fixed values.
  Random r(0);
  const std::uint64_t first = r.next();
  CHECK(first == Random(0).next());
  CHECK(first != Random(1).next());
  for (int i = 0; i < 1000; ++i) {
    const double u = r.uniform();
    REQUIRE((u >= 0.0 && u < 1.0));
  }
}

TEST_CASE("generate's flags: defaults and every bad input named", "[generate]") {
  const GenerateOptions o = parse(kGood);
  CHECK(o.sampling.temperature == 0.0);
  CHECK(o.sampling.top_p == 1.0);
  CHECK(o.max_new_tokens == 8);
  CHECK(!o.chat);
#if WIREUP_HAVE_TOKENIZER
  CHECK(parse(with({"--chat", "--temperature", "0.7", "--top_p", "0.9", "--seed", "5"})).chat);
#else  // built without wireup_tokenizer: no chat templates (trainer/generate/CMakeLists.txt)
  CHECK_THROWS_WITH(parse(with({"--chat"})), Contains("built without the tokenizer library"));
#endif
  const auto refused = [](std::vector<std::string> a, const std::string& what) {
    CHECK_THROWS_WITH(parse(std::move(a)), Contains(what));
  };
  refused({"--init_from_hf", "hf", "--prompt", "x", "--max_new_tokens", "4"}, "--tokenizer");
  refused(with({}, true), "pass --prompt TEXT or --prompts FILE");
  refused(with({"--prompts", "p.jsonl"}), "one of --prompt TEXT and --prompts FILE, not both");
  refused(with({"--max_new_tokens", "0"}), "--max_new_tokens 0: expected 1 to");
  refused(with({"--max_new_tokens", "-3"}), "--max_new_tokens -3");
  refused(with({"--temperature", "-0.5"}), "--temperature -0.5: expected 0 (greedy)");
  refused(with({"--temperature", "nan"}), "--temperature");
  refused(with({"--top_p", "0"}), "--top_p 0: expected a number in (0, 1]");
  refused(with({"--top_p", "1.5"}), "--top_p 1.5");
  refused(with({"--resume_from_checkpoint", "ck"}), "exactly one of --init_from_hf");
  refused(with({"--device", "tpu"}), "--device");
  refused(with({"--chat_template", "chatml"}), "--chat_template");
  refused(with({"--num_threads", "-1"}), "--num_threads -1");
}

TEST_CASE("the prompts file: a JSON object with \"prompt\" a line", "[generate]") {
  const auto good =
      temp_file("good.jsonl", "{\"prompt\": \"a\\nb\", \"id\": 1}\n\n{\"prompt\":\"c\"}");
  CHECK(read_prompts_file(good) == std::vector<std::string>{"a\nb", "c"});
  CHECK_THROWS_WITH(read_prompts_file(temp_file("bad.jsonl", "{\"prompt\":\"x\"}\n{oops\n")),
                    Contains("bad.jsonl:2: not valid JSON"));
  CHECK_THROWS_WITH(read_prompts_file(temp_file("num.jsonl", "{\"prompt\": 3}\n")),
                    Contains("num.jsonl:1: expected an object with a string \"prompt\""));
  CHECK_THROWS_WITH(read_prompts_file(temp_file("empty.jsonl", "\n \n")),
                    Contains("no prompt in the file"));
  CHECK_THROWS_WITH(read_prompts_file("/nonexistent/p.jsonl"), Contains("--prompts"));
}

TEST_CASE("the stop rule and the output line", "[generate]") {
  const StopRule stop({128001, -1, 128009, 128001});
  CHECK(stop.ids() == std::vector<int>{128001, 128009});
  CHECK(stop.stops(128009));
  CHECK(!stop.stops(13));
  Completion c;
  c.prompt = "Hi";
  c.text = "A\xE2\x82";  // cut inside a character
  c.prompt_ids = {128000, 13347};
  c.ids = {32, 4};
  c.stop = StopReason::StopToken;
  const auto j = nlohmann::json::parse(completion_json(c, true));
  CHECK(j["prompt"] == "Hi");
  CHECK(j["completion"] == "A\xEF\xBF\xBD");  // U+FFFD
  CHECK(j["tokens"] == 2);
  CHECK(j["stop"] == "stop_token");
  CHECK(j["prompt_ids"] == nlohmann::json({128000, 13347}));
  CHECK(j["ids"] == nlohmann::json({32, 4}));
  CHECK(!nlohmann::json::parse(completion_json(c, false)).contains("ids"));
  CHECK(generate_summary(2, 30, 1.5) ==
        "[generate] prompts=2 tokens=30 seconds=1.500 tokens_per_s=20.0");
}
