#include "main/train_batches.hpp"

#include <cstdio>
#include <string>

#include "main/run_setup.hpp"
#include "wireup/error.hpp"

namespace wireup::train {

namespace wd = wireup::data;

namespace {

std::string fixed4(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", v);
  return text;
}

// A chat data set: packed conversations, each batch with its loss mask and
// segments (batch/document_layout.hpp).
void say_chat_packing(const TrainOptions& o, const WorldLayout& w, const wd::TokenLoader& loader,
                      const wd::PackStats& p) {
  say(w, "[data] chat data set: packed windows=" + std::to_string(p.windows) +
             " conversations=" + std::to_string(p.documents) +
             " efficiency=" + fixed4(p.efficiency()) + " truncated=" + std::to_string(p.truncated) +
             " untrained=" + std::to_string(p.untrained) +
             " document_masking=" + std::to_string(o.document_masking ? 1 : 0) +
             " template=" + loader.manifest().chat->chat_template);
  // Cut to the window, a conversation whose prompt fills it trains nothing.
  if (p.documents > 0 && p.untrained == p.documents)
    throw InputError(o.data.dataset.string() +
                     ": every conversation is longer than a window (--max_context_width " +
                     std::to_string(o.model.context) + " + 1 tokens) and keeps no trained " +
                     "token once cut to it: nothing would be trained; raise " +
                     "--max_context_width above the conversations' prompts");
}

// A preference data set: packed pairs (the loader's pair mode), cut
// keep_start or dropped when their prompt fills a row.
void say_pair_packing(const TrainOptions& o, const WorldLayout& w, const wd::PackStats& p) {
  say(w, "[data] preference data set: packed windows=" + std::to_string(p.windows) +
             " pairs=" + std::to_string(p.pairs) + " efficiency=" + fixed4(p.efficiency()) +
             " truncated_pairs=" + std::to_string(p.truncated_pairs) +
             " dropped_pairs=" + std::to_string(p.dropped_pairs));
  if (p.pairs == 0 || p.windows == 0)
    throw InputError(o.data.dataset.string() + ": no pair fits a window (--max_context_width " +
                     std::to_string(o.model.context) + " + 1 tokens; " +
                     std::to_string(p.dropped_pairs) +
                     " dropped because their prompts fill it): raise --max_context_width");
}

}  // namespace

std::unique_ptr<TokenBatches> open_batches(const TrainOptions& o, const WorldLayout& w,
                                           wd::Split split, std::int64_t batch) {
  wd::BatchSourceConfig c = o.data;  // --dataset, --epochs, --data_readahead, --seed
  c.split = split;
  c.context = static_cast<std::uint64_t>(o.model.context);
  c.batch_size = static_cast<std::uint64_t>(batch);
  c.rank = static_cast<std::uint64_t>(w.rank);
  c.world_size = static_cast<std::uint64_t>(w.world);
  // Pairs: the chosen and rejected documents of a pair share a row, and
  // must not see each other (docs/dpo.md). Checked before the loader opens,
  // whose own checks (enough windows) would otherwise speak first.
  if (!o.document_masking && !o.data.dataset.empty() &&
      wd::load_manifest(wd::manifest_path(o.data.dataset)).preference)
    throw InputError(o.data.dataset.string() +
                     ": a preference data set trains with --document_masking 1 (a pair's "
                     "chosen and rejected completions share a row and must not attend to each "
                     "other); drop --document_masking 0");
  auto batches = std::make_unique<TokenBatches>(c, o.model.vocab, o.document_masking);
  const wd::TokenLoader* loader = batches->source().loader();
  if (!loader) return batches;
  const auto vocab = loader->manifest().tokenizer.vocab_size;
  if (vocab > static_cast<std::uint64_t>(o.model.vocab))
    throw InputError("--vocab_size " + std::to_string(o.model.vocab) +
                     " is smaller than the vocabulary of " + o.data.dataset.string() + " (" +
                     std::to_string(vocab) + " tokens): pass --vocab_size " +
                     std::to_string(vocab) + " or more");
  const wd::PackStats* p = loader->pack_stats();
  if (!p || split != wd::Split::Train) return batches;
  if (loader->paired())
    say_pair_packing(o, w, *p);
  else
    say_chat_packing(o, w, *loader, *p);
  return batches;
}

}  // namespace wireup::train
