#include "preference_rows.hpp"

#include <span>

#include "chunk_feed.hpp"
#include "stop_request.hpp"
#include "wireup/error.hpp"
#include "wireup/prep/documents.hpp"

namespace wireup::prep {

void SkippedPairs::add(const chat::PairError& e, const std::string& where, RowAt at,
                       bool skip_bad_rows) {
  const std::string what = where + ": " + e.what();
  if (!skip_bad_rows) throw InputError(what + " (or pass --skip-bad-rows)");
  if (count++ == 0 || at < first_at) {
    first = what;
    first_at = at;
  }
  ++by_reason[e.reason()];
}

void SkippedPairs::merge(const SkippedPairs& other) {
  if (other.count == 0) return;
  if (count == 0 || other.first_at < first_at) {
    first = other.first;
    first_at = other.first_at;
  }
  count += other.count;
  for (const auto& [reason, n] : other.by_reason) by_reason[reason] += n;
}

chat::RowKind first_row_kind(const std::vector<InputFile>& files, const PrepOptions& o) {
  if (files.empty() || !files.front().jsonl) return chat::RowKind::NotPair;
  DocumentReader reader(files.front(), o.docs);
  Document row;
  return reader.next_row(row) ? chat::preference_row_kind(row.text) : chat::RowKind::NotPair;
}

namespace {

// A pair of the other format than the data set's first row.
void check_format(const chat::PreferencePair& p, bool conversational) {
  if (p.conversational != conversational)
    throw chat::PairError(
        "bad_value", std::string("a ") + (p.conversational ? "conversational" : "text") +
                         " pair in a data set of " + (conversational ? "conversational" : "text") +
                         " pairs (its first row's format)");
}

}  // namespace

std::vector<data::InputEntry> read_pairs(const std::vector<InputFile>& files, const PrepOptions& o,
                                         OrderedPool& pool, SkippedPairs& skipped,
                                         bool conversational) {
  for (const auto& f : files)
    if (!f.jsonl)
      throw InputError(f.path.string() +
                       ": preference pairs are JSONL rows, and this file is read as text "
                       "(name it .jsonl, .jsonl.gz or .jsonl.zst, or pass --format jsonl)");
  const bool skip = o.skip_bad_rows;
  Document row;
  return feed_chunks(files, o, pool, [&](DocumentReader& reader, const InputFile& f, Chunk& chunk) {
    while (reader.next_row(row)) {
      const std::string where = f.path.string() + ":" + std::to_string(row.line);
      const RowAt at{static_cast<std::size_t>(&f - files.data()), row.line};
      try {
        auto pair = chat::parse_preference_row(row.text);
        check_format(pair, conversational);
        chunk.pairs.push_back(std::move(pair));
      } catch (const chat::PairError& e) {
        skipped.add(e, where, at, skip);
        continue;
      }
      chunk.pair_where.push_back(where);
      chunk.pair_at.emplace_back(at.file, at.line);
      chunk.text_bytes += row.text.size();
      return true;
    }
    return false;
  });
}

void encode_pairs(Chunk& c, const chat::PairEncoder& encoder) {
  for (std::size_t i = 0; i < c.pairs.size(); ++i) {
    check_stop();
    try {
      const auto t = encoder.encode(c.pairs[i]);
      c.tokens.insert(c.tokens.end(), t.chosen.begin(), t.chosen.end());
      c.mask.insert(c.mask.end(), t.chosen_mask.begin(), t.chosen_mask.end());
      c.tokens.insert(c.tokens.end(), t.rejected.begin(), t.rejected.end());
      c.mask.insert(c.mask.end(), t.rejected_mask.begin(), t.rejected_mask.end());
      c.lengths.push_back(t.chosen.size());
      c.lengths.push_back(t.rejected.size());
    } catch (const chat::PairError& e) {
      c.pair_errors.push_back(e);
      c.pair_error_at.push_back(i);
      c.lengths.push_back(0);
      c.lengths.push_back(0);
    }
  }
  c.pairs.clear();
  c.pairs.shrink_to_fit();
}

std::uint64_t write_pairs(Chunk& c, SplitWriter& train, SplitWriter& validation,
                          SkippedPairs& skipped, bool skip_bad_rows) {
  std::size_t at = 0, next_error = 0;
  std::uint64_t written = 0;
  const auto doc = [&](std::size_t k) {
    const std::span<const std::uint32_t> ids(c.tokens.data() + at, c.lengths[k]);
    const std::span<const std::uint8_t> mask(c.mask.data() + at, c.lengths[k]);
    at += c.lengths[k];
    return std::pair{ids, mask};
  };
  for (std::size_t i = 0; i < c.validation.size(); ++i) {
    if (next_error < c.pair_error_at.size() && c.pair_error_at[next_error] == i) {
      skipped.add(c.pair_errors[next_error], c.pair_where[i],
                  RowAt{c.pair_at[i].first, c.pair_at[i].second}, skip_bad_rows);
      ++next_error;
      continue;  // its two documents are empty
    }
    const auto [chosen, chosen_mask] = doc(2 * i);
    const auto [rejected, rejected_mask] = doc(2 * i + 1);
    (c.validation[i] != 0 ? validation : train)
        .add_pair(chosen, chosen_mask, rejected, rejected_mask);
    ++written;
  }
  return written;
}

}  // namespace wireup::prep
