#include "chat_rows.hpp"

#include "chunk_feed.hpp"
#include "stop_request.hpp"
#include "wireup/error.hpp"

namespace wireup::prep {
namespace {

[[noreturn]] void not_jsonl(const InputFile& f) {
  throw InputError(
      f.path.string() +
      ": --chat-template reads JSONL, one conversation a line, and this file is "
      "read as text (name it .jsonl, .jsonl.gz or .jsonl.zst, or pass --format jsonl)");
}

}  // namespace

std::vector<data::InputEntry> read_conversations(const std::vector<InputFile>& files,
                                                 const PrepOptions& o, OrderedPool& pool,
                                                 BadRows& bad) {
  for (const auto& f : files)
    if (!f.jsonl) not_jsonl(f);
  Document row;
  return feed_chunks(files, o, pool, [&](DocumentReader& reader, const InputFile& f, Chunk& chunk) {
    while (reader.next_row(row)) {
      try {
        chunk.conversations.push_back(chat::parse_row(row.text));
      } catch (const InputError& e) {
        const std::string what = f.path.string() + ":" + std::to_string(row.line) + ": " + e.what();
        if (!o.skip_bad_rows) throw InputError(what + " (or pass --skip-bad-rows)");
        if (bad.count++ == 0) bad.first = what;
        continue;
      }
      chunk.text_bytes += row.text.size();
      return true;
    }
    return false;
  });
}

void encode_conversations(Chunk& c, const chat::ChatEncoder& encoder) {
  for (const auto& conversation : c.conversations) {
    check_stop();
    const std::size_t before = c.tokens.size();
    encoder.encode(conversation, c.tokens, c.mask);
    c.lengths.push_back(c.tokens.size() - before);
  }
  c.conversations.clear();
  c.conversations.shrink_to_fit();
}

}  // namespace wireup::prep
