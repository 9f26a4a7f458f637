// wireup-train eval: flags, the weights' shapes and the data checked on every
// rank before any collective; then groups, model, weights, the passes, the sum.
#include "main/eval_main.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "batch/batch_tokens.hpp"
#include "checkpoint/checkpoint_files.hpp"
#include "config/metrics.hpp"
#include "eval/eval_options.hpp"
#include "eval/eval_plan.hpp"
#include "eval/model_size.hpp"
#include "main/model_weights.hpp"
#include "main/run_setup.hpp"
#include "models/family_registry.hpp"
#include "optim/sharded_adamw.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/data/shard_set.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace wireup::train {
namespace {

namespace fs = std::filesystem;
namespace wd = wireup::data;

// The tokens of `rows` consecutive windows from `first`, as stored, [rows, T+1].
at::Tensor read_windows(const wd::ShardSet& set, const EvalPlan& plan, std::uint64_t first,
                        std::uint64_t rows, unsigned token_bytes, std::vector<unsigned char>& buf) {
  const std::uint64_t row_bytes = plan.tokens_per_window() * token_bytes;
  buf.assign(rows * row_bytes, 0);
  for (std::uint64_t r = 0; r < rows; ++r)
    set.read_raw(plan.first_token(first + r), plan.tokens_per_window(), buf.data() + r * row_bytes);
  return stored_tokens_to_long(buf.data(), static_cast<std::int64_t>(rows),
                               static_cast<std::int64_t>(plan.tokens_per_window()), token_bytes);
}

// The split to evaluate on, checked against the model before any collective:
// its manifest, which windows go to which rank, and its shards.
struct EvalData {
  fs::path manifest_file;
  wd::Manifest manifest;
  EvalPlan plan;
  std::unique_ptr<wd::ShardSet> set;
  std::unique_ptr<wd::TokenLoader> chat;  // a chat data set: its packed windows instead
  std::uint64_t chat_passes = 0;          // per rank
};

// A chat data set: the first N of the split's packed windows (whole
// conversations, data-loader.md), in plan order, eval_batch_size rows a pass,
// dealt to the ranks as the loader deals them (window s*B*W + r + j*W of pass
// s to rank r); N must be a multiple of batch x world.
void open_chat_windows(EvalData& d, const EvalOptions& o, const WorldLayout& w,
                       const std::string& what) {
  wd::LoaderConfig c;
  c.manifest = d.manifest_file;
  c.split = o.split == "train" ? wd::Split::Train : wd::Split::Validation;
  c.context = static_cast<std::uint64_t>(o.context);
  c.batch_size = static_cast<std::uint64_t>(o.eval_batch_size);
  c.rank = static_cast<std::uint64_t>(w.rank);
  c.world_size = static_cast<std::uint64_t>(w.world);
  c.shuffle = false;
  const std::uint64_t per_pass = c.batch_size * c.world_size;
  const auto n = static_cast<std::uint64_t>(o.eval_batches);
  if (n % per_pass != 0)
    throw InputError(what + " is a chat data set: --eval_batches " + std::to_string(n) +
                     " (packed windows) must be a multiple of --eval_batch_size x world size (" +
                     std::to_string(per_pass) + ")");
  d.chat_passes = n / per_pass;
  c.max_steps = d.chat_passes;
  d.chat = std::make_unique<wd::TokenLoader>(c);
  if (d.chat->windows() < n)
    throw InputError(what + ": " + std::to_string(d.chat->windows()) + " packed windows of " +
                     std::to_string(o.context + 1) + " tokens, fewer than --eval_batches " +
                     std::to_string(n));
}

// The chat windows' loss: every rank's sum of its trained targets'
// cross-entropy (document masking: positions and attention per
// conversation), all-reduced with the count; the mean and the count.
std::pair<double, std::uint64_t> chat_loss(ShardedModel& model, wd::TokenLoader& loader,
                                           const CommGroups& groups) {
  double sum = 0, trained = 0;
  wd::Batch b;
  while (loader.next(b)) {
    ModelBatch mb{stored_tokens_to_long(b.data(), static_cast<std::int64_t>(b.rows),
                                        static_cast<std::int64_t>(b.cols), b.token_bytes)};
    add_document_layout(mb, b, true);
    sum += model.step(mb, false, 0.0, 1.0);  // divisor 1: the sum
    trained += static_cast<double>(mb.trained_count());
  }
  at::Tensor t = at::tensor(std::vector<double>{sum, trained}, at::kDouble).to(model.device());
  groups.world->all_reduce_sum(t);
  t = t.cpu();
  const double count = t[1].item<double>();
  return {t[0].item<double>() / std::max(count, 1.0), static_cast<std::uint64_t>(count)};
}

EvalData open_eval_data(const EvalOptions& o, const WorldLayout& w, const ModelConfig& m,
                        const Weights& weights) {
  EvalData d;
  d.manifest_file = wd::manifest_path(o.dataset);
  d.manifest = wd::load_manifest(d.manifest_file);
  if (d.manifest.preference)
    throw InputError(d.manifest_file.string() +
                     ": a preference data set (pairs of chosen and rejected completions): "
                     "wireup-train eval does not score pairs yet (DPO, docs/dpo.md); it "
                     "evaluates token and chat data sets");
  if (d.manifest.tokenizer.vocab_size > static_cast<std::uint64_t>(m.vocab))
    throw InputError("the model's vocab_size " + std::to_string(m.vocab) + " (" +
                     weights.describe() + ") is smaller than the vocabulary of " +
                     d.manifest_file.string() + " (" +
                     std::to_string(d.manifest.tokenizer.vocab_size) +
                     " tokens): the data was tokenized for another model");
  const wd::SplitEntry& split = o.split == "train" ? d.manifest.train : d.manifest.validation;
  const std::string what = d.manifest_file.string() + " (" + o.split + " split)";
  if (split.shards.empty())
    throw InputError(what + ": the split is empty (no shards); evaluate on --split " +
                     std::string(o.split == "train" ? "validation" : "train") +
                     " or prepare the data with a validation fraction");
  if (d.manifest.chat) {
    open_chat_windows(d, o, w, what);
    return d;
  }
  d.plan = plan_eval(split.tokens(), static_cast<std::uint64_t>(o.context),
                     static_cast<std::uint64_t>(o.eval_batches),
                     static_cast<std::uint64_t>(o.eval_batch_size),
                     static_cast<std::uint64_t>(w.world), what);
  fs::path data_dir = d.manifest_file.parent_path();
  if (data_dir.empty()) data_dir = ".";
  d.set = std::make_unique<wd::ShardSet>(data_dir, d.manifest, split, o.split, wd::ReadMode::Mmap,
                                         wd::Verify::All);
  return d;
}

// Each chunk's loss sum, from the rank that computed it: the passes of this
// rank, then one all-reduce (zeros from the other ranks: the sums are exact).
std::vector<double> chunk_loss_sums(ShardedModel& model, const EvalData& d,
                                    const CommGroups& groups, const WorldLayout& w) {
  const EvalPlan& plan = d.plan;
  std::vector<double> sums(plan.chunks(), 0.0);
  std::vector<unsigned char> buf;
  for (std::uint64_t f = 0; f < plan.forwards_per_rank(); ++f) {
    const auto chunk = plan.chunk_of(static_cast<std::uint64_t>(w.rank), f);
    // A rank out of chunks still passes (on window 0) so the gathers stay in step.
    const std::uint64_t first = chunk ? plan.first_window(*chunk) : 0;
    const std::uint64_t rows = chunk ? plan.windows_in(*chunk) : 1;
    const double loss = model.step(
        read_windows(*d.set, plan, first, rows, d.manifest.token_bytes, buf), false, 0.0);
    if (chunk) sums[*chunk] = loss * static_cast<double>(rows * plan.context);
  }
  at::Tensor all = at::tensor(sums, at::kDouble).to(model.device());
  groups.world->all_reduce_sum(all);
  all = all.cpu();
  for (std::size_t c = 0; c < sums.size(); ++c)
    sums[c] = all[static_cast<std::int64_t>(c)].item<double>();
  return sums;
}

}  // namespace

int run_eval(int argc, char** argv) {
  keep_freed_memory();
  EvalOptions o;
  if (!parse_eval_options(argc, argv, o)) return 0;
  const WorldLayout w = world_from_env();
  if (!o.metrics_file.empty()) {  // rank 0 writes it at the end: fail now, on every rank
    const fs::path dir = fs::path(o.metrics_file).parent_path();
    if (!dir.empty() && !directory_exists(dir))
      throw InputError("--metrics_file " + o.metrics_file + ": no directory " + dir.string());
  }

  // Every rank checks the weights' shapes and the data before any collective.
  Weights weights = find_weights(o.init_from_hf, o.resume_from_checkpoint, o.lora_adapter);
  ModelConfig& m = weights.model;
  m.context = o.context;
  // Nothing of the model's size is allocated before its shapes are bounded.
  check_model_size(m, weights.source, weights.hf_dir.empty() ? kCheckpointFields : kHfConfigFields,
                   w.world, physical_memory_bytes());
  check_model_config(m);
  const EvalData data = open_eval_data(o, w, m, weights);
  // The data set's chat template (its manifest) against the one the weights
  // were trained with (a checkpoint's, a published tokenizer_config.json's).
  if (data.manifest.chat && !weights.chat_template.empty() &&
      data.manifest.chat->chat_template != weights.chat_template && w.rank == 0)
    std::fprintf(stderr,
                 "wireup-train: WARNING: %s renders its conversations with the %s chat template, "
                 "%s names %s: the loss is measured on another format than the model's\n",
                 data.manifest_file.c_str(), data.manifest.chat->chat_template.c_str(),
                 weights.chat_template_source.c_str(), weights.chat_template.c_str());

  const ComputeChoice& compute = o.compute;
  const CommGroups groups = start_ranks(w, compute);
  ShardedModel model(m, groups, inference_model_options(w, compute), 0);
  load_weights(model, weights, groups, w);

  const auto t0 = std::chrono::steady_clock::now();
  EvalResult r;
  if (data.chat) {
    std::tie(r.loss, r.tokens) = chat_loss(model, *data.chat, groups);
    r.windows = static_cast<std::uint64_t>(o.eval_batches);
  } else {
    r.loss = mean_eval_loss(data.plan, chunk_loss_sums(model, data, groups, w));
    r.tokens = data.plan.targets();
    r.windows = data.plan.windows;
  }
  r.context = static_cast<std::uint64_t>(o.context);
  r.split = o.split;
  r.data = data.manifest_file.string();
  r.weights = weights.describe();
  say(w, format_eval_line(r));
  if (w.rank == 0) {
    std::fprintf(stderr, "wireup-train: eval took %.3f s (world %d, %llu passes per rank)\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 w.world,
                 static_cast<unsigned long long>(data.chat ? data.chat_passes
                                                           : data.plan.forwards_per_rank()));
    if (!o.metrics_file.empty()) io::write_atomically(o.metrics_file, format_eval_json(r));
  }
  groups.world->barrier();
  return 0;
}

}  // namespace wireup::train
