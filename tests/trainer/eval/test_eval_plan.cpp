#include <catch2/catch.hpp>
#include <set>

#include "eval/eval_options.hpp"
#include "eval/eval_plan.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;
using wireup::InputError;

namespace {
EvalOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "eval");
  EvalOptions o;
  REQUIRE(parse_eval_options(static_cast<int>(args.size()), args.data(), o));
  return o;
}
}  // namespace

TEST_CASE("eval windows: window i is tokens i*T .. i*T+T, stride T") {
  const EvalPlan p = plan_eval(1000, 64, 10, 4, 1, "data");
  CHECK(p.tokens_per_window() == 65);
  CHECK(p.first_token(0) == 0);
  CHECK(p.first_token(3) == 192);
  CHECK(p.targets() == 640);
  // (1000 - 1) / 64 = 15 windows fit; the last ends at token 15*64 = 960 < 1000.
  CHECK(windows_that_fit(1000, 64) == 15);
  CHECK(windows_that_fit(961, 64) == 15);  // exactly: window 14 is tokens 896..960
  CHECK(windows_that_fit(960, 64) == 14);
  CHECK(windows_that_fit(0, 64) == 0);
  CHECK(windows_that_fit(1, 64) == 0);
  CHECK_NOTHROW(plan_eval(961, 64, 15, 1, 1, "data"));
}

TEST_CASE(
    "eval chunks: every window once, chunk c on rank c % world, the same chunks at any world") {
  for (std::uint64_t world : {1, 2, 3, 5}) {
    for (std::uint64_t batch : {1, 3, 4}) {
      const EvalPlan p = plan_eval(100000, 8, 11, batch, world, "data");
      CHECK(p.chunks() == (11 + batch - 1) / batch);
      std::multiset<std::uint64_t> seen;
      std::set<std::uint64_t> chunks;
      for (std::uint64_t r = 0; r < world; ++r) {
        for (std::uint64_t f = 0; f < p.forwards_per_rank(); ++f) {
          const auto c = p.chunk_of(r, f);
          if (!c) continue;
          CHECK(*c % world == r);
          chunks.insert(*c);
          for (std::uint64_t k = 0; k < p.windows_in(*c); ++k) seen.insert(p.first_window(*c) + k);
        }
      }
      CHECK(chunks.size() == p.chunks());
      CHECK(seen.size() == 11);
      CHECK(std::set<std::uint64_t>(seen.begin(), seen.end()).size() == 11);
      CHECK(*seen.rbegin() == 10);
    }
  }
  const EvalPlan p =
      plan_eval(100000, 8, 11, 4, 2, "data");  // chunks 4 4 3: rank 0 {0, 2}, rank 1 {1}
  CHECK(p.forwards_per_rank() == 2);
  CHECK(p.chunk_of(0, 1) == 2u);
  CHECK(p.windows_in(2) == 3);
  CHECK_FALSE(p.chunk_of(1, 1));  // a padding pass keeps rank 1's gathers in step
  CHECK_FALSE(p.chunk_of(2, 0));  // no such rank
}

TEST_CASE("eval loss: the chunk sums over all targets, in chunk order") {
  const EvalPlan p = plan_eval(100000, 10, 5, 2, 2, "data");  // chunks of 2, 2, 1 windows
  // mean losses 1, 2 and 4 -> sums 1*20, 2*20, 4*10 over 50 targets
  CHECK(mean_eval_loss(p, {20.0, 40.0, 40.0}) == Approx(2.0));
  CHECK_THROWS_AS(mean_eval_loss(p, {20.0, 40.0}), std::logic_error);
}

TEST_CASE("eval: too few tokens, zero windows, zero context are clear errors") {
  CHECK_THROWS_WITH(plan_eval(1000, 64, 16, 4, 1, "D/manifest.json (validation split)"),
                    Catch::Contains("D/manifest.json (validation split): 1000 tokens hold 15 "
                                    "windows of 65 tokens") &&
                        Catch::Contains("--eval_batches asks for 16") &&
                        Catch::Contains("pass --eval_batches 15 or less"));
  CHECK_THROWS_WITH(plan_eval(10, 64, 1, 4, 1, "D"),
                    Catch::Contains("hold 0 windows") && Catch::Contains("shorter context"));
  CHECK_THROWS_WITH(plan_eval(1000, 64, 0, 4, 1, "D"), Catch::Contains("--eval_batches 0"));
  CHECK_THROWS_WITH(plan_eval(1000, 0, 1, 4, 1, "D"), Catch::Contains("--max_context_width 0"));
  CHECK_THROWS_WITH(plan_eval(1000, 64, 1, 0, 1, "D"), Catch::Contains("--eval_batch_size 0"));
  CHECK_THROWS_WITH(plan_eval(UINT64_MAX, UINT64_MAX / 2, 4, 1, 1, "D"),
                    Catch::Contains("too many tokens"));
}

TEST_CASE("eval flags") {
  const auto o = parse(
      {"--init_from_hf", "hf", "--data", "d", "--max_context_width", "128", "--eval_batches", "8"});
  CHECK(o.split == "validation");
  CHECK(o.context == 128);
  CHECK(o.eval_batches == 8);
  CHECK(o.eval_batch_size == 4);
  CHECK(parse({"--resume_from_checkpoint", "ck", "--data", "d", "--max_context_width", "8",
               "--eval_batches", "1", "--split", "train"})
            .split == "train");
  auto bad = [](std::vector<const char*> a) {
    a.insert(a.begin(), "eval");
    EvalOptions e;
    parse_eval_options(static_cast<int>(a.size()), a.data(), e);
  };
  CHECK_THROWS_WITH(bad({"--init_from_hf", "h", "--data", "d", "--max_context_width", "8",
                         "--eval_batches", "0"}),
                    Catch::Contains("--eval_batches 0: expected at least 1"));
  CHECK_THROWS_WITH(bad({"--data", "d", "--max_context_width", "8", "--eval_batches", "1"}),
                    Catch::Contains("exactly one of --init_from_hf"));
  CHECK_THROWS_WITH(bad({"--init_from_hf", "h", "--resume_from_checkpoint", "c", "--data", "d",
                         "--max_context_width", "8", "--eval_batches", "1"}),
                    Catch::Contains("exactly one of --init_from_hf"));
  CHECK_THROWS_WITH(bad({"--init_from_hf", "h", "--data", "d", "--max_context_width", "8",
                         "--eval_batches", "1", "--split", "test"}),
                    Catch::Contains("--split"));
  CHECK_THROWS_WITH(bad({"--init_from_hf", "h", "--data", "d", "--eval_batches", "1"}),
                    Catch::Contains("--max_context_width"));
}

TEST_CASE("eval reads a Hugging Face config.json's shapes") {
  const auto m = model_config_from_hf_config(
      R"({"hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512,
          "rope_theta": 500000.0, "rms_norm_eps": 1e-5})",
      "c.json");
  CHECK(m.hidden == 64);
  CHECK(m.intermediate == 176);
  CHECK(m.layers == 2);
  CHECK(m.heads == 4);
  CHECK(m.kv_heads == 2);
  CHECK(m.vocab == 512);
  CHECK(m.rope_theta == 500000.0);
  CHECK(m.norm_eps == 1e-5);
  const auto mha = model_config_from_hf_config(
      R"({"hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
          "num_attention_heads": 4, "vocab_size": 512})",
      "c.json");
  CHECK(mha.kv_heads == 4);  // HF's default: no GQA
  CHECK(mha.rope_theta == 10000.0);
  CHECK(mha.norm_eps == 1e-6);
  CHECK_THROWS_WITH(model_config_from_hf_config(R"({"hidden_size": 64})", "c.json"),
                    Catch::Contains("c.json: intermediate_size is missing"));
  CHECK_THROWS_WITH(model_config_from_hf_config("{", "c.json"),
                    Catch::Contains("c.json: not JSON"));
}

TEST_CASE("an HF config.json's rope scaling, tying and bos/eos reach eval's model") {
  const auto m = model_config_from_hf_config(
      R"({"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128256,
          "rope_theta": 500000.0, "tie_word_embeddings": true, "bos_token_id": 128000,
          "eos_token_id": 128001,
          "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                           "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})",
      "config.json");
  CHECK(m.tied);
  CHECK(rope_scaling_str(m.rope_scaling) == "llama3:32,1,4,8192");
  CHECK((m.bos_token_id == 128000 && m.eos_token_id == 128001));
}
