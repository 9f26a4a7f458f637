#pragma once
#include <cstdint>
#include <memory>

#include "batch/batch_tokens.hpp"
#include "comm/world_layout.hpp"
#include "config/train_options.hpp"
#include "wireup/data/batch_source.hpp"

namespace wireup::train {

// One split's batches for this rank: from wireup-prep shards, or
// deterministic random tokens (the same global batch for every world size:
// rank r takes rows r*B..). The training split of a data set says what it
// holds on rank 0: a chat data set's packing ("[data] chat data set: ..."),
// a preference data set's pairs ("[data] preference data set: ..."). A data
// set whose vocabulary is larger than --vocab_size, a chat set where no
// conversation keeps a trained token, and a preference set with
// --document_masking 0 or without one pair that fits are refused
// (InputError naming the flag or the data set).
std::unique_ptr<TokenBatches> open_batches(const TrainOptions& o, const WorldLayout& w,
                                           data::Split split, std::int64_t batch);

}  // namespace wireup::train
