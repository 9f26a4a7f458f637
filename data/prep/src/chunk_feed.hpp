#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ordered_pool.hpp"
#include "stop_request.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/prep/documents.hpp"
#include "wireup/prep/input_files.hpp"
#include "wireup/prep/prep.hpp"

// Internal to wireup-prep: every input's items (documents, or chat
// conversations), in input order, to the pool in chunks, each item marked
// train or validation by its index (is_validation).
namespace wireup::prep {

// `read_one(reader, file, chunk)` appends the file's next item to `chunk`
// (adding its bytes to chunk.text_bytes) and returns true, or returns false
// at the file's end. Returns the manifest's list of inputs.
template <class ReadOne>
std::vector<data::InputEntry> feed_chunks(const std::vector<InputFile>& files, const PrepOptions& o,
                                          OrderedPool& pool, ReadOne&& read_one) {
  std::vector<data::InputEntry> inputs;
  std::uint64_t index = 0, bytes_before = 0;
  Chunk chunk;
  const auto hand_over = [&](std::uint64_t bytes_read) {
    chunk.bytes_read = bytes_read;
    pool.push(std::move(chunk));
    chunk = Chunk{};
  };
  for (const auto& f : files) {
    DocumentReader reader(f, o.docs);
    std::uint64_t file_items = 0;
    while (read_one(reader, f, chunk)) {
      check_stop();
      chunk.validation.push_back(is_validation(o.seed, index++, o.validation_fraction) ? 1 : 0);
      ++file_items;
      if (chunk.text_bytes >= kChunkBytes || chunk.validation.size() >= kChunkDocs)
        hand_over(bytes_before + reader.raw_offset());
    }
    bytes_before += f.bytes;
    inputs.push_back({f.path.string(), f.bytes, file_items});
  }
  if (!chunk.validation.empty()) hand_over(bytes_before);
  return inputs;
}

}  // namespace wireup::prep
