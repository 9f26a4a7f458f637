#pragma once
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "comm/collective_deadline.hpp"  // kExitPeerStalled

// The collective watchdog's plain-C++ half (no Torch): the flight recorder of
// a rank's last collectives, and what a rank prints when a peer stalls (the
// deadline itself is comm's: comm/collective_deadline.hpp) (docs/reliability.md, "A stalled
// rank").
namespace wireup::train {


enum class CollectiveState : std::uint8_t { Started, Completed, TimedOut, Failed };

// One collective as the recorder keeps it: fixed-size, no allocation.
struct CollectiveRecord {
  std::uint64_t seq = 0;   // 1, 2, ... over every group of this rank
  const char* kind = "";   // a string literal: "all_gather", "barrier", ...
  const char* group = "";  // a string literal: "world", "shard", "replicate"
  int unit = -1;           // the FSDP unit, -1 when not known
  std::uint64_t bytes = 0;
  std::int64_t start_us = 0, end_us = 0;  // microseconds since the epoch; end 0: not ended
  CollectiveState state = CollectiveState::Started;
};

// A fixed ring of the last kCapacity collectives of this rank. begin() and
// end() take a mutex held for a few stores (collectives may start from more
// than one thread); nothing allocates.
class FlightRecorder {
 public:
  static constexpr std::size_t kCapacity = 64;
  std::uint64_t begin(const char* kind, const char* group, std::uint64_t bytes, int unit = -1);
  void end(std::uint64_t seq, CollectiveState state);
  // The highest sequence number that completed (0: none).
  std::uint64_t last_completed() const;
  // Oldest first: at most kCapacity records.
  std::vector<CollectiveRecord> records() const;

 private:
  mutable std::mutex m_;
  std::array<CollectiveRecord, kCapacity> ring_{};
  std::uint64_t next_ = 1;
  std::uint64_t last_completed_ = 0;
};

// The process's recorder.
FlightRecorder& flight_recorder();

const char* state_name(CollectiveState s);

// The recorder as one JSON object: {"rank":R,"host":H,"last_completed":N,
// "collectives":[{"seq",...,"state"},...]}, oldest first.
std::string flight_record_json(int rank, const std::string& host,
                               const std::vector<CollectiveRecord>& records,
                               std::uint64_t last_completed);

// This machine's host name ("?" when it has none).
std::string this_host();

// Where a rank of the world runs: its host when known, else its node.
struct RankPlace {
  int rank = 0;
  std::string where;  // "host node-a" or "node 1"
};

// The one line a rank prints when a peer stalls, e.g.
// "wireup-train: peer stalled: rank 0 (host a) waited 5.0 s in all_reduce #812
// (group world, 4 bytes); not arrived: rank 1 (host a)".
std::string format_stall_line(int rank, const std::string& my_where, const CollectiveRecord& c,
                              double waited_s, const std::vector<RankPlace>& missing);

}  // namespace wireup::train
