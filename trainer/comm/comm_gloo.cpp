#include "comm/comm_gloo.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "comm/collective_deadline.hpp"
#include "comm/comm_shm.hpp"
#include "comm/job_store.hpp"
#include "comm/peer_comm.hpp"

namespace wireup::train {
namespace {

// Waits at most collective_timeout() (read now: --comm_timeout once training
// runs, though Gloo's own context keeps the start-up one). A timeout, this
// wait's ("Operation timed out!") or Gloo's ("Timed out waiting 600000ms for
// recv operation"), becomes PeerStalled with the ranks not arrived; other
// errors pass.
void wait_named(c10d::Work& work, c10d::Store& store, int rank, int size, std::uint64_t n) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    work.wait(collective_timeout());
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (what.find("Timed out") == std::string::npos && what.find("timed out") == std::string::npos)
      throw;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The store is served by rank 0 (or the launcher): a stopped rank 0 never
    // answers, so ask from a thread and give up after the grace period + 5 s.
    auto ask = std::make_shared<std::packaged_task<std::vector<int>()>>([&store, rank, size, n] {
      return ranks_not_at(store, "wd/at/", rank, size, n, not_arrived_grace());
    });
    auto answer = ask->get_future();
    std::thread([ask] { (*ask)(); }).detach();
    const auto grace = not_arrived_grace();
    std::string detail = "Gloo collective: " + what.substr(0, what.find('\n'));
    std::vector<int> missing;
    if (answer.wait_for(grace + std::chrono::seconds(5)) == std::future_status::ready)
      missing = answer.get();
    else
      detail +=
          " (the job's TCPStore did not answer either: its server, rank 0 or the "
          "launcher, may be the stalled one)";
    throw PeerStalled(std::move(missing), waited, detail);
  }
}

// Where a collective's wait reports a stall: its group's store, its number.
struct Ticket {
  c10d::Store* store;
  int rank, size;
  std::uint64_t n;
};

class GlooPending final : public Pending {
 public:
  GlooPending(c10::intrusive_ptr<c10d::Work> w, Ticket t) : work_(std::move(w)), t_(t) {}
  void wait() override { wait_named(*work_, *t_.store, t_.rank, t_.size, t_.n); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  Ticket t_;
};

// The second half of reduce_scatter_sum: every rank's copy of this rank's
// slice arrived in `received` ([world, n]); their sum is the result.
class SumPending final : public Pending {
 public:
  SumPending(c10::intrusive_ptr<c10d::Work> w, Ticket t, at::Tensor received, at::Tensor shard,
             int world)
      : work_(std::move(w)),
        t_(t),
        received_(std::move(received)),
        shard_(std::move(shard)),
        world_(world) {}
  void wait() override {
    wait_named(*work_, *t_.store, t_.rank, t_.size, t_.n);
    at::sum_out(shard_, received_.view({world_, shard_.numel()}), {0});
    received_ = at::Tensor();
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  Ticket t_;
  at::Tensor received_, shard_;
  int world_;
};

class GlooComm final : public Comm {
 public:
  GlooComm(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg, c10::intrusive_ptr<c10d::Store> store)
      : pg_(std::move(pg)), store_(std::move(store)) {}
  int rank() const override { return pg_->getRank(); }
  int size() const override { return pg_->getSize(); }

  std::unique_ptr<Pending> all_gather(const at::Tensor& shard, const at::Tensor& full) override {
    // Gloo's c10d allgather takes a list of outputs: views into `full`.
    const auto n = shard.numel();
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < size(); ++r) out[0].push_back(full.narrow(0, r * n, n));
    std::vector<at::Tensor> in{shard};
    c10d::AllgatherOptions o;
    o.timeout = collective_timeout();
    return std::make_unique<GlooPending>(pg_->allgather(out, in, o), ticket());
  }

  // c10d's Gloo has no reduce_scatter in LibTorch 1.13. An all-to-all moves
  // the same bytes as a true one (each rank receives every rank's copy of its
  // own slice), half of an all-reduce's; the sum is local, after the wait.
  std::unique_ptr<Pending> reduce_scatter_sum(const at::Tensor& full,
                                              const at::Tensor& shard) override {
    at::Tensor in = full, out = at::empty_like(full);
    std::vector<std::int64_t> even;  // empty: equal chunks
    c10d::AllToAllOptions o;
    o.timeout = collective_timeout();
    auto work = pg_->alltoall_base(out, in, even, even, o);
    return std::make_unique<SumPending>(std::move(work), ticket(), out, shard, size());
  }

  void all_reduce_sum(const at::Tensor& t) override {
    std::vector<at::Tensor> v{t};
    c10d::AllreduceOptions o;
    o.timeout = collective_timeout();
    run(pg_->allreduce(v, o));
  }
  void broadcast(const at::Tensor& t, int root) override {
    std::vector<at::Tensor> v{t};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    o.timeout = collective_timeout();
    run(pg_->broadcast(v, o));
  }
  void barrier() override {
    c10d::BarrierOptions o;
    o.timeout = collective_timeout();
    run(pg_->barrier(o));
  }

 private:
  // Each collective's number in this group, the same on every rank.
  Ticket ticket() { return {store_.get(), rank(), size(), ++count_}; }
  void run(const c10::intrusive_ptr<c10d::Work>& w) {
    const Ticket t = ticket();
    wait_named(*w, *t.store, t.rank, t.size, t.n);
  }

  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::uint64_t count_ = 0;
};

std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  // Loopback rendezvous (one host, emulated nodes): stay on loopback.
  if (master_addr.rfind("127.", 0) == 0)
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// A group whose ranks all share a node talks through shared memory
// (comm_shm.hpp) unless WIREUP_CPU_COMM=gloo; Gloo otherwise, and wherever the
// segment cannot be made (all ranks of the group agree on which).
std::shared_ptr<Comm> group(const c10::intrusive_ptr<c10d::Store>& store, const std::string& prefix,
                            int rank, int size,
                            const std::shared_ptr<::gloo::transport::Device>& dev,
                            bool node_local) {
  if (size == 1) return make_solo_comm();
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
  const std::string name = prefix.substr(0, prefix.size() - 1);
  if (node_local && shm_comm_wanted()) {
    std::string why;
    if (auto c = make_shm_comm(prefixed, rank, size, &why)) {
      if (rank == 0) std::printf("[comm] group=%s ranks=%d transport=shm\n", name.c_str(), size);
      return c;
    }
    if (rank == 0)
      std::printf("[comm] group=%s ranks=%d transport=gloo (no shared memory: %s)\n", name.c_str(),
                  size, why.c_str());
  } else if (rank == 0) {
    std::printf("[comm] group=%s ranks=%d transport=gloo\n", name.c_str(), size);
  }
  auto opts = c10d::ProcessGroupGloo::Options::create();
  opts->devices.push_back(dev);
  opts->timeout = collective_timeout();  // --comm_init_timeout at start-up
  return std::make_shared<GlooComm>(
      c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank, size, opts), prefixed);
}

// The peer group: Gloo's point-to-point send and recv, its own connections.
class GlooPeerComm final : public PeerComm {
 public:
  GlooPeerComm(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg, std::chrono::milliseconds timeout)
      : pg_(std::move(pg)), timeout_(timeout) {}
  int rank() const override { return pg_->getRank(); }
  int size() const override { return pg_->getSize(); }

  void exchange(const at::Tensor& send, int to, const at::Tensor& recv, int from) override {
    std::vector<at::Tensor> out{send}, in{recv};
    c10::intrusive_ptr<c10d::Work> s, r;
    if (recv.defined()) r = pg_->recv(in, from, kTag);
    if (send.defined()) s = pg_->send(out, to, kTag);
    if (r) r->wait(timeout_);
    if (s) s->wait(timeout_);
  }
  void all_gather(const at::Tensor& mine, const at::Tensor& all) override {
    const auto n = mine.numel();
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < size(); ++r) out[0].push_back(all.narrow(0, r * n, n));
    std::vector<at::Tensor> in{mine};
    c10d::AllgatherOptions o;
    o.timeout = timeout_;
    pg_->allgather(out, in, o)->wait(timeout_);
  }
  void barrier() override {
    c10d::BarrierOptions o;
    o.timeout = timeout_;
    pg_->barrier(o)->wait(timeout_);
  }

 private:
  static constexpr int kTag = 36;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<PeerComm> make_peer_comm(const WorldLayout& w, const std::string& key,
                                         std::chrono::milliseconds timeout) {
  if (w.world == 1) return nullptr;
  const auto store = shared_job_store(w);  // the one the training groups rendezvous through
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>(key + "/", store);
  auto opts = c10d::ProcessGroupGloo::Options::create();
  opts->devices.push_back(gloo_device(w.master_addr));
  opts->timeout = timeout;
  if (w.rank == 0) std::printf("[comm] group=%s ranks=%d transport=gloo\n", key.c_str(), w.world);
  return std::make_unique<GlooPeerComm>(
      c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, w.rank, w.world, opts), timeout);
}

CommGroups make_gloo_groups(const WorldLayout& w, Sharding sharding) {
  if (w.world == 1) return make_solo_groups();
  const auto store = shared_job_store(w);
  const auto dev = gloo_device(w.master_addr);
  // Ranks are node-major: a node's ranks form the hybrid shard groups; the
  // world is one node's only when local_world covers it.
  const bool one_node = w.world == w.local_world;
  return arrange_groups(w, sharding, group(store, "world/", w.rank, w.world, dev, one_node),
                        [&](const std::string& key, int rank, int size) {
                          const bool local = one_node || key.rfind("shard", 0) == 0;
                          return group(store, key + "/", rank, size, dev, local);
                        });
}

}  // namespace wireup::train
