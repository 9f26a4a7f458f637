#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ordered_pool.hpp"
#include "wireup/chat/chat_encoder.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/prep/input_files.hpp"
#include "wireup/prep/prep.hpp"

// Internal to wireup-prep: --chat-template's input, one conversation a JSONL
// row, read in input order into the pool's chunks, and its encoding there.
namespace wireup::prep {

// Rows --skip-bad-rows left out: how many, and the first one's message.
struct BadRows {
  std::uint64_t count = 0;
  std::string first;
};

// Every input's rows, in input order, to the pool in chunks (each
// conversation marked train or validation as a document is); returns the
// manifest's list of inputs. A bad row is an InputError naming FILE:LINE,
// or (skip_bad_rows) counted in `bad`.
std::vector<data::InputEntry> read_conversations(const std::vector<InputFile>& files,
                                                 const PrepOptions& o, OrderedPool& pool,
                                                 BadRows& bad);

// On a pool thread: a chunk's conversations to tokens and loss mask.
void encode_conversations(Chunk& c, const chat::ChatEncoder& encoder);

}  // namespace wireup::prep
