#include "watchdog/recorded_comm.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "comm/collective_deadline.hpp"
#include "profile/step_trace.hpp"
#include "profile/straggler.hpp"
#include "watchdog/flight_recorder.hpp"

namespace wireup::train {
namespace {

// A group: its name and the world rank of each of its ranks.
struct GroupInfo {
  const char* name;
  std::vector<int> world_rank;
  WorldLayout w;
  std::string host;
};

// Prints the stall line and the flight record, then ends the process at once:
// unwinding would wait on threads (prefetch, checkpoint writer) that may be
// inside collectives with the stalled rank themselves.
[[noreturn]] void end_stalled(const GroupInfo& g, const CollectiveRecord& c, const PeerStalled& e) {
  const int node = g.w.rank / g.w.local_world;
  std::vector<RankPlace> missing;
  for (const int r : e.missing) {
    const int world = r < static_cast<int>(g.world_rank.size()) ? g.world_rank[r] : r;
    const int its_node = world / g.w.local_world;
    missing.push_back(
        {world, its_node == node ? "host " + g.host : "node " + std::to_string(its_node)});
  }
  const auto line = format_stall_line(g.w.rank, "host " + g.host, c, e.waited_s, missing);
  const auto json = flight_record_json(g.w.rank, g.host, flight_recorder().records(),
                                       flight_recorder().last_completed());
  std::fprintf(stderr, "%s\nwireup-train[rank %d]: %s\nwireup-train[rank %d]: flight record: %s\n",
               line.c_str(), g.w.rank, e.what(), g.w.rank, json.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(kExitPeerStalled);
}

// The calling thread's time inside one collective call: counted as time not
// computing (profile/straggler.hpp) and, in a --profile_steps window, one
// trace span named after the collective (its unit: the record's).
class CollectiveTimer {
 public:
  CollectiveTimer(const CollectiveRecord& c, const char* span)
      : span_(span),
        unit_(c.unit),
        t0_(std::chrono::steady_clock::now()),
        trace_(step_trace().on()),
        trace_t0_(trace_ ? StepTrace::now_us() : 0) {}
  ~CollectiveTimer() {
    add_collective_seconds(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
    if (trace_) step_trace().add(span_, unit_, trace_t0_, StepTrace::now_us() - trace_t0_);
  }
  CollectiveTimer(const CollectiveTimer&) = delete;
  CollectiveTimer& operator=(const CollectiveTimer&) = delete;

 private:
  const char* span_;
  int unit_;
  std::chrono::steady_clock::time_point t0_;
  bool trace_;
  std::int64_t trace_t0_;
};

// The trace span of waiting for an issued collective ("all_gather wait");
// issuing one, or a collective that only blocks, is its kind.
const char* wait_span(const char* kind) {
  if (std::strcmp(kind, "all_gather") == 0) return "all_gather wait";
  if (std::strcmp(kind, "reduce_scatter") == 0) return "reduce_scatter wait";
  return kind;
}

// Runs `wait` as collective `seq` of group `g`: completed, failed or stalled.
template <typename F>
void recorded_wait(const GroupInfo& g, std::uint64_t seq, const CollectiveRecord& c, F&& wait) {
  const CollectiveTimer timer(c, wait_span(c.kind));
  try {
    wait();
  } catch (const PeerStalled& e) {
    flight_recorder().end(seq, CollectiveState::TimedOut);
    end_stalled(g, c, e);
  } catch (...) {
    flight_recorder().end(seq, CollectiveState::Failed);
    throw;
  }
  flight_recorder().end(seq, CollectiveState::Completed);
}

class RecordedPending final : public Pending {
 public:
  RecordedPending(std::unique_ptr<Pending> inner, const GroupInfo& g, CollectiveRecord c)
      : inner_(std::move(inner)), g_(g), c_(c) {}
  void wait() override {
    recorded_wait(g_, c_.seq, c_, [&] { inner_->wait(); });
  }

 private:
  std::unique_ptr<Pending> inner_;
  const GroupInfo& g_;
  CollectiveRecord c_;
};

class RecordedComm final : public Comm {
 public:
  RecordedComm(std::shared_ptr<Comm> inner, GroupInfo g)
      : inner_(std::move(inner)), g_(std::move(g)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string exited_member() const override { return inner_->exited_member(); }

  std::unique_ptr<Pending> all_gather(const at::Tensor& shard, const at::Tensor& full) override {
    const auto c = start("all_gather", full.nbytes());
    std::unique_ptr<Pending> p;
    recorded_issue(c, [&] { p = inner_->all_gather(shard, full); });
    return std::make_unique<RecordedPending>(std::move(p), g_, c);
  }
  std::unique_ptr<Pending> reduce_scatter_sum(const at::Tensor& full,
                                              const at::Tensor& shard) override {
    const auto c = start("reduce_scatter", full.nbytes());
    std::unique_ptr<Pending> p;
    recorded_issue(c, [&] { p = inner_->reduce_scatter_sum(full, shard); });
    return std::make_unique<RecordedPending>(std::move(p), g_, c);
  }
  void all_reduce_sum(const at::Tensor& t) override {
    const auto c = start("all_reduce", t.nbytes());
    recorded_wait(g_, c.seq, c, [&] { inner_->all_reduce_sum(t); });
  }
  void broadcast(const at::Tensor& t, int root) override {
    const auto c = start("broadcast", t.nbytes());
    recorded_wait(g_, c.seq, c, [&] { inner_->broadcast(t, root); });
  }
  void barrier() override {
    const auto c = start("barrier", 0);
    recorded_wait(g_, c.seq, c, [&] { inner_->barrier(); });
  }

 private:
  CollectiveRecord start(const char* kind, std::size_t bytes) {
    CollectiveRecord c;
    c.kind = kind;
    c.group = g_.name;
    c.bytes = bytes;
    c.unit = UnitScope::current();
    c.seq = flight_recorder().begin(kind, g_.name, bytes, c.unit);
    return c;
  }
  // Issuing may itself wait (shared memory runs the whole collective here).
  template <typename F>
  void recorded_issue(const CollectiveRecord& c, F&& issue) {
    const CollectiveTimer timer(c, c.kind);
    try {
      issue();
    } catch (const PeerStalled& e) {
      flight_recorder().end(c.seq, CollectiveState::TimedOut);
      end_stalled(g_, c, e);
    } catch (...) {
      flight_recorder().end(c.seq, CollectiveState::Failed);
      throw;
    }
  }

  std::shared_ptr<Comm> inner_;
  GroupInfo g_;
};

std::shared_ptr<Comm> wrap(const std::shared_ptr<Comm>& c, const char* name,
                           std::vector<int> world_rank, const WorldLayout& w,
                           const std::string& host) {
  if (!c || c->size() <= 1) return c;
  return std::make_shared<RecordedComm>(c, GroupInfo{name, std::move(world_rank), w, host});
}

// The world group's ranks: 0, 1, ..., world - 1.
std::vector<int> world_ranks(const WorldLayout& w) {
  std::vector<int> all(static_cast<std::size_t>(w.world));
  for (int r = 0; r < w.world; ++r) all[r] = r;
  return all;
}

}  // namespace

namespace {

// The stalled-rank line of a backend's own thread (NCCL's watch): the
// collective as "nccl" in its communicator's group, this rank's host.
void print_stall_line(int rank, const std::string& group, double waited_s,
                      const std::vector<int>& missing, const std::string& detail) {
  CollectiveRecord c;
  c.kind = "nccl";
  c.group = group.c_str();
  std::vector<RankPlace> places;
  for (const int r : missing) places.push_back({r, "rank in group " + group});
  std::fprintf(stderr, "%s\nwireup-train: %s\n",
               format_stall_line(rank, "host " + this_host(), c, waited_s, places).c_str(),
               detail.c_str());
}

}  // namespace

CommGroups started_groups(const WorldLayout& w, const char* kind,
                          const std::function<CommGroups()>& make) {
  set_stall_reporter(print_stall_line);  // the backends' threads report through the watchdog
  const auto seq = flight_recorder().begin(kind, "world", 0);
  try {
    auto groups = make();
    flight_recorder().end(seq, CollectiveState::Completed);
    return groups;
  } catch (const PeerStalled& e) {
    flight_recorder().end(seq, CollectiveState::TimedOut);
    CollectiveRecord c;
    c.seq = seq;
    c.kind = kind;
    c.group = "world";
    end_stalled(GroupInfo{"world", world_ranks(w), w, this_host()}, c, e);
  }
}

CommGroups recorded_groups(const CommGroups& g, const WorldLayout& w, Sharding sharding) {
  const std::string host = this_host();
  CommGroups out;
  out.world = wrap(g.world, "world", world_ranks(w), w, host);
  const auto same_as_world = [&](const std::shared_ptr<Comm>& c) { return c == g.world; };
  if (sharding != Sharding::Hybrid) {
    out.shard = same_as_world(g.shard) ? out.world : g.shard;
    out.replicate = same_as_world(g.replicate) ? out.world : g.replicate;
    return out;
  }
  // Hybrid (ranks node-major): shard groups are a node's ranks, replicate
  // groups the ranks with this local rank on every node.
  const int node = w.rank / w.local_world, nodes = w.world / w.local_world;
  std::vector<int> mine, peers;
  for (int i = 0; i < w.local_world; ++i) mine.push_back(node * w.local_world + i);
  for (int n = 0; n < nodes; ++n) peers.push_back(n * w.local_world + w.local_rank);
  out.shard = wrap(g.shard, "shard", mine, w, host);
  out.replicate = wrap(g.replicate, "replicate", peers, w, host);
  return out;
}

}  // namespace wireup::train
