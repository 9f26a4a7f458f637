// ShmGroup's collectives among real processes: this process is rank 0 (it
// makes the segment), forked children attach as the other ranks and run the
// same calls, each checking its own results and reporting by exit code. Small
// halves force every collective through several chunks.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "comm/shm_group.hpp"

using wireup::train::ShmGroup;
using wireup::train::ShmUnavailable;

namespace {

std::string fresh_name() {
  static int n = 0;
  return "/wireup-test-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

// Rank r's contribution: distinct per rank and element, not exactly summable
// in any order, so a sum in another order would differ in its last bits.
template <typename T>
std::vector<T> values(int rank, std::size_t n) {
  std::mt19937 gen(static_cast<unsigned>(1000 + rank));
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(gen) * (1 + rank));
  return v;
}

// Every collective once, with sizes that do not divide into the chunks; true
// when this rank's results are exactly what rank-order sums give.
bool exercise(ShmGroup& g) {
  const int r = g.rank(), P = g.size();
  bool ok = true;
  // all_gather of an odd byte count
  const std::size_t bytes = 1001;
  std::vector<unsigned char> shard(bytes), full(bytes * static_cast<std::size_t>(P));
  for (std::size_t i = 0; i < bytes; ++i) shard[i] = static_cast<unsigned char>(r * 31 + i);
  g.all_gather(shard.data(), full.data(), bytes);
  for (int k = 0; k < P; ++k)
    for (std::size_t i = 0; i < bytes; ++i)
      ok &= full[k * bytes + i] == static_cast<unsigned char>(k * 31 + i);
  // reduce_scatter, fp32 and fp64
  const std::size_t n = 517;
  auto rs = [&](auto tag) {
    using T = decltype(tag);
    std::vector<std::vector<T>> all;
    for (int k = 0; k < P; ++k) all.push_back(values<T>(k, n * static_cast<std::size_t>(P)));
    std::vector<T> out(n);
    g.reduce_scatter_sum(all[static_cast<std::size_t>(r)].data(), out.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      T want = all[0][r * n + i];
      for (int k = 1; k < P; ++k) want += all[static_cast<std::size_t>(k)][r * n + i];
      ok &= out[i] == want;
    }
  };
  rs(float{});
  rs(double{});
  // all_reduce, fp32 and fp64: every rank the same bits
  auto ar = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> data = values<T>(r, n);
    g.all_reduce_sum(data.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      T want = values<T>(0, n)[i];
      for (int k = 1; k < P; ++k) want += values<T>(k, n)[i];
      ok &= data[i] == want;
    }
  };
  ar(float{});
  ar(double{});
  // broadcast from the last rank
  std::vector<unsigned char> b(777, static_cast<unsigned char>(r));
  g.broadcast(b.data(), b.size(), P - 1);
  for (auto x : b) ok &= x == static_cast<unsigned char>(P - 1);
  // empty collectives keep the ranks in step too
  g.all_gather(nullptr, nullptr, 0);
  g.all_reduce_sum(static_cast<float*>(nullptr), 0);
  g.barrier();
  return ok;
}

// Forks ranks 1..size-1, each attaching and running `child`; returns their pids.
std::vector<pid_t> spawn(const std::string& name, int size,
                         const std::function<int(ShmGroup&)>& child) {
  std::vector<pid_t> pids;
  for (int r = 1; r < size; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int rc = 3;
      try {
        auto g = ShmGroup::attach(name, r, size);
        rc = child(*g);
      } catch (...) {
        rc = 4;
      }
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  return pids;
}

int exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("shared-memory collectives give rank-order sums and exact copies, 2 to 4 processes") {
  for (int size : {2, 3, 4}) {
    INFO("ranks " << size);
    const std::string name = fresh_name();
    auto g = ShmGroup::create(name, size, 256);  // 256-byte halves: many chunks
    const auto pids = spawn(name, size, [](ShmGroup& c) {
      const bool first = exercise(c), second = exercise(c);  // both, whatever the first gave
      return first && second ? 0 : 1;
    });
    CHECK(exercise(*g));
    CHECK(exercise(*g));  // and again: the halves' parity and phases carry on
    g->unlink();
    for (pid_t p : pids) CHECK(exit_code(p) == 0);
  }
}

TEST_CASE("a rank that exits mid-job is named by the ranks waiting for it") {
  const std::string name = fresh_name();
  auto g = ShmGroup::create(name, 2, 256);
  const auto pids = spawn(name, 2, [](ShmGroup& c) {
    c.barrier();
    return 0;  // gone before the second barrier
  });
  g->set_timeout(std::chrono::seconds(30));
  g->barrier();
  const auto t0 = std::chrono::steady_clock::now();
  // not reaped until after: an exited rank that is still a zombie counts as gone
  CHECK_THROWS_WITH(g->barrier(), Catch::Contains("rank 1") && Catch::Contains("exited"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  CHECK(exit_code(pids[0]) == 0);
  g->unlink();
}

TEST_CASE(
    "exited_member: none while the ranks live; a rank gone (zombie or reaped) by rank and pid") {
  const std::string name = fresh_name();
  auto g = ShmGroup::create(name, 3, 256);
  const auto pids = spawn(name, 3, [](ShmGroup& c) {
    c.barrier();  // attached: its pid is in the header
    c.barrier();
    if (c.rank() == 1) return 0;
    c.barrier();  // rank 2 waits for rank 1 here, and finds it gone
    return 0;
  });
  g->set_timeout(std::chrono::seconds(30));
  g->barrier();
  CHECK(g->exited_member().empty());  // both wait at the second barrier
  g->barrier();
  // Rank 1 is leaving (waits up to 30 s): a zombie (not reaped yet) counts as gone.
  std::string who;
  for (int i = 0; i < 3000 && who.empty(); ++i) {
    who = g->exited_member();
    if (who.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(who == "rank 1 (pid " + std::to_string(pids[0]) + ")");
  CHECK(exit_code(pids[0]) == 0);
  CHECK(g->exited_member() == who);  // reaped: gone all the same
  CHECK_THROWS_WITH(g->barrier(), Catch::Contains("rank 1") && Catch::Contains("exited"));
  CHECK(exit_code(pids[1]) == 4);  // rank 2's barrier threw the same
  g->unlink();
}

TEST_CASE("a rank that never answers ends in a timeout, not a hang") {
  const std::string name = fresh_name();
  auto g = ShmGroup::create(name, 2, 256);
  const auto pids = spawn(name, 2, [](ShmGroup&) {
    ::sleep(20);  // alive, attached, silent
    return 0;
  });
  g->set_timeout(std::chrono::milliseconds(300));
  CHECK_THROWS_WITH(g->barrier(), Catch::Contains("waited"));
  ::kill(pids[0], SIGKILL);
  CHECK(exit_code(pids[0]) == 128 + SIGKILL);
  g->unlink();
}

TEST_CASE("attaching to a missing or mismatched segment is ShmUnavailable, with the reason") {
  const std::string name = fresh_name();
  CHECK_THROWS_AS(ShmGroup::attach(name, 1, 2), ShmUnavailable);
  auto g = ShmGroup::create(name, 2, 256);
  CHECK_THROWS_WITH(ShmGroup::create(name, 2, 256), Catch::Contains("shm_open"));  // taken
  CHECK_THROWS_WITH(ShmGroup::attach(name, 1, 3), Catch::Contains("made for 2 ranks"));
  CHECK_THROWS_WITH(ShmGroup::attach(name, 0, 2), Catch::Contains("attached as rank 0"));
  CHECK_THROWS_WITH(ShmGroup::create(fresh_name(), 0), Catch::Contains("0 ranks"));
  g->unlink();
  CHECK_THROWS_AS(ShmGroup::attach(name, 1, 2), ShmUnavailable);  // the name is gone
  CHECK_THROWS_WITH(g->broadcast(nullptr, 0, 2), Catch::Contains("broadcast from rank 2"));
}
