#include "wireup/inspect/inspect_format.hpp"

#include <string>

#include "wireup/text.hpp"

namespace wireup::prep {
namespace {

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string id_or_none(std::int64_t id) { return id < 0 ? "none" : std::to_string(id); }

}  // namespace

std::string format_header(const DatasetFacts& f) {
  std::string s;
  const auto line = [&s](const std::string& key, const std::string& value) {
    s += key;
    s.append(key.size() < 12 ? 12 - key.size() : 1, ' ');
    s += value + "\n";
  };
  line("dataset", f.manifest + (f.created_by.empty() ? "" : " (" + f.created_by + ")"));
  line("tokenizer", f.tokenizer_type + ", " + f.tokenizer_file + " (source: " + f.tokenizer_source +
                        "), sha256 " + f.tokenizer_sha256);
  line("decoded by", f.decoder);
  line("vocabulary", plural(f.vocab_size, "piece", "pieces") + ", bos " + id_or_none(f.bos_id) +
                         (f.add_bos ? " (before every document)" : " (not added)") + ", eos " +
                         id_or_none(f.eos_id) +
                         (f.add_eos ? " (after every document)" : " (not added)"));
  line("token type",
       f.token_bytes == 2 ? "uint16 (2 bytes, little-endian)" : "uint32 (4 bytes, little-endian)");
  for (const auto& sp : f.splits)
    line(sp.name, plural(sp.shards, "shard", "shards") + ", " +
                      plural(sp.documents, "document", "documents") + ", " +
                      plural(sp.tokens, "token", "tokens"));
  if (f.chat) {
    const auto& c = *f.chat;
    line("chat",
         c.chat_template + (c.date_string.empty() ? "" : " (Today Date " + c.date_string + ")") +
             ", train on " + c.train_on + ": " +
             plural(c.conversations, "conversation", "conversations") + ", " +
             plural(c.tokens, "token", "tokens") + ", " + std::to_string(c.trained) + " trained" +
             (c.skipped_rows > 0 ? ", " + plural(c.skipped_rows, "bad row", "bad rows") + " skipped"
                                 : std::string()));
  }
  if (f.preference) {
    const auto& p = *f.preference;
    line("preference",
         "pairs (" + p.format +
             (p.chat_template.empty() ? "" : ", chat template " + p.chat_template) +
             "): " + plural(p.pairs, "pair", "pairs") + ", " + plural(p.tokens, "token", "tokens") +
             ", " + std::to_string(p.trained) + " in completions" +
             (p.skipped_rows > 0 ? ", " + plural(p.skipped_rows, "bad row", "bad rows") + " skipped"
                                 : std::string()));
  }
  return s;
}

std::optional<DocRef> next_document(const std::vector<std::uint64_t>& docs_per_shard,
                                    const DocRef& ref) {
  DocRef next{ref.shard, ref.doc + 1, ref.index + 1};
  while (next.shard < docs_per_shard.size() && next.doc >= docs_per_shard[next.shard]) {
    ++next.shard;
    next.doc = 0;
  }
  if (next.shard >= docs_per_shard.size()) return std::nullopt;
  return next;
}

std::optional<DocRef> first_document(const std::vector<std::uint64_t>& docs_per_shard) {
  for (std::size_t shard = 0; shard < docs_per_shard.size(); ++shard)
    if (docs_per_shard[shard] > 0) return DocRef{shard, 0, 0};
  return std::nullopt;
}

std::vector<int> text_ids(const std::vector<std::uint32_t>& ids, std::int64_t bos_id,
                          std::int64_t eos_id) {
  std::size_t begin = 0, end = ids.size();
  if (bos_id >= 0 && end > begin && ids[begin] == static_cast<std::uint64_t>(bos_id)) ++begin;
  if (eos_id >= 0 && end > begin && ids[end - 1] == static_cast<std::uint64_t>(eos_id)) --end;
  std::vector<int> out;
  out.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) out.push_back(static_cast<int>(ids[i]));
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> trained_spans(
    const std::vector<std::uint8_t>& mask) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] == 0) continue;
    if (!out.empty() && out.back().second == i)
      out.back().second = i + 1;
    else
      out.emplace_back(i, i + 1);
  }
  return out;
}

std::string format_document(const DocView& d) {
  std::string s = "\n" + d.split + " document " + std::to_string(d.ref.index) + ": " +
                  d.shard_file + " document " + std::to_string(d.ref.doc) + ", tokens " +
                  std::to_string(d.first_token) + ".." +
                  std::to_string(d.first_token + d.tokens - (d.tokens > 0 ? 1 : 0)) + " (" +
                  plural(d.tokens, "token", "tokens") + ")" +
                  (d.pair_label.empty() ? "" : ": " + d.pair_label) + "\n  ids  ";
  const bool masked = d.mask.size() == d.ids.size() && !d.mask.empty();
  for (std::size_t i = 0; i < d.ids.size(); ++i)
    s += (i > 0 ? " " : "") + std::to_string(d.ids[i]) + (masked && d.mask[i] != 0 ? "*" : "");
  if (d.ids.size() < d.tokens)
    s += " ... (" + std::to_string(d.tokens - d.ids.size()) + " more; --max-tokens)";
  s += "\n  text \"" + escape_text(d.text) + "\"";
  if (d.ids.size() < d.tokens) s += " ...";
  s += "\n";
  if (!masked) return s;
  std::uint64_t trained = 0;
  for (const auto b : d.mask) trained += b;
  s += std::string(d.pair_label.empty() ? "  trained " : "  completion ") +
       std::to_string(trained) + " of " + plural(d.ids.size(), "id", "ids") + " shown (marked *)";
  for (const auto& run : d.trained_runs) s += " \"" + escape_text(run) + "\"";
  return s + "\n";
}

}  // namespace wireup::prep
