#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <set>
#include <thread>

#include "fixtures.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/error.hpp"

using namespace wireup;
using namespace wireup::data;
using Catch::Matchers::Contains;

namespace {

// 3 train shards of uneven size (windows cross shard boundaries) and one
// validation shard.
struct Fixture {
  test::TempDir dir;
  Manifest manifest;
  Fixture(std::uint32_t vocab = 50000)
      : manifest(test::write_dataset(dir.path(), {{1000, 1, 2345}, 7}, {{500}, 11}, vocab)) {}
};

LoaderConfig config(const Fixture& f, std::uint64_t context = 64, std::uint64_t batch = 2) {
  LoaderConfig c;
  c.manifest = f.dir.path();
  c.context = context;
  c.batch_size = batch;
  c.seed = 17;
  return c;
}

std::vector<std::vector<std::uint64_t>> all_windows(TokenLoader& loader) {
  std::vector<std::vector<std::uint64_t>> out;
  Batch b;
  while (loader.next(b)) out.push_back(b.windows);
  return out;
}

}  // namespace

TEST_CASE("loader rows are the windows' tokens, across shard boundaries", "[loader]") {
  for (const std::uint32_t vocab : {50000u, 100000u}) {
    Fixture f(vocab);
    for (const auto mode : {ReadMode::Mmap, ReadMode::Pread}) {
      auto c = config(f);
      c.read_mode = mode;
      TokenLoader loader(c);
      CHECK(loader.tokens() == 3346);
      CHECK(loader.windows() == 3345 / 64);
      Batch b;
      std::uint64_t rows = 0;
      while (loader.next(b)) {
        REQUIRE(b.rows == 2);
        REQUIRE(b.cols == 65);
        REQUIRE(b.token_bytes == (vocab > 65536 ? 4u : 2u));
        REQUIRE(b.tokens.size() == b.rows * b.cols * b.token_bytes);
        for (std::uint64_t r = 0; r < b.rows; ++r)
          for (std::uint64_t t = 0; t < b.cols; ++t) {
            const auto want = test::expected_token(b.windows[r] * 64 + t, vocab);
            std::uint64_t got = 0;  // little-endian, token_bytes each
            const std::uint64_t at = r * b.cols + t;
            for (std::uint32_t k = 0; k < b.token_bytes; ++k)
              got |= std::uint64_t{b.tokens[at * b.token_bytes + k]} << (8 * k);
            REQUIRE(got == want);
            REQUIRE(b.token(r, t) == want);
          }
        rows += b.rows;
      }
      CHECK(rows == loader.steps_per_epoch() * 2);
      CHECK(b.data() != nullptr);
    }
  }
}

TEST_CASE("loader ranks are disjoint and cover the split for 1 to 4 ranks", "[loader]") {
  Fixture f;
  for (const std::uint64_t world : {1, 2, 3, 4}) {
    std::set<std::uint64_t> seen;
    std::uint64_t count = 0, windows = 0;
    for (std::uint64_t r = 0; r < world; ++r) {
      auto c = config(f, 64, 1);
      c.rank = r;
      c.world_size = world;
      TokenLoader loader(c);
      windows = loader.windows();
      for (const auto& w : all_windows(loader)) {
        seen.insert(w[0]);
        ++count;
      }
    }
    CAPTURE(world);
    CHECK(seen.size() == count);
    CHECK(count == windows / world * world);
  }
}

TEST_CASE("loader orders differ by epoch, repeat by seed", "[loader]") {
  Fixture f;
  auto c = config(f, 32, 4);
  c.epochs = 2;
  TokenLoader a(c);
  const auto run = all_windows(a);
  const auto per = a.steps_per_epoch();
  REQUIRE(run.size() == 2 * per);
  const std::vector<std::vector<std::uint64_t>> e0(run.begin(),
                                                   run.begin() + static_cast<long>(per));
  const std::vector<std::vector<std::uint64_t>> e1(run.begin() + static_cast<long>(per), run.end());
  CHECK(e0 != e1);
  TokenLoader again(c);
  CHECK(all_windows(again) == run);
  c.seed = 18;
  TokenLoader other(c);
  CHECK(all_windows(other) != run);
}

TEST_CASE("seek to a saved position gives exactly the uninterrupted batches", "[loader]") {
  Fixture f;
  auto c = config(f, 32, 3);
  c.epochs = 3;
  c.prefetch = 3;
  std::vector<Batch> straight;
  std::vector<Position> before;
  {
    TokenLoader loader(c);
    CHECK(loader.position() == Position{17, 0, 0, 0});
    Batch b;
    while (true) {
      before.push_back(loader.position());
      if (!loader.next(b)) break;
      CHECK(loader.position() == b.after);
      straight.push_back(b);
    }
  }
  REQUIRE(straight.size() ==
          std::size_t{3 * 34});  // 3345/32 = 104 windows, 104/3 = 34 steps per epoch
  for (const std::size_t k : {std::size_t{1}, std::size_t{33}, std::size_t{34}, std::size_t{70}}) {
    CAPTURE(k);
    // A new process: fresh loader, position restored from its JSON.
    TokenLoader resumed(c);
    Batch b;
    resumed.next(b);  // consume something first: seek must discard prefetched batches
    resumed.seek(position_from_json(position_to_json(before[k]), "ckpt"));
    CHECK(resumed.position() == before[k]);
    for (std::size_t i = k; i < straight.size(); ++i) {
      REQUIRE(resumed.next(b));
      REQUIRE(b.windows == straight[i].windows);
      REQUIRE(b.tokens == straight[i].tokens);
    }
    CHECK_FALSE(resumed.next(b));
    CHECK_FALSE(resumed.next(b));
  }
}

TEST_CASE("synchronous loading (prefetch 0) matches prefetched loading", "[loader]") {
  Fixture f;
  auto c = config(f, 50, 2);
  c.max_steps = 40;
  c.epochs = 0;
  TokenLoader a(c);
  const auto wa = all_windows(a);
  CHECK(wa.size() == 40);
  for (const auto mode : {ReadMode::Mmap, ReadMode::Pread}) {
    auto more = c;
    more.read_mode = mode;
    more.workers = 4;
    more.readahead = 6;  // kernel hints only: same batches
    TokenLoader m(more);
    CHECK(all_windows(m) == wa);
  }
  c.prefetch = 0;
  TokenLoader b(c);
  CHECK(all_windows(b) == wa);
}

TEST_CASE("every prefetch depth and worker count gives the synchronous batches", "[loader]") {
  // The ring of prefetch slots, claims by several workers, the caller
  // helping, workers sleeping on a full ring (a slow caller) and seeks in
  // the middle of a run: the batches, tokens included, never change. These
  // batches are small, so prefetch 8 and 32 hand over blocks of 2 and 8
  // steps, and the run's end falls inside a block.
  for (const std::uint32_t vocab : {50000u, 100000u}) {
    Fixture f(vocab);
    auto c = config(f, 40, 3);
    c.epochs = 2;
    c.max_steps = 50;  // ends inside the second epoch (27 steps each)
    auto sync = c;
    sync.prefetch = 0;
    std::vector<Batch> want;
    {
      TokenLoader loader(sync);
      for (Batch b; loader.next(b);) want.push_back(b);
    }
    REQUIRE(want.size() == 50);
    const auto same = [&](const Batch& got, std::size_t i) {
      REQUIRE(i < want.size());
      REQUIRE(got.windows == want[i].windows);
      REQUIRE(got.after == want[i].after);
      REQUIRE(got.epoch == want[i].epoch);
      REQUIRE(got.tokens == want[i].tokens);
    };
    for (const std::size_t prefetch : {1, 2, 3, 8, 32}) {
      for (const std::size_t workers : {1, 2, 4}) {
        CAPTURE(vocab, prefetch, workers);
        auto p = c;
        p.prefetch = prefetch;
        p.workers = workers;
        TokenLoader loader(p);
        Batch b;
        std::size_t i = 0;
        for (; loader.next(b); ++i) {
          same(b, i);
          // Now and then a slow step: the workers fill the ring and sleep.
          if (i % 7 == 3) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        CHECK(i == want.size());
        CHECK_FALSE(loader.next(b));
        // Seeks mid-run, backwards and forwards, with batches in flight.
        for (const std::size_t k :
             {std::size_t{30}, std::size_t{5}, std::size_t{26}, std::size_t{49}}) {
          loader.seek(k == 0 ? Position{c.seed, 0, 0, 0} : want[k - 1].after);
          for (std::size_t j = k; j < std::min(want.size(), k + 6); ++j) {
            REQUIRE(loader.next(b));
            same(b, j);
          }
        }
        loader.seek(Position{c.seed, 0, 0, 0});
        for (i = 0; loader.next(b); ++i) same(b, i);
        CHECK(i == want.size());
      }
    }
  }
}

TEST_CASE("the caller may hand next() any Batch: fresh, alternating, kept", "[loader]") {
  // Buffers go back to the pool of the thread that filled them; a Batch the
  // loader never filled, or one filled by another thread, only changes
  // whose pool a buffer joins, never the rows.
  Fixture f;
  auto c = config(f, 40, 3);
  c.epochs = 2;
  auto sync = c;
  sync.prefetch = 0;
  std::vector<Batch> want;
  {
    TokenLoader loader(sync);
    for (Batch b; loader.next(b);) want.push_back(b);
  }
  for (const std::size_t workers : {1, 2}) {
    CAPTURE(workers);
    auto p = c;
    p.prefetch = 3;
    p.workers = workers;
    TokenLoader loader(p);
    Batch two[2];
    std::vector<Batch> kept;
    for (std::size_t i = 0;; ++i) {
      Batch fresh;
      Batch& b = i % 3 == 2 ? fresh : two[i % 2];
      if (!loader.next(b)) {
        CHECK(i == want.size());
        break;
      }
      REQUIRE(i < want.size());
      REQUIRE(b.windows == want[i].windows);
      REQUIRE(b.tokens == want[i].tokens);
      if (i % 5 == 0) kept.push_back(std::move(b));  // never handed back
    }
  }
}

TEST_CASE("validation split reads the manifest's validation shards in order", "[loader]") {
  Fixture f;
  auto c = config(f, 100, 1);
  c.split = Split::Validation;
  c.shuffle = false;
  TokenLoader loader(c);
  CHECK(loader.tokens() == 500);
  const auto w = all_windows(loader);
  REQUIRE(w.size() == 4);
  for (std::size_t i = 0; i < w.size(); ++i) CHECK(w[i][0] == i);
  // Reading it again: seek back to the start.
  loader.seek(Position{c.seed, 0, 0, 0});
  CHECK(all_windows(loader).size() == 4);
}

TEST_CASE("loader rejects broken data sets at open, naming the file", "[loader]") {
  Fixture f;
  const auto shard = f.dir / "train-1.bin";
  const auto manifest = f.dir / "manifest.json";
  SECTION("truncated shard") {
    const auto bytes = test::read_file(f.dir / "train-2.bin");
    test::write_file(f.dir / "train-2.bin", bytes.substr(0, bytes.size() / 2));
    CHECK_THROWS_WITH(TokenLoader(config(f)), Contains("train-2.bin") && Contains("truncated"));
  }
  SECTION("corrupted token byte: checksum") {
    auto bytes = test::read_file(f.dir / "train-2.bin");
    bytes[5000] ^= 0x20;
    test::write_file(f.dir / "train-2.bin", bytes);
    CHECK_THROWS_WITH(TokenLoader(config(f)),
                      Contains("train-2.bin: SHA-256") && Contains("does not match"));
    auto c = config(f);
    c.verify = Verify::SizesOnly;
    CHECK_NOTHROW(TokenLoader(c));
    // Partitioned: only the rank that owns shard 2 (2 % 2 == 0) notices.
    c.verify = Verify::Partitioned;
    c.world_size = 2;
    c.rank = 1;
    CHECK_NOTHROW(TokenLoader(c));
    c.rank = 0;
    CHECK_THROWS_WITH(TokenLoader(c), Contains("train-2.bin: SHA-256"));
  }
  SECTION("missing shard") {
    std::filesystem::remove(shard);
    CHECK_THROWS_WITH(TokenLoader(config(f)),
                      Contains("train-1.bin") && Contains("open: No such file"));
  }
  SECTION("shard from another data set") {
    const Fixture other;
    std::filesystem::copy_file(other.dir / "train-0.bin", f.dir / "train-2.bin",
                               std::filesystem::copy_options::overwrite_existing);
    CHECK_THROWS_WITH(TokenLoader(config(f)),
                      Contains("train-2.bin: token count 1000 in the shard header but 2345"));
  }
  SECTION("corrupted manifest") {
    auto text = test::read_file(manifest);
    test::write_file(manifest, text.substr(0, text.size() / 2));
    CHECK_THROWS_WITH(TokenLoader(config(f)), Contains("manifest.json: not valid JSON"));
  }
  SECTION("missing manifest") {
    std::filesystem::remove(manifest);
    CHECK_THROWS_WITH(TokenLoader(config(f)), Contains("manifest.json: cannot read manifest"));
  }
  SECTION("too little data for the context") {
    CHECK_THROWS_WITH(TokenLoader(config(f, 4000)), Contains("fewer than one window of 4001"));
    auto c = config(f, 1000, 4);
    c.world_size = 2;
    CHECK_THROWS_WITH(TokenLoader(c), Contains("cannot fill one step"));
  }
}

TEST_CASE("errors in the prefetch thread surface in next()", "[loader]") {
  // Prefetch 32 hands over blocks of 8 small batches: the error comes after
  // the batches of its block that were read.
  for (const std::size_t prefetch : {1, 32}) {
    CAPTURE(prefetch);
    Fixture f;
    auto c = config(f, 64, 1);
    c.read_mode = ReadMode::Pread;
    c.prefetch = prefetch;
    c.epochs = 0;
    TokenLoader loader(c);
    // Shrink a shard under the running loader: the next pread past the end fails.
    std::filesystem::resize_file(f.dir / "train-2.bin", 4096);
    Batch b;
    bool threw = false;
    try {
      for (int i = 0; i < 10000; ++i) loader.next(b);
    } catch (const InputError& e) {
      threw = true;
      CHECK_THAT(e.what(), Contains("train-2.bin"));
    }
    CHECK(threw);
    CHECK_THROWS_AS(loader.next(b), InputError);  // and it stays failed
  }
}

TEST_CASE("destroying a loader with a full ring returns promptly", "[loader]") {
  // An endless run (epochs 0): the workers fill the ring while the caller
  // sleeps, then sleep on the full ring themselves; the destructor must wake
  // and join them. It runs on a thread of its own so that a hang fails this
  // assertion instead of the test's timeout.
  Fixture f;
  for (const std::size_t workers : {1, 3}) {
    auto c = config(f, 16, 1);
    c.prefetch = 2;
    c.workers = workers;
    c.epochs = 0;
    auto sync = c;
    sync.prefetch = 0;
    Batch first;
    TokenLoader(sync).next(first);
    for (int i = 0; i < 10; ++i) {
      CAPTURE(workers, i);
      auto loader = std::make_unique<TokenLoader>(c);
      Batch b;
      REQUIRE(loader->next(b));
      CHECK(b.windows == first.windows);
      std::this_thread::sleep_for(std::chrono::milliseconds(i % 3 == 0 ? 20 : 0));
      auto done = std::make_shared<std::promise<void>>();
      auto finished = done->get_future();
      std::thread([l = loader.release(), done] {
        delete l;
        done->set_value();
      }).detach();
      REQUIRE(finished.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    }
  }
}

TEST_CASE("reads in progress: none at rest; a stuck read names its shard and byte", "[loader]") {
  Fixture f;
  {
    // Synchronous: once next() has returned, no read is in flight.
    auto c = config(f);
    c.prefetch = 0;
    TokenLoader loader(c);
    Batch b;
    for (int i = 0; i < 5 && loader.next(b); ++i) {
    }
    CHECK(loader.reads_in_progress().empty());
  }
  {
    // Prefetching: the workers go on reading after next() returns, and come to
    // rest once the ring is full; waits for that with a 30 s deadline.
    auto c = config(f);
    TokenLoader loader(c);
    Batch b;
    for (int i = 0; i < 5 && loader.next(b); ++i) {
    }
    bool rested = false;
    for (int i = 0; i < 3000 && !rested; ++i) {
      rested = loader.reads_in_progress().empty();
      if (!rested) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(rested);
  }
  // WIREUP_TEST_STALL_SHARD: every row of that shard is a read that never
  // returns. The loader stays alive with its reader for the rest of the
  // process (a real stuck read cannot be taken back either).
  const auto stuck = f.manifest.train.shards.at(2).file;  // 2345 tokens from token 1001
  ::setenv("WIREUP_TEST_STALL_SHARD", stuck.c_str(), 1);
  auto c = config(f);
  c.prefetch = 0;
  auto* loader = new TokenLoader(c);
  ::unsetenv("WIREUP_TEST_STALL_SHARD");
  std::thread([loader] {
    Batch b;
    while (loader->next(b)) {
    }
  }).detach();
  // A poll may also catch an ordinary read of another shard in flight (under
  // TSan, often): wait for the stuck one's entry.
  const std::string prefix = (f.dir.path() / stuck).string() + " at byte ";
  std::string entry;
  for (int i = 0; i < 3000 && entry.empty(); ++i) {  // up to 30 s (TSan, loaded)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (const std::string& r : loader->reads_in_progress())
      if (r.rfind(prefix, 0) == 0) entry = r;
  }
  REQUIRE_FALSE(entry.empty());
  const auto byte = std::stoull(entry.substr(prefix.size()));
  CHECK(byte >= 4096);
  CHECK(byte < 4096 + 2345 * 2);
}
