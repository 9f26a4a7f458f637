#include <CLI/CLI.hpp>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "config/compute_flags.hpp"
#include "config/metrics.hpp"
#include "config/schedule.hpp"
#include "config/train_options.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;
using wireup::InputError;

namespace {
TrainOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "wireup-train");
  TrainOptions o;
  REQUIRE(parse_train_options(static_cast<int>(args.size()), args.data(), o));
  return o;
}
}  // namespace

TEST_CASE("presets match the published shapes") {
  const auto l2 = preset("llama2-7b");
  CHECK(l2.hidden == 4096);
  CHECK(l2.intermediate == 11008);
  CHECK(total_params(l2) == 6738415616);  // Llama 2 7B
  const auto l3 = preset("llama3-8b");
  CHECK(l3.kv_heads == 8);
  CHECK(l3.rope_theta == 500000.0);
  CHECK(total_params(l3) == 8030261248);  // Llama 3 8B
  CHECK(total_params(preset("llama2-70b")) == 68976648192);
  CHECK_THROWS_WITH(preset("gpt2"), Catch::Contains("llama3-8b"));
}

TEST_CASE("the reference FSDP flags parse, presets are overridable") {
  const auto o = parse({"--preset", "llama2-7b", "--max_context_width", "2048", "--num_layers", "2",
                        "--llama_intermediate_size", "512", "--bf16", "0",
                        "--activation_checkpointing", "1", "--sharding_strategy", "HYBRID_SHARD",
                        "--train_batch_size", "2", "--lr", "1e-4", "--synthetic_data"});
  CHECK(o.model.context == 2048);
  CHECK(o.model.layers == 2);
  CHECK(o.model.intermediate == 512);
  CHECK(o.model.hidden == 4096);  // from the preset
  CHECK(o.compute.activation_checkpointing);
  CHECK(o.compute.sharding == Sharding::Hybrid);
  CHECK(o.lr == 1e-4);
}

TEST_CASE("bad flags and shapes are clear errors") {
  TrainOptions o;
  const char* unknown[] = {"wireup-train", "--hiden_width", "5"};
  CHECK_THROWS_WITH(parse_train_options(3, unknown, o), Catch::Contains("hiden_width"));
  const char* bad_num[] = {"wireup-train", "--num_layers", "many"};
  CHECK_THROWS_AS(parse_train_options(3, bad_num, o), InputError);

  auto m = preset("tiny");
  m.hidden = 65;
  CHECK_THROWS_WITH(check_model_config(m), Catch::Contains("not divisible by --num_heads"));
  m = preset("tiny");
  m.kv_heads = 3;
  CHECK_THROWS_WITH(check_model_config(m), Catch::Contains("--num_key_value_heads"));

  auto t = parse({"--preset", "tiny"});
  CHECK_THROWS_WITH(check_train_options(t, 1, 1), Catch::Contains("--dataset"));
  t.synthetic_data = true;
  CHECK_NOTHROW(check_train_options(t, 4, 2));
  t.compute.sharding = Sharding::Hybrid;
  CHECK_THROWS_WITH(check_train_options(t, 3, 2), Catch::Contains("hybrid"));
}

TEST_CASE("nonsense values and contradicting flags are refused") {
  auto t = parse({"--preset", "tiny", "--synthetic_data", "--num_threads", "-1"});
  CHECK_THROWS_WITH(check_train_options(t, 1, 1), Catch::Contains("--num_threads -1: expected 0"));
  t = parse({"--preset", "tiny", "--synthetic_data", "--num_threads", "8"});
  CHECK_NOTHROW(check_train_options(t, 1, 1));
  CHECK(t.compute.threads == 8);
  t = parse({"--preset", "tiny", "--synthetic_data", "--dataset", "/data/corpus"});
  CHECK_THROWS_WITH(check_train_options(t, 1, 1), Catch::Contains("exclude each other"));
  t = parse({"--preset", "tiny", "--synthetic_data", "--data_readahead", "4"});
  CHECK(t.data.readahead == 4);
  CHECK_NOTHROW(check_train_options(t, 1, 1));
  TrainOptions bad;
  const char* readahead[] = {"wireup-train", "--synthetic_data", "--data_readahead", "-1"};
  CHECK_THROWS_WITH(parse_train_options(4, readahead, bad), Catch::Contains("--data_readahead -1"));
  t = parse({"--preset", "tiny", "--synthetic_data", "--stop_after_step", "-5"});
  CHECK_THROWS_WITH(check_train_options(t, 1, 1), Catch::Contains("--stop_after_step"));
  t = parse({"--preset", "tiny", "--synthetic_data", "--start_fresh_if_unloadable"});
  CHECK_THROWS_WITH(check_train_options(t, 1, 1), Catch::Contains("auto only"));
  t = parse({"--preset", "tiny", "--synthetic_data", "--checkpoint_dir", "/ck",
             "--resume_from_checkpoint", "auto", "--start_fresh_if_unloadable"});
  CHECK(t.checkpoint.start_fresh_if_unloadable);
  CHECK_NOTHROW(check_train_options(t, 1, 1));
}

TEST_CASE("warmup then cosine") {
  CHECK(learning_rate(1.0, 0.1, 10, 110, 5) == Approx(0.5));
  CHECK(learning_rate(1.0, 0.1, 10, 110, 10) == Approx(1.0));
  CHECK(learning_rate(1.0, 0.1, 10, 110, 60) == Approx(0.55));
  CHECK(learning_rate(1.0, 0.1, 10, 110, 110) == Approx(0.1));
  CHECK(learning_rate(1.0, 0.1, 0, 100, 1000) == Approx(0.1));
}

TEST_CASE("metric lines are stable and regex friendly") {
  StepMetrics m{12, 100, 3.25, 3e-4, 1.5, 680.5, 0.61, 1.5, 123.4, 0.0021};
  const auto line = format_step_line(step_record(m));
  CHECK(line ==
        "[train] step=12/100 loss=3.250000 lr=3.000e-04 grad_norm=1.5000 "
        "tokens_per_s=680.5 mfu=0.6100 step_time_s=1.500 peak_mem_mib=123.4 "
        "data_wait_s=0.0021");
  std::smatch match;  // a SageMaker metric definition
  REQUIRE(std::regex_search(line, match, std::regex("loss=([0-9.]+)")));
  CHECK(match[1] == "3.250000");
  CHECK(format_step_json(step_record(m)).find("\"loss\":3.25") != std::string::npos);
  CHECK(format_step_json(step_record(m)).find("\"data_wait_s\":0.0021}") != std::string::npos);
  // The JSONL object holds each figure as the double it is (the line rounds it), and
  // nothing JSON cannot read.
  m.loss = 3.2512345678912345;
  m.tokens_per_s = std::numeric_limits<double>::infinity();
  const auto j = nlohmann::json::parse(format_step_json(step_record(m)));
  CHECK(j["type"] == "train");
  CHECK(j["step"] == 12);
  CHECK(j["loss"].get<double>() == m.loss);
  CHECK(j["tokens_per_s"].is_null());
  CHECK(format_validation_line(20, 2.0) == "[val] step=20 val_loss=2.000000 val_ppl=7.389");
}

TEST_CASE("DPO's figures: short keys in the lines, TRL's names in JSON and TensorBoard") {
  preference::DpoMetrics d;
  d.pairs = 64;
  d.loss = 0.5;
  d.reward_accuracy = 0.75;
  d.reward_margin = 0.125;
  d.chosen_reward = 0.0625;
  d.rejected_reward = -0.0625;
  d.chosen_logps = -12.5;
  d.rejected_logps = -20.25;
  StepMetrics m{12, 100, 0.5, 3e-4, 1.5, 680.5, 0.61, 1.5, 123.4, 0.0021};
  m.dpo = d;
  const StepRecord r = step_record(m);
  CHECK(format_step_line(r) ==
        "[train] step=12/100 loss=0.500000 reward_accuracy=0.750000 reward_margin=0.125000 "
        "chosen_reward=0.062500 rejected_reward=-0.062500 lr=3.000e-04 grad_norm=1.5000 "
        "tokens_per_s=680.5 mfu=0.6100 step_time_s=1.500 peak_mem_mib=123.4 "
        "data_wait_s=0.0021");
  const auto j = nlohmann::json::parse(format_step_json(r));
  CHECK(j["loss"].get<double>() == 0.5);
  CHECK(j["rewards/accuracies"].get<double>() == 0.75);
  CHECK(j["rewards/margins"].get<double>() == 0.125);
  CHECK(j["rewards/chosen"].get<double>() == 0.0625);
  CHECK(j["rewards/rejected"].get<double>() == -0.0625);
  CHECK(j["logps/chosen"].get<double>() == -12.5);
  CHECK(j["logps/rejected"].get<double>() == -20.25);
  CHECK_FALSE(j.contains("chosen_reward"));
  std::vector<std::string> tags;
  for (const StepFigure& f : r.figures) tags.push_back(f.tag);
  CHECK(std::count(tags.begin(), tags.end(), "train/rewards/chosen") == 1);
  CHECK(std::count(tags.begin(), tags.end(), "train/logps/rejected") == 1);
  // Without pairs, none of them.
  m.dpo.reset();
  CHECK(format_step_json(step_record(m)).find("rewards/") == std::string::npos);

  CHECK(format_validation_line(20, 0.5, d) ==
        "[val] step=20 val_loss=0.500000 val_reward_accuracy=0.750000 "
        "val_reward_margin=0.125000 val_chosen_reward=0.062500 val_rejected_reward=-0.062500");
  const auto v = nlohmann::json::parse(format_validation_json(20, 0.5, d));
  CHECK(v["type"] == "validation");
  CHECK(v["val_loss"].get<double>() == 0.5);
  CHECK(v["val_rewards/margins"].get<double>() == 0.125);
  CHECK(v["val_logps/chosen"].get<double>() == -12.5);
  CHECK(nlohmann::json::parse(format_validation_json(20, 2.0)) ==
        nlohmann::json::parse(R"({"type":"validation","step":20,"val_loss":2.0})"));

  EvalResult e;
  e.dpo = d;
  e.tokens = 640;
  e.windows = 10;
  CHECK(format_eval_line(e) ==
        "[eval] dpo_loss=0.500000 reward_accuracy=0.750000 reward_margin=0.125000 "
        "chosen_reward=0.062500 rejected_reward=-0.062500 pairs=64");
  const auto ej = nlohmann::json::parse(format_eval_json(e));
  CHECK(ej["dpo_loss"].get<double>() == 0.5);
  CHECK(ej["rewards/accuracies"].get<double>() == 0.75);
  CHECK(ej["pairs"] == 64);
  CHECK_FALSE(ej.contains("ppl"));
}

TEST_CASE("FLOPs per token") {
  const auto m = preset("small");
  const double n = static_cast<double>(total_params(m) - embedding_params(m));
  CHECK(flops_per_token(m) == Approx(6 * n + 12.0 * 4 * 512 * 256));
}

TEST_CASE("Llama 3.1 and 3.2 presets have the published shapes") {
  const auto l31 = preset("llama3.1-8b");
  CHECK(l31.context == 131072);
  CHECK(l31.vocab == 128256);
  CHECK(l31.rope_theta == 500000.0);
  CHECK(rope_scaling_str(l31.rope_scaling) == "llama3:8,1,4,8192");
  CHECK_FALSE(l31.tied);
  CHECK(total_params(l31) == 8030261248);  // the same weights as Llama 3 8B
  CHECK(total_params(preset("llama3.1-70b")) == 70553706496);
  const auto l1b = preset("llama3.2-1b");
  CHECK((l1b.hidden == 2048 && l1b.layers == 16 && l1b.heads == 32 && l1b.kv_heads == 8 &&
         l1b.intermediate == 8192));
  CHECK(l1b.tied);
  CHECK(rope_scaling_str(l1b.rope_scaling) == "llama3:32,1,4,8192");
  CHECK(head_params(l1b) == 2048);                           // the final norm only
  CHECK(total_params(l1b) == 1235814400);                    // "1.24B": the embedding counted once
  CHECK(total_params(preset("llama3.2-3b")) == 3212749824);  // "3.21B"
  CHECK((l1b.bos_token_id == 128000 && l1b.eos_token_id == 128001));
  // Tying changes the count, not the FLOPs: the output projection is still a GEMM.
  auto untied = l1b;
  untied.tied = false;
  CHECK(total_params(untied) == total_params(l1b) + 128256LL * 2048);
  CHECK(flops_per_token(untied) == flops_per_token(l1b));
}

TEST_CASE("llama3 rope scaling keeps high, divides low and blends the band between") {
  ModelConfig m = preset("tiny");  // head_dim 16
  m.rope_theta = 500000.0;
  const auto plain = rope_inv_freq(m);
  REQUIRE(plain.size() == 8);
  CHECK(plain[1] == Approx(0.19392274474868576).epsilon(1e-14));
  m.rope_scaling = parse_rope_scaling("llama3:8,1,4,64");
  const auto scaled = rope_inv_freq(m);
  // Wavelengths 6.3 (< 64/4: kept), 32.4 (between: blended), >= 167 (> 64/1: / 8).
  // Expected values: Hugging Face's _compute_llama3_parameters evaluated in double.
  CHECK(scaled[0] == plain[0]);
  CHECK(scaled[1] == Approx(0.0794030091792082).epsilon(1e-13));
  CHECK(scaled[2] == Approx(0.004700753866357992).epsilon(1e-13));
  CHECK(scaled[7] == Approx(1.2891731721515574e-06).epsilon(1e-13));
  for (std::size_t i = 2; i < 8; ++i) CHECK(scaled[i] == Approx(plain[i] / 8).epsilon(1e-14));
}

TEST_CASE(
    "--rope_scaling and --tie_word_embeddings parse, override presets, bad values are named") {
  auto o = parse({"--preset", "tiny", "--rope_scaling", "llama3:32,1,4,8192",
                  "--tie_word_embeddings", "1", "--synthetic_data"});
  CHECK(o.model.tied);
  CHECK(o.model.rope_scaling.factor == 32.0);
  CHECK(o.model.rope_scaling.original_context == 8192);
  o = parse({"--preset", "llama3.2-1b", "--rope_scaling", "none", "--tie_word_embeddings", "0"});
  CHECK_FALSE(o.model.rope_scaling.enabled());
  CHECK_FALSE(o.model.tied);
  for (const char* bad :
       {"yarn:4,1,4,8192", "llama3:8,1,4", "llama3:8,1,4,8192,1", "llama3:x", "llama3:8,1,4,81.5"})
    CHECK_THROWS_WITH(parse_rope_scaling(bad),
                      Catch::Contains(std::string("--rope_scaling ") + bad));
  auto m = preset("tiny");
  m.rope_scaling = parse_rope_scaling("llama3:8,4,1,8192");  // low above high
  CHECK_THROWS_WITH(check_model_config(m), Catch::Contains("low_freq_factor < high_freq_factor"));
  TrainOptions t;
  const char* bad_tie[] = {"wireup-train", "--tie_word_embeddings", "2"};
  CHECK_THROWS_AS(parse_train_options(3, bad_tie, t), InputError);
}

TEST_CASE("MFU against a measured or given peak") {
  // 1000 tokens/s * 1e9 FLOPs/token over 2 ranks of 1 TFLOP/s: 0.5
  CHECK(model_flops_utilization(1000, 1e9, 1e12, 2) == Approx(0.5));
  CHECK(model_flops_utilization(1000, 1e9, 0, 2) == 0);
  CHECK(format_peak_line(2.5e11, "measured: 1024^3 fp32 GEMM probe, 0.25 s") ==
        "[mfu] peak=0.25 TFLOP/s per rank (measured: 1024^3 fp32 GEMM probe, 0.25 s)");
  CHECK_FALSE(parse({"--synthetic_data"}).peak_tflops);
  CHECK(*parse({"--synthetic_data", "--peak_tflops", "989"}).peak_tflops == 989.0);
  for (const char* bad : {"0", "-3", "inf"}) {
    const auto o = parse({"--synthetic_data", "--peak_tflops", bad});
    CHECK_THROWS_WITH(
        check_train_options(o, 1, 1),
        Catch::Contains(std::string("--peak_tflops ")) && Catch::Contains("a positive number"));
  }
}

TEST_CASE("eval line and JSON") {
  EvalResult r;
  r.loss = 2.0;
  r.tokens = 640;
  r.windows = 10;
  r.context = 64;
  r.split = "validation";
  r.data = "d/manifest.json";
  r.weights = "hf:m";
  CHECK(format_eval_line(r) == "[eval] loss=2.000000 ppl=7.3891 tokens=640 windows=10");
  const auto j = format_eval_json(r);
  CHECK(j.rfind("{\"type\":\"eval\",\"loss\":2.0,", 0) == 0);
  CHECK(j.find("\"tokens\":640,\"windows\":10,\"context\":64,\"split\":\"validation\"") !=
        std::string::npos);
  CHECK(j.back() == '\n');
}

TEST_CASE("config and summary lines") {
  RunConfig c;
  c.preset = "small";
  c.params = 19796480;
  c.params_per_rank = 9898240;
  c.state_bytes_per_rank = 158371840;
  c.world = 4;
  c.local_world = 2;
  c.sharding = "hybrid";
  c.model = preset("small");
  c.model.context = 256;
  c.batch_per_rank = 4;
  c.grad_accum = 2;
  c.max_steps = 100;
  c.lr = 3e-4;
  c.threads = 1;
  c.activation_checkpointing = true;
  c.blas = "/usr/lib/libblas.so.3";
  c.gemm = "onednn";
  const auto& m = c.model;
  CHECK(format_config_line(c) ==
        "[config] preset=small params=19796480 params_per_rank=9898240 "
        "state_bytes_per_rank=158371840 world=4 local_world=2 nodes=2 sharding=hybrid layers=" +
            std::to_string(m.layers) + " hidden=" + std::to_string(m.hidden) +
            " heads=" + std::to_string(m.heads) + " kv_heads=" + std::to_string(m.kv_heads) +
            " intermediate=" + std::to_string(m.intermediate) +
            " vocab=" + std::to_string(m.vocab) +
            " context=256 batch_per_rank=4 grad_accum=2 global_batch_tokens=8192 max_steps=100 "
            "lr=0.0003 threads=1 activation_checkpointing=1 blas=/usr/lib/libblas.so.3 "
            "gemm=onednn");

  RunSummary s;
  s.steps = 10;
  s.first_loss = 9.1;
  s.final_loss = 7.25;
  s.tokens = 40960;
  s.step_time_s = 8.0;
  s.wall_s = 9.5;
  s.peak_mem_mib = 812.25;
  s.checkpoint_saves = 2;
  s.checkpoint_stall_s = 0.125;
  s.data_wait_s = 0.04;
  CHECK(format_summary_line(s) ==
        "[summary] steps=10 first_loss=9.100000 final_loss=7.250000 tokens=40960 "
        "mean_tokens_per_s=5120.0 wall_s=9.50 peak_mem_mib=812.2 checkpoint_saves=2 "
        "checkpoint_stall_s=0.125 data_wait_s=0.040 data_wait_pct=0.500");
  s.step_time_s = 0;  // no step ran: no rate, no share
  CHECK(format_summary_line(s).find("mean_tokens_per_s=0.0 ") != std::string::npos);
  CHECK(format_summary_line(s).find("data_wait_pct=0.000") != std::string::npos);
}

TEST_CASE("--profile_steps A:B and the straggler flags: good values kept, bad ones named") {
  auto o = parse({"--synthetic_data", "--profile_steps", "3:5", "--straggler_ratio", "1.5",
                  "--straggler_steps", "4", "--profile_dir", "/tmp/x"});
  CHECK(o.profile_first == 3);
  CHECK(o.profile_last == 5);
  CHECK(o.straggler_ratio == 1.5);
  CHECK(o.straggler_steps == 4);
  CHECK(o.profile_dir == "/tmp/x");
  CHECK_NOTHROW(check_train_options(o, 1, 1));
  const auto d = parse({"--synthetic_data"});
  CHECK(d.profile_last < d.profile_first);  // off
  CHECK(d.straggler_ratio == 1.3);
  CHECK(d.straggler_steps == 10);
  CHECK(parse_profile_steps("7:7") == std::pair<std::int64_t, std::int64_t>{7, 7});
  for (const char* bad : {"", "5", "5:", ":5", "0:3", "5:3", "a:b", "-1:3", "1:2:3", "3 :4",
                          "1:99999999999999999999"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_profile_steps(bad),
                      Catch::Contains("--profile_steps") && Catch::Contains("expected A:B"));
  }
  TrainOptions past = d;
  past.max_steps = 10;
  past.profile_first = 11;
  past.profile_last = 12;
  CHECK_THROWS_WITH(check_train_options(past, 1, 1), Catch::Contains("after --max_steps 10"));
  for (const double ratio : {1.0, 0.5, -2.0, 1e9, std::nan("")}) {
    TrainOptions t = d;
    t.straggler_ratio = ratio;
    CHECK_THROWS_WITH(check_train_options(t, 1, 1), Catch::Contains("--straggler_ratio"));
  }
  TrainOptions zero = d;
  zero.straggler_steps = 0;
  CHECK_THROWS_WITH(check_train_options(zero, 1, 1), Catch::Contains("--straggler_steps 0"));
}

TEST_CASE("the [train] line and JSONL carry the compute spread when it is measured") {
  StepMetrics m;
  m.step = 3;
  m.max_steps = 10;
  CHECK(format_step_line(step_record(m)).find("slowest_rank") == std::string::npos);
  m.slowest_rank = 2;
  m.compute_min_s = 0.1;
  m.compute_median_s = 0.2;
  m.compute_max_s = 0.5;
  CHECK_THAT(format_step_line(step_record(m)),
             Catch::EndsWith(" slowest_rank=2 compute_min_s=0.1000 compute_median_s=0.2000 "
                             "compute_max_s=0.5000"));
  CHECK_THAT(format_step_json(step_record(m)),
             Catch::EndsWith(",\"slowest_rank\":2,\"compute_min_s\":0.1,\"compute_median_s\":0.2,"
                             "\"compute_max_s\":0.5}"));
}

TEST_CASE("the compute flags are declared once, each subcommand taking its own") {
  // generate takes --device and --num_threads, eval adds --bf16 and --sharding_strategy,
  // train adds --float8, --activation_checkpointing and --prefetch.
  const auto parse_with = [](ComputeFlags which, std::vector<const char*> args) {
    CLI::App app;
    ComputeChoice c;
    add_compute_flags(app, c, which);
    args.insert(args.begin(), "x");
    app.parse(static_cast<int>(args.size()), args.data());
    return c;
  };
  const auto decode = parse_with(ComputeFlags::Decode, {"--device", "cuda", "--num_threads", "3"});
  CHECK(decode.device == "cuda");
  CHECK(decode.threads == 3);
  CHECK_THROWS(parse_with(ComputeFlags::Decode, {"--bf16", "1"}));
  CHECK_THROWS(parse_with(ComputeFlags::Evaluate, {"--prefetch", "0"}));
  const auto eval =
      parse_with(ComputeFlags::Evaluate, {"--bf16", "1", "--sharding_strategy", "no_shard"});
  CHECK(eval.bf16);
  CHECK(eval.sharding == Sharding::None);
  const auto train =
      parse_with(ComputeFlags::Train,
                 {"--prefetch", "0", "--activation_checkpointing", "2", "--float8", "rowwise"});
  CHECK_FALSE(train.prefetch);
  CHECK(train.activation_checkpointing);  // any integer but 0, as before
  CHECK(train.float8 == Float8Recipe::Rowwise);
  CHECK_THROWS_AS(parse_with(ComputeFlags::Train, {"--float8", "fp4"}), InputError);
  CHECK_THROWS(parse_with(ComputeFlags::Decode, {"--device", "tpu"}));
  ComputeChoice c;
  c.threads = 5000;
  CHECK_THROWS_WITH(check_compute_choice(c), Catch::Contains("--num_threads 5000"));
}

TEST_CASE("LoRA's targets are the ones the model's family offers") {
  const std::vector<lora::Target> all{lora::kAllTargets.begin(), lora::kAllTargets.end()};
  for (const auto& name : family_names()) {
    ModelConfig m;
    m.family = name;
    CHECK_NOTHROW(check_lora_targets(m, all, "--lora_targets"));
  }
  // A family that offers fewer (as a mixture of experts may): the others refused by name.
  ModelFamily narrow = model_family("llama");
  narrow.lora_targets = {lora::Target::Q, lora::Target::V};
  CHECK_NOTHROW(check_lora_targets(narrow, {lora::Target::V}, "--lora_targets"));
  CHECK_THROWS_WITH(
      check_lora_targets(narrow, {lora::Target::Q, lora::Target::Gate}, "--lora_targets"),
      "--lora_targets: gate (gate_proj) is not a projection the Llama family offers LoRA on "
      "(q,v)");
}

TEST_CASE("flags bind straight to the options: preset, switches, the shape flags") {
  const auto plain = parse({"--synthetic_data"});
  CHECK(plain.preset == "small");
  CHECK_FALSE(plain.preset_given);
  CHECK(plain.document_masking);
  CHECK_FALSE(plain.checkpoint.async);
  const auto o = parse({"--synthetic_data", "--preset", "tiny", "--document_masking", "0",
                        "--async_checkpointing", "1", "--num_layers", "3", "--rope_theta", "5e5"});
  CHECK(o.preset == "tiny");
  CHECK(o.preset_given);
  CHECK_FALSE(o.document_masking);
  CHECK(o.checkpoint.async);
  CHECK(o.shape_flags.layers == 3);
  CHECK(o.model.layers == 3);
  CHECK(o.model.hidden == preset("tiny").hidden);
  CHECK(o.model.rope_theta == 5e5);
  TrainOptions t;
  const char* masking[] = {"wireup-train", "--document_masking", "2"};
  CHECK_THROWS_WITH(parse_train_options(3, masking, t), Catch::Contains("--document_masking"));
  const char* gpt2[] = {"wireup-train", "--preset", "gpt2"};
  CHECK_THROWS_WITH(parse_train_options(3, gpt2, t), Catch::Contains("--preset"));
}
