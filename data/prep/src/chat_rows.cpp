#include "chat_rows.hpp"

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
  std::vector<data::InputEntry> inputs;
  std::uint64_t index = 0, bytes_before = 0;
  Chunk chunk;
  Document row;
  for (const auto& f : files) {
    if (!f.jsonl) not_jsonl(f);
    DocumentReader reader(f, o.docs);
    std::uint64_t file_rows = 0;
    while (reader.next_row(row)) {
      check_stop();
      chat::Conversation c;
      try {
        c = chat::parse_row(row.text);
      } catch (const InputError& e) {
        const std::string what = f.path.string() + ":" + std::to_string(row.line) + ": " + e.what();
        if (!o.chat->skip_bad_rows) throw InputError(what + " (or pass --skip-bad-rows)");
        if (bad.count++ == 0) bad.first = what;
        continue;
      }
      chunk.text_bytes += row.text.size();
      chunk.validation.push_back(is_validation(o.seed, index++, o.validation_fraction) ? 1 : 0);
      chunk.conversations.push_back(std::move(c));
      ++file_rows;
      if (chunk.text_bytes >= kChunkBytes || chunk.conversations.size() >= kChunkDocs) {
        chunk.bytes_read = bytes_before + reader.raw_offset();
        pool.push(std::move(chunk));
        chunk = Chunk{};
      }
    }
    bytes_before += f.bytes;
    inputs.push_back({f.path.string(), f.bytes, file_rows});
  }
  if (!chunk.conversations.empty()) {
    chunk.bytes_read = bytes_before;
    pool.push(std::move(chunk));
  }
  return inputs;
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
