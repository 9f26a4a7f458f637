#include "wireup/data/loader.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "loader_impl.hpp"
#include "wireup/error.hpp"

namespace wireup::data {

std::uint32_t Batch::token(std::uint64_t i, std::uint64_t j) const {
  const unsigned char* p = tokens.data() + (i * cols + j) * token_bytes;
  std::uint32_t t = 0;
  for (unsigned k = token_bytes; k-- > 0;) t = t << 8 | p[k];  // little-endian
  return t;
}

void TokenLoader::Impl::fill(const Sampler::Step& step, const detail::Ahead& ahead,
                             Batch& b) const {
  b.rows = step.windows.size();
  b.cols = cfg.context + 1;
  b.windows.assign(step.windows.begin(), step.windows.end());
  b.epoch = step.epoch;
  b.after = step.after;
  b.token_bytes = manifest.token_bytes;
  b.tokens.resize(b.rows * rows->row_bytes());
  if (packed_rows) {  // ids checked piece by piece as they are copied
    b.loss_mask.resize(b.rows * b.cols);
    b.segments.resize(b.rows * b.cols);
    packed_rows->read(step.windows, b.tokens.data(), b.loss_mask.data(), b.segments.data());
    b.pairs.clear();
    if (pack->paired())  // a window's pieces are its pairs' chosen and rejected documents
      for (const std::uint64_t w : step.windows)
        b.pairs.push_back(static_cast<std::uint32_t>(pack->window(w).size() / 2));
    return;
  }
  b.loss_mask.clear();
  b.segments.clear();
  b.pairs.clear();
  rows->read(step.windows, ahead, b.tokens.data());
  // A shard whose checksum matches can still hold ids its tokenizer lacks:
  // refused here (one vectorised pass over the batch), naming the shard,
  // before a model indexes its embedding with them.
  if (const auto bad = detail::first_id_at_least(b.tokens.data(), b.rows * b.cols, b.token_bytes,
                                                 manifest.tokenizer.vocab_size)) {
    const std::uint64_t row = *bad / b.cols;
    set->check_ids(step.windows[row] * cfg.context, b.cols,
                   b.tokens.data() + row * rows->row_bytes());
  }
}

void TokenLoader::Impl::readahead_window(std::uint64_t w) const {
  if (packed_rows)
    packed_rows->readahead(w);
  else
    set->readahead(w * cfg.context, cfg.context + 1);
}

namespace {

// The documents longer than `capacity` whose first `capacity` tokens (what
// Overlong::Truncate keeps) hold no trained target: no mask bit after their
// first token, the one that is never a target.
std::uint64_t count_untrained(const ShardSet& set, const std::vector<std::uint64_t>& starts,
                              std::uint64_t capacity) {
  std::uint64_t n = 0;
  std::vector<std::uint8_t> mask(capacity);
  for (std::size_t d = 0; d + 1 < starts.size(); ++d) {
    if (starts[d + 1] - starts[d] <= capacity) continue;
    set.read_mask(starts[d], capacity, mask.data());
    if (std::find(mask.begin() + 1, mask.end(), std::uint8_t{1}) == mask.end()) ++n;
  }
  return n;
}

// Packed rows: the plan over the split's documents, or an InputError when
// it leaves no window.
std::unique_ptr<PackPlan> plan_packing(const ShardSet& set, const LoaderConfig& c,
                                       const std::string& where) {
  const auto starts = set.doc_starts();
  auto plan = std::make_unique<PackPlan>(starts, c.context + 1, c.overlong);
  if (plan->windows() == 0)
    throw InputError(where + ": no document is left to pack into rows of " +
                     std::to_string(c.context + 1) + " tokens (context + 1) with --overlong " +
                     overlong_name(c.overlong) + " (" + std::to_string(plan->stats().dropped) +
                     " dropped as longer than a row)");
  if (c.overlong == Overlong::Truncate && set.has_mask() && plan->stats().truncated > 0)
    plan->set_untrained(count_untrained(set, starts, c.context + 1));
  return plan;
}

// Pair mode: the split's documents taken two by two (prompt + chosen, then
// prompt + rejected; wireup-prep keeps a pair in one shard), their prompts
// read from the loss mask where the pair is longer than a row, and the plan.
std::unique_ptr<PackPlan> plan_pairs(const ShardSet& set, const LoaderConfig& c,
                                     const std::string& where) {
  const auto starts = set.doc_starts();
  const std::uint64_t docs = starts.empty() ? 0 : starts.size() - 1, capacity = c.context + 1;
  if (docs % 2 != 0)
    throw InputError(where + ": " + std::to_string(docs) +
                     " documents: expected pairs of documents (prompt + chosen, prompt + "
                     "rejected), an even count");
  std::vector<PackPair> pairs(docs / 2);
  std::vector<std::uint8_t> mask;
  const auto prompt_of = [&](std::uint64_t first, std::uint64_t length) {
    mask.resize(length);
    set.read_mask(first, length, mask.data());
    return static_cast<std::uint64_t>(std::find(mask.begin(), mask.end(), std::uint8_t{1}) -
                                      mask.begin());
  };
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    PackPair& p = pairs[k];
    p.first = starts[2 * k];
    p.chosen = starts[2 * k + 1] - p.first;
    p.rejected = starts[2 * k + 2] - starts[2 * k + 1];
    if (p.chosen + p.rejected <= capacity) continue;  // kept whole: its prompts do not matter
    p.chosen_prompt = prompt_of(p.first, p.chosen);
    p.rejected_prompt = prompt_of(starts[2 * k + 1], p.rejected);
  }
  auto plan = std::make_unique<PackPlan>(PackPlan::for_pairs(pairs, capacity, c.overlong));
  if (plan->windows() == 0)
    throw InputError(where + ": no pair is left to pack into rows of " + std::to_string(capacity) +
                     " tokens (context + 1) with overlong " + overlong_name(c.overlong) + " (" +
                     std::to_string(plan->stats().dropped_pairs) + " of " +
                     std::to_string(pairs.size()) +
                     " pairs dropped: longer than a row, or their prompts leave no completion "
                     "token); raise the context above the pairs' prompts");
  return plan;
}

// A preference data set is read in pair mode only: the settings that do not
// apply to pairs are refused, naming the data set.
void check_pair_settings(const LoaderConfig& c, const std::string& file) {
  const std::string what = file + ": a preference data set (pairs of chosen and rejected " +
                           "completions, read as packed pairs)";
  if (c.packing == Packing::Off)
    throw InputError(what + " with packing off: stride windows would cut across its pairs; " +
                     "expected packing auto or on");
  if (c.overlong == Overlong::Split)
    throw InputError(what + " with overlong split: a pair is kept whole in one row, never " +
                     "cut into pieces; expected overlong truncate (keep_start) or drop");
}

}  // namespace

bool TokenLoader::Impl::next_sync(Batch& b) {
  if (!sampler->next(pos, sync_step)) return false;
  std::uint64_t next[kReadAhead];
  fill(sync_step, {next, sampler->peek(sync_step.after, kReadAhead, next)}, b);
  pos = sync_step.after;
  return true;
}

TokenLoader::TokenLoader(LoaderConfig config) : impl_(std::make_unique<Impl>()) {
  auto& d = *impl_;
  d.cfg = std::move(config);
  if (d.cfg.context == 0) throw InputError("loader: context width must be at least 1");
  const auto file = manifest_path(d.cfg.manifest);
  d.dir = file.parent_path();
  if (d.dir.empty()) d.dir = ".";
  d.manifest = load_manifest(file);
  const bool paired = d.manifest.preference.has_value();
  if (paired) check_pair_settings(d.cfg, file.string());
  const bool train = d.cfg.split == Split::Train;
  const auto& split = train ? d.manifest.train : d.manifest.validation;
  const std::string split_name = train ? "train" : "validation";
  d.set = std::make_unique<ShardSet>(d.dir, d.manifest, split, split_name, d.cfg.read_mode,
                                     d.cfg.verify, d.cfg.rank, d.cfg.world_size);
  const bool pack = paired || d.cfg.packing == Packing::On ||
                    (d.cfg.packing == Packing::Auto && d.manifest.chat.has_value());
  const std::string where = file.string() + " (" + split_name + " split)";
  if (pack) {
    d.pack = paired ? plan_pairs(*d.set, d.cfg, where) : plan_packing(*d.set, d.cfg, where);
    d.windows = d.pack->windows();
  } else {
    d.windows = window_count(d.set->tokens(), d.cfg.context);
  }
  if (d.windows == 0)
    throw InputError(file.string() + ": the " + split_name + " split has " +
                     std::to_string(d.set->tokens()) + " tokens, fewer than one window of " +
                     std::to_string(d.cfg.context + 1) + " (context + 1)");
  SamplerConfig sc;
  sc.windows = d.windows;
  sc.batch_size = d.cfg.batch_size;
  sc.rank = d.cfg.rank;
  sc.world_size = d.cfg.world_size;
  sc.shuffle = d.cfg.shuffle;
  sc.epochs = d.cfg.epochs;
  sc.max_steps = d.cfg.max_steps;
  try {
    d.sampler = std::make_unique<Sampler>(sc);
  } catch (const InputError& e) {
    throw InputError(file.string() + " (" + split_name + " split): " + e.what());
  }
  d.rows = std::make_unique<detail::RowReader>(*d.set, d.cfg.context, d.manifest.token_bytes);
  if (d.pack) {
    const std::int64_t eos = d.manifest.tokenizer.eos_id;
    d.packed_rows = std::make_unique<detail::PackedRowReader>(
        *d.set, *d.pack, d.cfg.context + 1, d.manifest.token_bytes,
        eos >= 0 ? static_cast<std::uint32_t>(eos) : 0u);
  }
  d.plan = std::make_unique<detail::StepPlan>(*d.sampler);
  d.pos = Position{d.cfg.seed, 0, 0, 0};
  d.start();
}

TokenLoader::~TokenLoader() { impl_->halt(); }

bool TokenLoader::next(Batch& batch) {
  return impl_->cfg.prefetch == 0 ? impl_->next_sync(batch) : impl_->next_prefetched(batch);
}

Position TokenLoader::position() const { return impl_->pos; }

void TokenLoader::seek(const Position& p) {
  impl_->halt();
  impl_->pos = p;
  impl_->start();
}

std::uint64_t TokenLoader::tokens() const { return impl_->set->tokens(); }
std::uint64_t TokenLoader::windows() const { return impl_->windows; }
bool TokenLoader::packed() const { return impl_->pack != nullptr; }
bool TokenLoader::paired() const { return impl_->pack != nullptr && impl_->pack->paired(); }
const PackStats* TokenLoader::pack_stats() const {
  return impl_->pack ? &impl_->pack->stats() : nullptr;
}
std::uint64_t TokenLoader::steps_per_epoch() const { return impl_->sampler->steps_per_epoch(); }
const Manifest& TokenLoader::manifest() const { return impl_->manifest; }
const LoaderConfig& TokenLoader::config() const { return impl_->cfg; }
std::filesystem::path TokenLoader::tokenizer_path() const {
  return impl_->dir / impl_->manifest.tokenizer.file;
}

std::vector<std::string> TokenLoader::reads_in_progress() const {
  return impl_->rows->reads_in_progress();
}

}  // namespace wireup::data
