// wireup-train: a fully sharded Llama trainer. Read top to bottom: flags and
// world layout (checked before any collective), groups, model, data, loop.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

#include "checkpoint/checkpointer.hpp"
#include "checkpoint/hf_export.hpp"
#include "comm/world_layout.hpp"
#include "config/metrics.hpp"
#include "config/schedule.hpp"
#include "config/train_options.hpp"
#include "fsdp/fsdp_llama.hpp"
#include "main/eval_main.hpp"
#include "main/run_setup.hpp"
#include "model/batch_tokens.hpp"
#include "model/cpu_gemm.hpp"
#include "optim/sharded_adamw.hpp"
#include "runtime/blas_check.hpp"
#include "runtime/stop_signals.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/error.hpp"

namespace wt = wireup::train;
namespace wd = wireup::data;

namespace {

// Batches for one rank: from wireup-prep shards, or deterministic random
// tokens (the same global batch for every world size: rank r takes rows r*B..).
class Batches {
 public:
  Batches(const wt::TrainOptions& o, const wt::WorldLayout& w, wd::Split split, std::int64_t batch)
      : o_(o),
        w_(w),
        batch_(batch),
        accum_(split == wd::Split::Train ? o.grad_accum : 1),
        seed_(split == wd::Split::Train ? o.seed : o.seed ^ 0x5eedf00dULL) {
    if (o.synthetic_data) return;
    wd::LoaderConfig c;
    c.manifest = o.dataset;
    c.split = split;
    c.context = static_cast<std::uint64_t>(o.model.context);
    c.batch_size = static_cast<std::uint64_t>(batch);
    c.rank = static_cast<std::uint64_t>(w.rank);
    c.world_size = static_cast<std::uint64_t>(w.world);
    c.seed = o.seed;
    c.shuffle = split == wd::Split::Train;
    c.readahead = static_cast<std::size_t>(o.data_readahead);
    c.epochs = split == wd::Split::Train ? static_cast<std::uint64_t>(o.epochs) : 0;
    loader_ = std::make_unique<wd::TokenLoader>(c);
    const auto vocab = loader_->manifest().tokenizer.vocab_size;
    if (vocab > static_cast<std::uint64_t>(o.model.vocab))
      throw wireup::InputError("--vocab_size " + std::to_string(o.model.vocab) +
                               " is smaller than the vocabulary of " + o.dataset + " (" +
                               std::to_string(vocab) + " tokens): pass --vocab_size " +
                               std::to_string(vocab) + " or more");
  }

  // [B, T+1] int64, or nullopt when the data is exhausted.
  std::optional<at::Tensor> next() {
    if (!loader_) return synthetic();
    if (!loader_->next(batch_buf_)) return std::nullopt;
    return wt::stored_tokens_to_long(batch_buf_.data(), static_cast<std::int64_t>(batch_buf_.rows),
                                     static_cast<std::int64_t>(batch_buf_.cols),
                                     batch_buf_.token_bytes);
  }
  // Where the next batch comes from, for the checkpoint; seek() restores it.
  std::string position() const {
    if (loader_) return wd::position_to_json(loader_->position());
    return "synthetic:" + std::to_string(draws_);
  }
  // Back to the first batch (validation: the same batches every time, and
  // the shards' checksums verified once, when the loader opened).
  void rewind() {
    draws_ = 0;
    if (loader_) loader_->seek(wd::Position{o_.seed, 0, 0, 0});
  }
  void seek(const std::string& p) {
    if (!loader_) {
      if (p.rfind("synthetic:", 0) != 0)
        throw wireup::InputError("checkpoint data position " + p + " is not for --synthetic_data");
      draws_ = std::stoll(p.substr(10));
      if (draws_ % accum_ != 0)  // rebuild the step's global batch on the next draw
        throw wireup::InputError("checkpoint taken mid-accumulation: " + p);
      return;
    }
    loader_->seek(wd::position_from_json(p, "checkpoint data position"));
  }

 private:
  // One global batch per optimizer step, [accum * world * B, T+1]; micro-step
  // m of rank r takes rows (m*world + r)*B...: the same tokens, in the same
  // per-step sets, for any world size and accumulation split.
  at::Tensor synthetic() {
    const std::int64_t accum = accum_;
    const std::int64_t step = draws_ / accum, micro = draws_ % accum;
    ++draws_;
    if (micro == 0) {
      auto gen = at::detail::createCPUGenerator(seed_ * 7919 + static_cast<std::uint64_t>(step));
      global_ = at::randint(o_.model.vocab, {accum * w_.world * batch_, o_.model.context + 1}, gen,
                            at::kLong);
    }
    return global_.narrow(0, (micro * w_.world + w_.rank) * batch_, batch_).clone();
  }
  const wt::TrainOptions& o_;
  const wt::WorldLayout& w_;
  std::int64_t batch_;
  std::int64_t accum_;
  std::uint64_t seed_;
  std::int64_t draws_ = 0;
  at::Tensor global_;
  std::unique_ptr<wd::TokenLoader> loader_;
  wd::Batch batch_buf_;
};

// SIGTERM (scancel, preemption) and SIGUSR1: checkpoint at the end of the
// current step, then exit cleanly (stop_signals.hpp: how they arrive).
std::atomic<int> g_stop_signal{0};

double world_mean(wt::Comm& world, double v, at::Device device) {
  at::Tensor t = wt::scalar_tensor(v, device);
  world.all_reduce_sum(t);
  return t.item<double>() / world.size();
}

double validate(wt::FsdpLlama& model, Batches& val, std::int64_t batches, wt::Comm& world) {
  double sum = 0;
  std::int64_t n = 0;
  for (; n < batches; ++n) {
    auto b = val.next();
    if (!b) break;
    sum += model.step(*b, false, 0.0);
  }
  return world_mean(world, n ? sum / static_cast<double>(n) : 0.0, model.device());
}

int run(int argc, char** argv) {
  wt::keep_freed_memory();
  wt::TrainOptions o;
  if (!wt::parse_train_options(argc, argv, o)) return 0;
  const wt::WorldLayout w = wt::world_from_env();
  wt::validate(o, w.world, w.local_world);
  const bool gpu = o.device == "cuda";
  const wt::ComputeChoice compute{
      o.device, o.bf16, o.sharding, o.threads, o.activation_checkpointing, o.prefetch};
  const wt::CommGroups groups = wt::start_ranks(w, compute);
  const wt::FsdpOptions fo = wt::fsdp_options(w, compute);
  wt::FsdpLlama model(o.model, groups, fo, o.seed);
  std::vector<wt::FlatUnit*> units;
  for (auto& u : model.units()) units.push_back(u.get());
  wt::ShardedAdamW opt(units, {o.beta1, o.beta2, o.adam_eps, o.weight_decay});
  if (!o.init_from_hf.empty()) wt::load_hf_into(model, o.init_from_hf);  // a resume overrides it
  Batches train(o, w, wireup::data::Split::Train, o.train_batch_size);
  std::unique_ptr<Batches> val;
  if (o.validation_freq > 0)
    val = std::make_unique<Batches>(o, w, wireup::data::Split::Validation, o.val_batch_size);
  std::unique_ptr<wt::Checkpointer> ckpt;
  std::int64_t first_step = 1;
  if (!o.checkpoint_dir.empty() || !o.resume_from_checkpoint.empty() || o.stop_after_step > 0) {
    wt::CheckpointPolicy policy;
    policy.dir = o.checkpoint_dir;
    policy.freq = o.checkpoint_freq;
    policy.max_steps = o.max_steps;
    policy.stop_after_step = o.stop_after_step;
    policy.keep = static_cast<int>(o.keep_checkpoints);
    policy.async = o.async_checkpointing;
    policy.start_fresh_if_unloadable = o.start_fresh_if_unloadable;
    ckpt = std::make_unique<wt::Checkpointer>(policy, groups, units, &opt);
    wt::graceful_stop();
  }
  if (!o.resume_from_checkpoint.empty()) {
    if (auto meta = ckpt->load(o.resume_from_checkpoint, o.model)) {
      train.seek(meta->data_position);
      first_step = meta->step + 1;
      wt::say(w,
              "[resume] step=" + std::to_string(meta->step) + " from=" +
                  (o.resume_from_checkpoint == "auto" || o.resume_from_checkpoint == "latest"
                       ? (std::filesystem::path(o.checkpoint_dir) / wt::step_dir_name(meta->step))
                             .string()
                       : o.resume_from_checkpoint) +
                  " saved_world=" + std::to_string(meta->world_size) +
                  " sharding=" + meta->sharding);
    } else {
      wt::say(w, "[resume] no loadable checkpoint in " + o.checkpoint_dir + ": starting at step 1");
    }
  }
  const auto& m = o.model;
  const std::int64_t params = wt::total_params(m);
  std::int64_t shard_params = 0;
  for (auto* u : units) shard_params += u->shard_numel();
  char buf[768];
  std::snprintf(
      buf, sizeof buf,
      "[config] preset=%s params=%lld params_per_rank=%lld state_bytes_per_rank=%lld "
      "world=%d local_world=%d nodes=%d sharding=%s layers=%lld hidden=%lld heads=%lld "
      "kv_heads=%lld intermediate=%lld vocab=%lld context=%lld batch_per_rank=%lld "
      "grad_accum=%lld global_batch_tokens=%lld max_steps=%lld lr=%g threads=%d "
      "activation_checkpointing=%d blas=%s gemm=%s",
      o.preset.c_str(), (long long)params, (long long)shard_params, (long long)model.state_bytes(),
      w.world, w.local_world, w.world / w.local_world, wt::sharding_name(o.sharding),
      (long long)m.layers, (long long)m.hidden, (long long)m.heads, (long long)m.kv_heads,
      (long long)m.intermediate, (long long)m.vocab, (long long)m.context,
      (long long)o.train_batch_size, (long long)o.grad_accum,
      (long long)(o.train_batch_size * o.grad_accum * w.world * m.context), (long long)o.max_steps,
      o.lr, at::get_num_threads(), o.activation_checkpointing ? 1 : 0,
      wt::loaded_blas().path.c_str(), gpu ? "cuda" : wt::cpu_sgemm_name());
  wt::say(w, buf);
  const wt::PeakFlops peak =
      wt::peak_for_mfu(o.peak_tflops, model.device(), fo.compute_dtype, *groups.world);
  wt::say(w, wt::format_peak_line(peak.flops_per_s, peak.source));

  std::ofstream metrics;
  if (w.rank == 0 && !o.metrics_file.empty()) {
    metrics.open(o.metrics_file, std::ios::app);
    if (!metrics) throw wireup::InputError("--metrics_file " + o.metrics_file + ": cannot open");
  }
  const double flops_tok = wt::flops_per_token(m);
  const std::int64_t tokens_per_step = o.train_batch_size * o.grad_accum * w.world * m.context;
  const double grad_scale = 1.0 / static_cast<double>(o.grad_accum * w.world);

  double first_loss = -1, last_loss = 0, total_time = 0;
  double total_data_wait = 0;  // this rank's time in train.next(): the loader plus widening
  std::int64_t step = 0;
  auto t_start = std::chrono::steady_clock::now();
  for (step = first_step; step <= o.max_steps; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    double loss_sum = 0, data_wait = 0;
    bool exhausted = false;
    for (std::int64_t micro = 0; micro < o.grad_accum; ++micro) {
      const auto d0 = std::chrono::steady_clock::now();
      auto b = train.next();
      data_wait += std::chrono::duration<double>(std::chrono::steady_clock::now() - d0).count();
      if (!b) {
        exhausted = true;
        break;
      }
      loss_sum += model.step(*b, true, grad_scale);
    }
    if (exhausted) {
      wt::say(w, "[train] data exhausted after " + std::to_string(step - 1) + " steps (--epochs " +
                     std::to_string(o.epochs) + ")");
      --step;
      break;
    }
    const double norm = wt::global_grad_norm(units, *groups.shard);
    const double clip = (o.grad_clip > 0 && norm > o.grad_clip) ? o.grad_clip / (norm + 1e-6) : 1.0;
    const double lr = wt::learning_rate(o.lr, o.min_lr, o.warmup_steps, o.max_steps, step);
    if (ckpt) ckpt->before_update();  // an async save may still be reading the shards
    opt.step(lr, clip);
    const double loss =
        world_mean(*groups.world, loss_sum / static_cast<double>(o.grad_accum), model.device());
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    total_time += dt;
    total_data_wait += data_wait;
    if (first_loss < 0) first_loss = loss;
    last_loss = loss;
    if (step % o.logging_freq == 0 || step == o.max_steps) {
      wt::StepMetrics sm{step,     o.max_steps, loss,
                         lr,       norm,        static_cast<double>(tokens_per_step) / dt,
                         0,        dt,          wt::peak_mem_mib(model.device()),
                         data_wait};
      sm.mfu = wt::model_flops_utilization(sm.tokens_per_s, flops_tok, peak.flops_per_s, w.world);
      wt::say(w, wt::format_step_line(sm));
      if (metrics.is_open()) metrics << wt::format_step_json(sm) << "\n" << std::flush;
    }
    if (val && step % o.validation_freq == 0) {
      val->rewind();
      const double vl = validate(model, *val, o.validation_batches, *groups.world);
      wt::say(w, wt::format_validation_line(step, vl));
      if (metrics.is_open()) metrics << wt::format_validation_json(step, vl) << "\n" << std::flush;
    }
    if (ckpt) {
      auto info = [&] {
        return wt::CheckpointInfo{
            step, o.seed, o.model, o.preset, wt::sharding_name(o.sharding), train.position()};
      };
      if (auto stop_line = ckpt->end_of_step(step, g_stop_signal.load() != 0, info)) {
        wt::say(w, *stop_line);
        groups.world->barrier();
        return 0;
      }
    }
  }
  if (ckpt) ckpt->wait();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  const std::int64_t done = std::min(step, o.max_steps);
  std::snprintf(buf, sizeof buf,
                "[summary] steps=%lld first_loss=%.6f final_loss=%.6f tokens=%lld "
                "mean_tokens_per_s=%.1f wall_s=%.2f peak_mem_mib=%.1f checkpoint_saves=%d "
                "checkpoint_stall_s=%.3f data_wait_s=%.3f data_wait_pct=%.3f",
                (long long)done, first_loss, last_loss, (long long)(done * tokens_per_step),
                total_time > 0 ? static_cast<double>(done * tokens_per_step) / total_time : 0.0,
                wall, wt::peak_mem_mib(model.device()), ckpt ? ckpt->saves() : 0,
                ckpt ? ckpt->stall_seconds() : 0.0, total_data_wait,
                total_time > 0 ? 100.0 * total_data_wait / total_time : 0.0);
  wt::say(w, buf);
  groups.world->barrier();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    wt::block_stop_signals();  // before any thread exists: all of them inherit it
    wt::start_stop_watcher(g_stop_signal);
    if (argc > 1 && std::string(argv[1]) == "export") return wt::run_export(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "eval") return wt::run_eval(argc - 1, argv + 1);
    return run(argc, argv);
  } catch (const wireup::InputError& e) {
    const char* rank = std::getenv("RANK");
    std::fprintf(stderr, "wireup-train[rank %s]: error: %s\n", rank ? rank : "0", e.what());
    return 2;
  } catch (const std::exception& e) {
    const char* rank = std::getenv("RANK");
    std::fprintf(stderr, "wireup-train[rank %s]: fatal: %s\n", rank ? rank : "0", e.what());
    return 1;
  }
}
