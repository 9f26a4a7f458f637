// wireup-train: a fully sharded Llama trainer. Read top to bottom: flags and
// world layout (checked before any collective), groups, model, data, loop.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "batch/batch_tokens.hpp"
#include "batch/document_layout.hpp"
#include "checkpoint/checkpointer.hpp"
#include "comm/collective_deadline.hpp"
#include "comm/world_layout.hpp"
#include "config/metrics.hpp"
#include "config/schedule.hpp"
#include "config/train_options.hpp"
#include "hf/hf_import.hpp"
#include "main/breakdown_main.hpp"
#include "main/dpo_step.hpp"
#include "main/eval_main.hpp"
#include "main/export_main.hpp"
#include "main/generate_main.hpp"
#include "main/model_weights.hpp"
#include "main/resume_setup.hpp"
#include "main/run_setup.hpp"
#include "main/straggler_report.hpp"
#include "main/train_batches.hpp"
#include "main/training_state.hpp"
#include "models/family_registry.hpp"
#include "models/sharded_model.hpp"
#include "ops/cpu_gemm.hpp"
#include "optim/sharded_adamw.hpp"
#include "profile/cuda_timer.hpp"
#include "profile/device_trace.hpp"
#include "profile/step_trace.hpp"
#include "runtime/blas_check.hpp"
#include "runtime/stop_signals.hpp"
#include "tensorboard/event_file.hpp"
#include "tensorboard/training_scalars.hpp"
#include "watchdog/flight_recorder.hpp"
#include "watchdog/stall_watch.hpp"
#include "wireup/data/batch_source.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/stderr_lines.hpp"

namespace wt = wireup::train;
namespace wd = wireup::data;
namespace tb = wireup::train::tensorboard;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// SIGTERM (scancel, preemption) and SIGUSR1: checkpoint at the end of the
// current step, then exit cleanly (stop_signals.hpp: how they arrive).
std::atomic<int> g_stop_signal{0};

// ------------------------------------------------------------ before the first step

// --tensorboard_dir: rank 0 checks at start that it can write there, and opens
// its event file once the first step is known (a resume's START record makes
// TensorBoard drop the replaced run's steps from it on: tensorboard/event_file.hpp).
void check_tensorboard_dir(const wt::TrainOptions& o, const wt::WorldLayout& w) {
  if (w.rank != 0 || o.tensorboard_dir.empty()) return;
  try {
    tb::check_event_dir(o.tensorboard_dir);
  } catch (const wireup::InputError& e) {
    throw wireup::InputError(std::string("--tensorboard_dir: ") + e.what());
  }
}

std::unique_ptr<tb::EventFileWriter> open_tensorboard(const wt::TrainOptions& o,
                                                      const wt::WorldLayout& w,
                                                      std::int64_t first_step) {
  if (w.rank != 0 || o.tensorboard_dir.empty()) return nullptr;
  auto writer = std::make_unique<tb::EventFileWriter>(o.tensorboard_dir, first_step);
  wt::say(w, "[tensorboard] file=" + writer->path().string() +
                 " first_step=" + std::to_string(first_step));
  return writer;
}

wt::RunConfig run_config(const wt::TrainOptions& o, const wt::WorldLayout& w,
                         wt::ShardedModel& model) {
  wt::RunConfig c;
  c.preset = o.preset;
  c.params = wt::total_params(o.model);
  for (auto& u : model.units()) c.params_per_rank += u->shard_numel();
  c.state_bytes_per_rank = model.state_bytes();
  c.world = w.world;
  c.local_world = w.local_world;
  c.sharding = wt::sharding_name(o.compute.sharding);
  c.model = o.model;
  c.batch_per_rank = o.train_batch_size;
  c.grad_accum = o.grad_accum;
  c.max_steps = o.max_steps;
  c.lr = o.lr;
  c.threads = at::get_num_threads();
  c.activation_checkpointing = o.compute.activation_checkpointing;
  c.blas = wt::loaded_blas().path;
  c.gemm = o.compute.device != "cuda" ? std::string(wt::cpu_sgemm_name())
           : o.compute.float8 == wt::Float8Recipe::Off
               ? std::string("cuda")
               : std::string("cuda-float8-") + wt::float8_recipe_name(o.compute.float8);
  return c;
}

// ------------------------------------------------------------ the steps

// What a run has built before its first step.
struct Run {
  const wt::TrainOptions& o;
  const wt::WorldLayout& w;
  const wt::CommGroups& groups;
  wt::ShardedModel& model;
  const std::vector<wt::FlatUnit*>& units;
  wt::ShardedAdamW& opt;
  wt::TokenBatches& train;
  wt::TokenBatches* val;                // nullptr: no validation
  wt::Checkpointer* ckpt;               // nullptr: no checkpoints
  wt::MemoryCheckpointer* mem;          // nullptr: no memory snapshots
  std::ofstream& metrics;               // rank 0's --metrics_file, when open
  double peak_flops = 0;                // one rank's, for MFU
  std::optional<wt::AdapterMeta> lora;  // a LoRA run's adapters and base
  wt::DpoReference* dpo;                // preference data: DPO's reference; nullptr otherwise
  std::optional<wt::DpoMeta> dpo_meta;  // and what checkpoints record of it
  // rank 0's --tensorboard_dir event file, when set
  std::unique_ptr<tb::EventFileWriter> tensorboard = nullptr;
  // The ranks' compute times on logged steps, the straggler warnings.
  std::unique_ptr<wt::StragglerReport> stragglers = nullptr;
  bool trace_written = false;
};

// A step's values into rank 0's event file. A failed write (a full disk) is
// reported once and ends the TensorBoard output, not the run.
void to_tensorboard(Run& r, std::int64_t step, const std::vector<tb::Scalar>& values) {
  if (!r.tensorboard) return;
  try {
    r.tensorboard->write_scalars(step, values);
  } catch (const wireup::InputError& e) {
    wt::say(r.w, std::string("[tensorboard] warning: no more events written: ") + e.what());
    r.tensorboard.reset();
  }
}

double world_sum(wt::Comm& world, double v, at::Device device) {
  at::Tensor t = wt::scalar_tensor(v, device);
  world.all_reduce_sum(t);
  return t.item<double>();
}

double world_mean(wt::Comm& world, double v, at::Device device) {
  return world_sum(world, v, device) / world.size();
}

// Raw text: the ranks' mean of their batches' mean losses. Chat: the mean
// over every trained target of every rank's batches.
double validation_loss(wt::ShardedModel& model, wt::TokenBatches& val, std::int64_t batches,
                       wt::Comm& world) {
  double sum = 0, trained = 0;
  bool masked = false;
  std::int64_t n = 0;
  for (; n < batches; ++n) {
    auto b = val.next();
    if (!b) break;
    masked = b->masked();
    sum += model.step(*b, false, 0.0, masked ? 1.0 : 0.0);  // masked: the sum of the losses
    trained += static_cast<double>(b->trained_count());
  }
  if (!masked) return world_mean(world, n ? sum / static_cast<double>(n) : 0.0, model.device());
  const double total = world_sum(world, trained, model.device());
  return world_sum(world, sum, model.device()) / std::max(total, 1.0);
}

// What a batch that does not come waits for: the shard rows being read.
std::string awaited_batch(const Run& r, std::int64_t step) {
  std::string what = "for the batch of step " + std::to_string(step);
  const wd::TokenLoader* loader = r.train.source().loader();
  if (!loader) return what + " (synthetic data)";
  auto reads = loader->reads_in_progress();
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  if (reads.empty()) return what + "; no shard read in progress";
  for (std::size_t i = 0; i < reads.size(); ++i) what += (i ? ", " : "; reading ") + reads[i];
  return what;
}

struct StepResult {
  double loss = 0, lr = 0, grad_norm = 0;
  std::int64_t trained_tokens = -1;  // chat data: the step's targets in the loss, all ranks
  double seconds = 0;
  double data_wait = 0;  // this rank's time in train.next(): the loader plus widening
  double compute = 0;    // seconds less data_wait and the time waiting in collectives
  std::optional<wt::preference::DpoMetrics> dpo;  // preference data: the step's pairs
};

// The step's micro-batches, read before any forward (a chat set's loss needs
// the step's trained-target count); nullopt when the data ran out first.
std::optional<std::vector<wt::ModelBatch>> read_step_batches(Run& r, std::int64_t step,
                                                             double& data_wait) {
  std::vector<wt::ModelBatch> micro;
  for (std::int64_t m = 0; m < r.o.grad_accum; ++m) {
    const auto d0 = Clock::now();
    std::optional<wt::ModelBatch> b;
    {
      const wt::TraceSpan span("data_wait");
      // A read stuck on the file system ends the rank as a stalled peer does.
      const wt::StallDeadline deadline("data", wt::collective_timeout(),
                                       [&r, step] { return awaited_batch(r, step); });
      b = r.train.next();
    }
    data_wait += seconds_since(d0);
    if (!b) return std::nullopt;
    micro.push_back(std::move(*b));
  }
  return micro;
}

// One optimizer step: the micro-batches read, then forward and backward, the
// gradient norm and clipping, the update, the loss averaged over the world.
// Chat data: the step's trained targets are counted on the host from the
// masks and summed over the world first, so every micro-batch's loss is its
// part of the global batch's mean (document_layout.hpp: LossScaling).
// nullopt when the data ran out first.
std::optional<StepResult> optimizer_step(Run& r, std::int64_t step) {
  const wt::TrainOptions& o = r.o;
  const auto t0 = Clock::now();
  const double in_collectives = wt::collective_seconds();
  StepResult s;
  const auto batches = read_step_batches(r, step, s.data_wait);
  if (!batches) return std::nullopt;
  const std::vector<wt::ModelBatch>& micro = *batches;
  const bool masked = micro.front().masked() && !r.dpo;
  wt::LossScaling scaling = wt::raw_text_scaling(o.grad_accum, r.w.world);
  if (masked) {
    double trained = 0;
    for (const auto& b : micro) trained += static_cast<double>(b.trained_count());
    s.trained_tokens =
        static_cast<std::int64_t>(world_sum(*r.groups.world, trained, r.model.device()));
    scaling = wt::masked_scaling(s.trained_tokens);
  }
  double loss_sum = 0;
  if (r.dpo)
    s.dpo = wt::dpo_pass(r.model, *r.dpo, micro, o.dpo, *r.groups.world, true).metrics;
  else
    for (const auto& b : micro)
      loss_sum += r.model.step(b, true, scaling.grad_scale, scaling.loss_divisor);
  {
    const wt::TraceSpan span("optimizer");
    s.grad_norm = wt::global_grad_norm(r.units, *r.groups.shard);
    const double clip =
        (o.grad_clip > 0 && s.grad_norm > o.grad_clip) ? o.grad_clip / (s.grad_norm + 1e-6) : 1.0;
    s.lr = wt::learning_rate(o.lr, o.min_lr, o.warmup_steps, o.max_steps, step);
    if (r.ckpt) {
      const wt::TraceSpan stall("checkpoint_stall");
      r.ckpt->before_update();  // an async save may still be reading the shards
    }
    if (r.mem) r.mem->before_update();  // a snapshot may still be copying them
    r.opt.step(s.lr, clip);
  }
  s.loss = s.dpo    ? s.dpo->loss
           : masked ? world_sum(*r.groups.world, loss_sum, r.model.device())
                    : world_mean(*r.groups.world, loss_sum / static_cast<double>(o.grad_accum),
                                 r.model.device());
  s.seconds = seconds_since(t0);
  s.compute = s.seconds - s.data_wait - (wt::collective_seconds() - in_collectives);
  return s;
}

void log_step(Run& r, std::int64_t step, const StepResult& s, std::int64_t tokens_per_step) {
  if (step % r.o.logging_freq != 0 && step != r.o.max_steps) return;
  wt::StepMetrics sm{step,       r.o.max_steps, s.loss,
                     s.lr,       s.grad_norm,   static_cast<double>(tokens_per_step) / s.seconds,
                     0,          s.seconds,     wt::peak_mem_mib(r.model.device()),
                     s.data_wait};
  sm.trained_tokens = s.trained_tokens;
  sm.dpo = s.dpo;
  sm.mfu = wt::model_flops_utilization(sm.tokens_per_s, wt::flops_per_token(r.o.model),
                                       r.peak_flops, r.w.world);
  const auto ranks = r.stragglers->logged_step(step, s.compute);  // every rank: a collective
  sm.compute_min_s = ranks.spread.min_s;
  sm.compute_median_s = ranks.spread.median_s;
  sm.compute_max_s = ranks.spread.max_s;
  sm.slowest_rank = ranks.spread.slowest_rank;
  const wt::StepRecord record = wt::step_record(sm);
  wt::say(r.w, wt::format_step_line(record));
  for (const auto& warning : ranks.warnings) wt::say(r.w, warning);
  if (r.metrics.is_open()) r.metrics << wt::format_step_json(record) << "\n" << std::flush;
  const auto scalars = tb::step_scalars(record);
  to_tensorboard(r, step, scalars);
}

// Preference data: DPO's loss and metrics over the validation batches' pairs.
wt::preference::DpoMetrics validation_dpo(Run& r) {
  std::vector<wt::ModelBatch> batches;
  for (std::int64_t n = 0; n < r.o.validation_batches; ++n) {
    auto b = r.val->next();
    if (!b) break;
    batches.push_back(std::move(*b));
  }
  return wt::dpo_pass(r.model, *r.dpo, batches, r.o.dpo, *r.groups.world, false).metrics;
}

// Every --validation_freq steps: the validation loss on the same batches.
void log_validation_loss(Run& r, std::int64_t step) {
  if (!r.val || step % r.o.validation_freq != 0) return;
  r.val->source().rewind();
  std::optional<wt::preference::DpoMetrics> dpo;
  if (r.dpo) dpo = validation_dpo(r);
  const double vl =
      dpo ? dpo->loss : validation_loss(r.model, *r.val, r.o.validation_batches, *r.groups.world);
  wt::say(r.w, wt::format_validation_line(step, vl, dpo));
  if (r.metrics.is_open())
    r.metrics << wt::format_validation_json(step, vl, dpo) << "\n" << std::flush;
  to_tensorboard(r, step, tb::validation_scalars(vl));
}

// Saves when the policy says so; the line to print when the run must stop now.
std::optional<std::string> checkpoint_and_stop(Run& r, std::int64_t step) {
  if (r.mem) r.mem->end_of_step(step, r.train.source().position());
  if (!r.ckpt) return std::nullopt;
  auto info = [&] {
    return wt::CheckpointInfo{step,
                              r.o.seed,
                              r.o.model,
                              r.o.preset,
                              wt::sharding_name(r.o.compute.sharding),
                              r.train.source().position(),
                              wt::chat_template_of(r.train),
                              r.lora,
                              r.dpo_meta};
  };
  const wt::TraceSpan span("checkpoint");
  // A save raises the collective timeout to --comm_init_timeout itself.
  return r.ckpt->end_of_step(step, g_stop_signal.load() != 0, info);
}

// --profile_steps: this rank's trace, once its window has passed or the run
// ends inside it.
void write_trace(Run& r) {
  if (r.trace_written || r.o.profile_last < r.o.profile_first) return;
  r.trace_written = true;
  const auto events = wt::step_trace().events();
  const auto path = wt::write_chrome_trace(r.o.profile_dir, r.w.rank, wt::this_host(), events,
                                           wt::device_trace().tracks());
  const auto dropped = wt::step_trace().dropped() + wt::device_trace().dropped();
  wt::say(r.w, "[profile] trace=" + path.string() + " steps=" + std::to_string(r.o.profile_first) +
                   ":" + std::to_string(r.o.profile_last) + " events=" +
                   std::to_string(events.size()) + " dropped=" + std::to_string(dropped));
}

enum class AfterStep { Continue, DataExhausted, Stop };

// One step: the optimizer step, its line, validation, checkpoint (one "step"
// span in a --profile_steps window).
AfterStep run_step(Run& r, std::int64_t step, std::int64_t first_step, wt::RunSummary& sum,
                   std::int64_t tokens_per_step) {
  wt::step_trace().start_step(step);
  AfterStep next = AfterStep::Continue;
  {
    const wt::TraceSpan span("step");
    const auto s = optimizer_step(r, step);
    if (!s) {
      next = AfterStep::DataExhausted;
    } else {
      if (step == first_step) wt::set_comm_timeout_seconds(r.o.comm_timeout);  // training runs
      sum.step_time_s += s->seconds;
      sum.data_wait_s += s->data_wait;
      if (sum.first_loss < 0) sum.first_loss = s->loss;
      sum.final_loss = s->loss;
      log_step(r, step, *s, tokens_per_step);
      log_validation_loss(r, step);
      if (const auto stop_line = checkpoint_and_stop(r, step)) {
        wt::say(r.w, *stop_line);
        next = AfterStep::Stop;
      }
    }
  }
  wt::device_trace().end_step();  // on a GPU in the window: the step's device spans
  wt::step_trace().end_step();
  if (step == r.o.profile_last) write_trace(r);
  return next;
}

// Steps first_step..--max_steps; the summary at the end.
int train_steps(Run& r, std::int64_t first_step) {
  const wt::TrainOptions& o = r.o;
  const std::int64_t tokens_per_step =
      o.train_batch_size * o.grad_accum * r.w.world * o.model.context;
  wt::RunSummary sum;
  sum.first_loss = -1;
  const auto t_start = Clock::now();
  std::int64_t step = first_step;
  for (; step <= o.max_steps; ++step) {
    const AfterStep next = run_step(r, step, first_step, sum, tokens_per_step);
    if (next == AfterStep::DataExhausted) {
      wt::say(r.w, "[train] data exhausted after " + std::to_string(step - 1) +
                       " steps (--epochs " + std::to_string(o.data.epochs) + ")");
      --step;
      break;
    }
    if (next == AfterStep::Stop) {
      if (r.mem) r.mem->wait();  // kept for the restart
      write_trace(r);
      r.groups.world->barrier();
      return 0;
    }
  }
  write_trace(r);
  wt::set_comm_timeout_seconds(o.comm_init_timeout);  // the last save
  if (r.ckpt) r.ckpt->wait();
  if (r.mem) {  // every step trained: the snapshots are not needed any more
    r.mem->remove_on_success();
    wt::say(r.w, "[memory] snapshots=" + std::to_string(r.mem->snapshots()) +
                     " stall_s=" + std::to_string(r.mem->stall_seconds()) +
                     " write_s=" + std::to_string(r.mem->write_seconds()) +
                     " writer_cpu_s=" + std::to_string(r.mem->writer_cpu_seconds()) + " removed " +
                     wireup::io::shown(r.mem->root()) + "/" + r.mem->node());
  }
  sum.wall_s = seconds_since(t_start);
  sum.steps = std::min(step, o.max_steps);
  sum.tokens = sum.steps * tokens_per_step;
  sum.peak_mem_mib = wt::peak_mem_mib(r.model.device());
  sum.checkpoint_saves = r.ckpt ? r.ckpt->saves() : 0;
  sum.checkpoint_stall_s = r.ckpt ? r.ckpt->stall_seconds() : 0.0;
  wt::say(r.w, wt::format_summary_line(sum));
  r.groups.world->barrier();
  return 0;
}

// ------------------------------------------------------------ wireup-train

// Preference data: DPO's settings and reference, once.
std::string dpo_line(const wt::TrainOptions& o, const wt::DpoReference& ref) {
  char line[256];
  std::snprintf(line, sizeof line,
                "[dpo] loss_type=%s beta=%g label_smoothing=%g sft_weight=%g reference=%s "
                "reference_bytes_per_rank=%lld",
                wt::preference::dpo_loss_name(o.dpo.loss), o.dpo.beta, o.dpo.label_smoothing,
                o.dpo.sft_weight, ref.kind(), static_cast<long long>(ref.state_bytes()));
  return line;
}

// Chat data with --document_masking 1: which attention runs it, once.
void say_document_attention(const wt::TrainOptions& o, const wt::WorldLayout& w,
                            wt::ShardedModel& model, wt::TokenBatches& train) {
  const wd::TokenLoader* loader = train.source().loader();
  if (!o.document_masking || !loader || !loader->pack_stats()) return;
  const wt::ops::DocumentAttentionChoice* a = nullptr;
  try {
    a = &model.document_attention();
  } catch (const std::invalid_argument& e) {
    throw wireup::InputError(e.what());  // WIREUP_DOCUMENT_ATTENTION
  }
  wt::say(w, std::string("[attention] document_masking=1 path=") +
                 wt::document_attention_name(a->path) +
                 (a->note.empty() ? "" : " (varlen flash refused: " + a->note + ")"));
}

int run(int argc, char** argv) {
  wt::keep_freed_memory();
  wt::TrainOptions o;
  if (!wt::parse_train_options(argc, argv, o)) return 0;
  wt::resolve_train_shape(o);  // --preset, or the initial weights' shape; the shape flags
  const wt::WorldLayout w = wt::world_from_env();
  wt::check_train_options(o, w.world, w.local_world);
  check_tensorboard_dir(o, w);
  if (o.profile_last >= o.profile_first) wt::check_trace_dir(o.profile_dir);
  wt::step_trace().set_window(o.profile_first, o.profile_last);
  wt::set_comm_timeout_seconds(o.comm_init_timeout);  // start-up, loads, the first step
  wt::stall_watch().set_place(w.rank, wt::this_host());
  const wt::CommGroups groups = wt::start_ranks(w, o.compute);
  wt::ModelOptions fo = wt::model_options(w, o.compute);
  fo.lora = o.lora;
  wt::ShardedModel model(o.model, groups, fo, o.seed);
  if (o.profile_last >= o.profile_first && model.device().is_cuda()) wt::install_cuda_timer();
  // What the optimizer updates and checkpoints hold: every unit, or LoRA's adapters.
  const std::vector<wt::FlatUnit*>& units = model.trainable_units();
  wt::ShardedAdamW opt(units, o.adamw);
  wt::load_start_weights(model, o, groups, w);  // a resume overrides it
  const auto lora = wt::lora_identity(o, w, model);
  const auto train = wt::open_batches(o, w, wd::Split::Train, o.train_batch_size);
  say_document_attention(o, w, model, *train);
  std::unique_ptr<wt::TokenBatches> val;
  if (o.validation_freq > 0) val = wt::open_batches(o, w, wd::Split::Validation, o.val_batch_size);
  // Preference data: DPO against the reference (main/dpo_step.hpp).
  std::unique_ptr<wt::DpoReference> dpo;
  if (train->source().loader() && train->source().loader()->paired()) {
    dpo = wt::training_reference(o, w, groups, model);
    wt::say(w, dpo_line(o, *dpo));
  }
  // What a resume must find unchanged: the model, the adapters, DPO's settings.
  wt::RunIdentity identity{o.model, lora, std::nullopt};
  if (dpo) identity.dpo = wt::dpo_meta(o, *dpo);
  const auto ckpt = wt::open_checkpointer(o, w, groups, model, units, opt);
  const auto mem = wt::open_memory_checkpointer(o, w, units, opt, identity);
  const std::int64_t first_step = wt::resume(o, w, ckpt.get(), mem.get(), *train, identity);

  wt::say(w, wt::format_config_line(run_config(o, w, model)));
  const wt::PeakFlops peak =
      wt::peak_for_mfu(o.peak_tflops, model.device(), fo.fsdp.compute_dtype, *groups.world);
  wt::say(w, wt::format_peak_line(peak.flops_per_s, peak.source));
  std::ofstream metrics;
  if (w.rank == 0 && !o.metrics_file.empty()) {
    metrics.open(o.metrics_file, std::ios::app);
    if (!metrics) throw wireup::InputError("--metrics_file " + o.metrics_file + ": cannot open");
  }
  Run r{o,      w,         groups,      model,     units,   opt,
        *train, val.get(), ckpt.get(),  mem.get(), metrics, peak.flops_per_s,
        lora,   dpo.get(), identity.dpo};
  r.tensorboard = open_tensorboard(o, w, first_step);
  r.stragglers = std::make_unique<wt::StragglerReport>(
      *groups.world, model.device(), wt::this_host(), o.straggler_ratio, o.straggler_steps);
  return train_steps(r, first_step);
}

}  // namespace

int main(int argc, char** argv) {
  wireup::stderr_by_whole_lines();
  try {
    wt::block_stop_signals();  // before any thread exists: all of them inherit it
    wt::start_stop_watcher(g_stop_signal);
    if (argc > 1 && std::string(argv[1]) == "export") return wt::run_export(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "eval") return wt::run_eval(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "generate") return wt::run_generate(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "breakdown")
      return wt::run_breakdown(argc - 1, argv + 1);
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
