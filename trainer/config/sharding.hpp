#pragma once

namespace wireup::train {

// How parameters are spread over the ranks (--sharding_strategy): across all
// ranks, within each node and replicated across nodes, or not at all.
enum class Sharding { Full, Hybrid, None };

// "full", "hybrid", "none".
const char* sharding_name(Sharding s);

}  // namespace wireup::train
