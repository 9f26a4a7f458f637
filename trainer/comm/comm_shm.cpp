#include "comm/comm_shm.hpp"

#include <unistd.h>

#include <cstdlib>
#include <random>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "comm/shm_group.hpp"
#include "wireup/error.hpp"

namespace wireup::train {
namespace {

class Done final : public Pending {
 public:
  void wait() override {}
};

void expect_cpu(const at::Tensor& t, const char* what) {
  if (!t.device().is_cpu() || !t.is_contiguous())
    throw std::invalid_argument(std::string("shared-memory ") + what +
                                ": needs a contiguous CPU tensor");
}

class ShmComm final : public Comm {
 public:
  explicit ShmComm(std::unique_ptr<ShmGroup> g) : g_(std::move(g)) {}
  int rank() const override { return g_->rank(); }
  int size() const override { return g_->size(); }

  std::unique_ptr<Pending> all_gather(const at::Tensor& shard, const at::Tensor& full) override {
    expect_cpu(shard, "all_gather");
    expect_cpu(full, "all_gather");
    if (full.nbytes() != shard.nbytes() * static_cast<std::size_t>(size()) ||
        full.scalar_type() != shard.scalar_type())
      throw std::invalid_argument("shared-memory all_gather: output is not size x input");
    g_->all_gather(shard.data_ptr(), full.data_ptr(), shard.nbytes());
    return std::make_unique<Done>();
  }

  std::unique_ptr<Pending> reduce_scatter_sum(const at::Tensor& full,
                                              const at::Tensor& shard) override {
    expect_cpu(shard, "reduce_scatter");
    expect_cpu(full, "reduce_scatter");
    const auto n = static_cast<std::size_t>(shard.numel());
    if (static_cast<std::size_t>(full.numel()) != n * static_cast<std::size_t>(size()) ||
        full.scalar_type() != shard.scalar_type())
      throw std::invalid_argument("shared-memory reduce_scatter: input is not size x output");
    if (full.scalar_type() == at::kFloat)
      g_->reduce_scatter_sum(full.data_ptr<float>(), shard.data_ptr<float>(), n);
    else if (full.scalar_type() == at::kDouble)
      g_->reduce_scatter_sum(full.data_ptr<double>(), shard.data_ptr<double>(), n);
    else
      throw std::invalid_argument("shared-memory reduce_scatter: fp32 or fp64 only");
    return std::make_unique<Done>();
  }

  void all_reduce_sum(const at::Tensor& t) override {
    expect_cpu(t, "all_reduce");
    const auto n = static_cast<std::size_t>(t.numel());
    if (t.scalar_type() == at::kFloat)
      g_->all_reduce_sum(t.data_ptr<float>(), n);
    else if (t.scalar_type() == at::kDouble)
      g_->all_reduce_sum(t.data_ptr<double>(), n);
    else
      throw std::invalid_argument("shared-memory all_reduce: fp32 or fp64 only");
  }
  void broadcast(const at::Tensor& t, int root) override {
    expect_cpu(t, "broadcast");
    g_->broadcast(t.data_ptr(), t.nbytes(), root);
  }
  void barrier() override { g_->barrier(); }
  std::string exited_member() const override { return g_->exited_member(); }

 private:
  std::unique_ptr<ShmGroup> g_;
};

void put(c10d::Store& s, const std::string& key, const std::string& v) {
  s.set(key, std::vector<std::uint8_t>(v.begin(), v.end()));
}
std::string take(c10d::Store& s, const std::string& key) {
  const auto v = s.get(key);
  return {v.begin(), v.end()};
}

}  // namespace

bool shm_comm_wanted() {
  const char* v = std::getenv("WIREUP_CPU_COMM");
  if (v == nullptr || *v == '\0' || std::string(v) == "shm") return true;
  if (std::string(v) == "gloo") return false;
  throw InputError(std::string("WIREUP_CPU_COMM=") + v + ": expected shm or gloo");
}

std::shared_ptr<Comm> make_shm_comm(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                    int size, std::string* why) {
  std::unique_ptr<ShmGroup> g;
  // Removes rank 0's name on every way out, a store timeout included: no segment outlives
  // the start-up in /dev/shm.
  const auto unlink = [](ShmGroup* p) { p->unlink(); };
  std::unique_ptr<ShmGroup, decltype(unlink)> gone(nullptr, unlink);
  std::string mine;  // this rank's failure, empty if none
  if (rank == 0) {
    std::random_device rd;
    const std::string name = "/wireup-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
    try {
      g = ShmGroup::create(name, size);
      gone.reset(g.get());
      put(*store, "shm/name", name);
    } catch (const ShmUnavailable& e) {
      mine = e.what();
      put(*store, "shm/name", "!" + mine);
    }
  } else {
    const std::string name = take(*store, "shm/name");
    if (name.rfind('!', 0) == 0) {
      mine = "rank 0: " + name.substr(1);
    } else {
      try {
        g = ShmGroup::attach(name, rank, size);
      } catch (const ShmUnavailable& e) {
        mine = e.what();
      }
    }
  }
  put(*store, "shm/ok" + std::to_string(rank), mine.empty() ? "ok" : mine);
  std::string first;  // every rank reads every answer: all decide alike
  for (int r = 0; r < size; ++r) {
    const std::string a =
        r == rank ? (mine.empty() ? "ok" : mine) : take(*store, "shm/ok" + std::to_string(r));
    if (a != "ok" && first.empty()) first = "rank " + std::to_string(r) + ": " + a;
  }
  gone.reset();  // rank 0: everyone has attached or given up; the name goes
  if (!first.empty()) {
    if (why) *why = first;
    return nullptr;
  }
  g->barrier();  // the first phase: every rank's pid is in the header
  return std::make_shared<ShmComm>(std::move(g));
}

}  // namespace wireup::train
