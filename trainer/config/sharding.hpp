#pragma once
#include <string>

namespace wireup::train {

// How parameters are spread over the ranks (--sharding_strategy): across all
// ranks, within each node and replicated across nodes, or not at all.
enum class Sharding { Full, Hybrid, None };

// "full", "hybrid", "none".
const char* sharding_name(Sharding s);

// --sharding_strategy's value as the flag's check leaves it: "hybrid" or
// "HYBRID_SHARD" -> Hybrid, "none" or "NO_SHARD" -> None, anything else Full.
Sharding parse_sharding(const std::string& name);

}  // namespace wireup::train
