#include "main/resume_setup.hpp"

#include <chrono>
#include <cstdio>
#include <set>

#include "checkpoint/checkpoint_files.hpp"
#include "main/model_weights.hpp"
#include "main/run_setup.hpp"
#include "main/training_state.hpp"
#include "runtime/stop_signals.hpp"
#include "wireup/data/batch_source.hpp"
#include "wireup/file_io.hpp"
#include "wireup/text.hpp"

namespace wireup::train {
namespace {

bool newest(const std::string& spec) { return spec == "auto" || spec == "latest"; }

using Clock = std::chrono::steady_clock;

// " load_s=S": the seconds from the resume's start (choosing, checking and reading the state).
std::string load_seconds(Clock::time_point t0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " load_s=%.2f",
                std::chrono::duration<double>(Clock::now() - t0).count());
  return buf;
}

// The durable checkpoints' steps: committed step directories, newest first.
std::vector<std::int64_t> disk_steps(const TrainOptions& o) {
  std::vector<std::int64_t> steps;
  if (o.checkpoint.dir.empty()) return steps;
  for (const auto& d : complete_checkpoints(o.checkpoint.dir))
    steps.push_back(std::stoll(d.filename().string().substr(5)));  // step-NNNNNNNN
  return steps;
}

void warn_on_other_template(const TrainOptions& o, const WorldLayout& w, TokenBatches& train,
                            const std::string& saved) {
  if (const std::string now = chat_template_of(train); saved != now)
    say(w, "[resume] WARNING: the checkpoint was trained on " +
               (saved.empty() ? std::string("text") : escape_text(saved) + " chat") + " data, " +
               io::shown(o.data.dataset) + " is " +
               (now.empty() ? std::string("text") : escape_text(now) + " chat") + " data");
}

// What a failed memory load falls back to: "memory snapshot step 3", "the
// durable checkpoint step 5".
std::string fallback_name(const ResumeChoice& c) {
  switch (c.source) {
    case ResumeSource::memory:
    case ResumeSource::peer:
      return "memory snapshot step " + std::to_string(c.step) +
             (c.source == ResumeSource::peer ? " (a peer's replicas)" : "");
    case ResumeSource::disk:
      return "the durable checkpoint step " + std::to_string(c.step);
    case ResumeSource::none:
      break;
  }
  return "the durable checkpoints (none committed)";
}

// Memory or a peer's replica, when the choice says so and every rank's part
// loads: the first step to run; else nullopt (the disk's turn). A load that
// fails falls back as the scan does: a part to its replica (within load()),
// then the next newest state, memory or disk, each named in a [memory] line.
// `disk` holds the durable steps to weigh; `chose_disk` is set to the disk step the
// choice took (the same on every rank).
std::optional<std::int64_t> resume_from_memory(const WorldLayout& w, MemoryCheckpointer& mem,
                                               TokenBatches& train,
                                               const std::vector<std::int64_t>& disk,
                                               std::optional<std::int64_t>& chose_disk,
                                               Clock::time_point t0) {
  ResumeChoice c = mem.choose(disk);
  std::set<std::string> said;  // a choice made again repeats the reasons already given
  for (;;) {
    const std::vector<std::string> lines = resume_lines(c);
    for (std::size_t i = 1; i < lines.size(); ++i)
      if (said.insert(lines[i]).second) say(w, lines[i]);
    if (c.source == ResumeSource::disk) chose_disk = c.step;
    if (c.source != ResumeSource::memory && c.source != ResumeSource::peer) return std::nullopt;
    const MemoryCheckpointer::Loaded got = mem.load(c);
    for (const std::string& note : got.notes) say(w, note);
    if (got.data_position) {
      train.source().seek(*got.data_position);
      say(w, "[resume] step=" + std::to_string(c.step) + " source=" + to_string(got.source) +
                 " dir=" + io::shown(mem.root()) + load_seconds(t0));
      return c.step + 1;
    }
    const std::int64_t failed = c.step;
    c = mem.choose_again(failed);
    say(w, "[memory] snapshot step " + std::to_string(failed) + " not loaded: " + got.why +
               "; falling back to " + fallback_name(c));
  }
}

}  // namespace

std::unique_ptr<Checkpointer> open_checkpointer(const TrainOptions& o, const WorldLayout& w,
                                                const CommGroups& groups, ShardedModel& model,
                                                const std::vector<FlatUnit*>& units,
                                                ShardedAdamW& opt) {
  if (o.checkpoint.dir.empty() && o.resume_from_checkpoint.empty() &&
      o.checkpoint.stop_after_step <= 0)
    return nullptr;
  TrainingState state = training_state(units, opt);
  state.start_over = [&o, &w, &groups, &model, &opt] {  // what the run started from
    if (o.init_from_hf.empty() && o.init_from_checkpoint.empty())
      model.initialize(o.seed);
    else
      load_start_weights(model, o, groups, w);  // every parameter of the base
    if (model.lora()) model.initialize_adapters(o.seed);
    opt.reset();
  };
  auto ckpt = std::make_unique<Checkpointer>(o.checkpoint, groups, std::move(state));
  graceful_stop();
  return ckpt;
}

std::unique_ptr<MemoryCheckpointer> open_memory_checkpointer(const TrainOptions& o,
                                                             const WorldLayout& w,
                                                             const std::vector<FlatUnit*>& units,
                                                             ShardedAdamW& opt,
                                                             const RunIdentity& identity) {
  if (o.memory_checkpoint.freq <= 0) return nullptr;
  auto mem = std::make_unique<MemoryCheckpointer>(
      o.memory_checkpoint, w, training_state(units, opt), identity, process_env());
  say(w, mem->describe());
  return mem;
}

std::string chat_template_of(TokenBatches& batches) {
  const data::TokenLoader* loader = batches.source().loader();
  return loader != nullptr && loader->manifest().chat ? loader->manifest().chat->chat_template
                                                      : std::string();
}

std::int64_t resume(const TrainOptions& o, const WorldLayout& w, Checkpointer* ckpt,
                    MemoryCheckpointer* mem, TokenBatches& train, const RunIdentity& identity) {
  if (o.resume_from_checkpoint.empty()) return 1;
  const Clock::time_point t0 = Clock::now();
  const bool weigh_memory = mem && newest(o.resume_from_checkpoint);
  std::optional<std::int64_t> chose_disk;
  if (weigh_memory)
    if (const auto first = resume_from_memory(w, *mem, train, disk_steps(o), chose_disk, t0))
      return *first;
  const auto meta = ckpt->load(o.resume_from_checkpoint, identity);
  // The chosen checkpoint did not load and an older one did: a memory snapshot
  // between the two is newer than what was loaded, and replaces it.
  std::optional<std::int64_t> unused;
  if (weigh_memory && meta && chose_disk && meta->step < *chose_disk)
    if (const auto first = resume_from_memory(w, *mem, train, {meta->step}, unused, t0))
      return *first;
  if (!meta) {
    say(w, "[resume] no loadable checkpoint in " + io::shown(o.checkpoint.dir) +
               ": starting at step 1");
    return 1;
  }
  train.source().seek(meta->data_position);
  warn_on_other_template(o, w, train, meta->chat_template);
  say(w, "[resume] step=" + std::to_string(meta->step) + " source=disk from=" +
             (newest(o.resume_from_checkpoint)
                  ? io::shown(o.checkpoint.dir / step_dir_name(meta->step))
                  : escape_text(o.resume_from_checkpoint)) +
             " saved_world=" + std::to_string(meta->world_size) + " sharding=" + meta->sharding +
             load_seconds(t0));
  return meta->step + 1;
}

}  // namespace wireup::train
