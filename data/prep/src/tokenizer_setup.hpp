#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "progress.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/data/shard_format.hpp"
#include "wireup/prep/input_files.hpp"
#include "wireup/prep/prep.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

// Internal to wireup-prep: the tokenizer a run encodes with.
namespace wireup::prep {

struct RunTokenizer {
  std::optional<tokenizer::Tokenizer> model;  // always set by setup_tokenizer
  std::string name;                           // for messages: "tokenizer 'PATH'"
  data::TokenizerEntry entry;                 // for the manifest
  // What each document starts and ends with (data::kNoToken: nothing).
  std::uint32_t bos = data::kNoToken, eos = data::kNoToken;
};

// --tokenizer's model, or (--vocab-size) a SentencePiece model trained on a
// reservoir sample of the input's lines, deterministic from --seed. InputError
// when the model is unreadable, the input has no text to train on, or the
// model lacks a BOS/EOS the options ask for.
RunTokenizer setup_tokenizer(const PrepOptions& o, const std::vector<InputFile>& files,
                             Progress& progress);

}  // namespace wireup::prep
