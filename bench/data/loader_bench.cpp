// Loader read throughput against a raw sequential read of the same shards,
// in one run: both are read once to warm the page cache (dropping caches
// needs root and would measure the disk, not the loader), then repetitions
// of each are interleaved so drift in the machine hits both alike.
// Prints a markdown section; bench/data/run.sh drives it.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "wireup/data/loader.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/data/permutation.hpp"
#include "wireup/data/shard_writer.hpp"
#include "wireup/file_io.hpp"

namespace fs = std::filesystem;
using namespace wireup::data;

namespace {

struct Args {
  fs::path dir;
  std::uint64_t mb = 1024;
  unsigned shards = 4;
  std::uint64_t context = 2048;
  std::uint64_t batch = 8;
  int reps = 5;
  std::uint32_t vocab = 32000;
  bool keep_cache = false;  // measure the files as the page cache holds them now
  bool make_only = false;   // write the shards (if missing) and stop: for trainer_wait.sh
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds of the whole process (all threads): a second view that other
// load on a shared machine distorts less than wall time.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double wall = 0, cpu = 0;
};

// Random tokens in documents of 100..4000 tokens: the shape of real shards.
void make_dataset(const Args& a) {
  fs::create_directories(a.dir);
  const std::uint64_t width = token_bytes_for_vocab(a.vocab);
  const std::uint64_t per_shard = a.mb * 1000000 / width / a.shards;
  Manifest m;
  m.token_bytes = static_cast<std::uint32_t>(width);
  m.tokenizer = {"sentencepiece", "tokenizer.model", std::string(64, '0'), "bench", a.vocab, 1, 2};
  std::uint64_t rng = 1;
  std::vector<std::uint32_t> doc;
  for (unsigned s = 0; s < a.shards; ++s) {
    const std::string name = "train-" + std::to_string(s) + ".bin";
    ShardWriter w(a.dir / name, a.vocab, 1, 2);
    while (w.token_count() < per_shard) {
      const std::uint64_t len =
          std::min<std::uint64_t>(100 + splitmix64_next(rng) % 3900, per_shard - w.token_count());
      doc.resize(len);
      for (auto& t : doc) t = static_cast<std::uint32_t>(splitmix64_next(rng) % a.vocab);
      w.add_document(doc);
    }
    ShardEntry e{name, 0, w.token_count(), w.doc_count(), ""};
    e.sha256 = w.finish();
    e.bytes = w.file_bytes();
    m.train.shards.push_back(e);
  }
  m.created_by = "wireup-bench-loader";
  wireup::io::write_atomically(a.dir / "manifest.json", manifest_to_json(m));
}

// Plain read() of every shard in 8 MiB requests: the ceiling for the loader.
// The buffer is page-aligned, as cat and dd align theirs: the kernel's copy
// into a buffer 16 bytes past a 64-byte boundary can run at half the speed
// (the report's "16 bytes past alignment" row shows it on the host), and a
// plain std::vector lands there or not depending on malloc's history
// (glibc's mmap'd chunks start 16 bytes into a page; heap chunks anywhere). `offset` adds
// such a misalignment, for the informational row only.
Timing raw_read(const Manifest& m, const fs::path& dir, std::uint64_t& bytes,
                std::size_t offset = 0) {
  constexpr std::size_t kBuf = std::size_t{8} << 20;
  static const std::unique_ptr<char, decltype(&std::free)> storage(
      static_cast<char*>(std::aligned_alloc(4096, kBuf + 4096)), &std::free);
  char* const buf = storage.get() + offset;
  bytes = 0;
  unsigned sink = 0;
  const double t0 = now(), c0 = cpu_now();
  for (const auto& s : m.train.shards) {
    const int fd = ::open((dir / s.file).c_str(), O_RDONLY);
    if (fd < 0) std::abort();
    for (ssize_t n; (n = ::read(fd, buf, kBuf)) > 0;) {
      bytes += static_cast<std::uint64_t>(n);
      sink += static_cast<unsigned char>(buf[static_cast<std::size_t>(n) - 1]);
    }
    ::close(fd);
  }
  const Timing t{now() - t0, cpu_now() - c0};
  if (sink == 1) std::puts("");  // keep the reads observable
  return t;
}

// One epoch through TokenLoader, as the training loop would consume it.
struct Variant {
  const char* name = "";
  LoaderConfig config;
  bool fresh = false;  // a new loader (new mappings) every pass, as a job's first epoch
  std::unique_ptr<TokenLoader> loader;
  std::vector<double> gbps, cpu_gbps;
};

LoaderConfig base_config(const Args& a) {
  LoaderConfig c;
  c.manifest = a.dir;
  c.context = a.context;
  c.batch_size = a.batch;
  c.verify = Verify::SizesOnly;  // opening is timed separately
  c.seed = 1;
  return c;
}

// One epoch through TokenLoader, as the training loop would consume it. A
// kept loader seeks back to the start: the steady state of a long job.
Timing loader_pass(Variant& v, std::uint64_t& bytes) {
  if (v.fresh || !v.loader) {
    v.loader.reset();
    v.loader = std::make_unique<TokenLoader>(v.config);
  } else {
    v.loader->seek(Position{v.config.seed, 0, 0, 0});
  }
  const double t0 = now(), c0 = cpu_now();
  Batch b;
  std::uint64_t rows = 0;
  std::int64_t sink = 0;
  while (v.loader->next(b)) {
    rows += b.rows;
    sink += static_cast<const unsigned char*>(b.data())[0];
  }
  const Timing t{now() - t0, cpu_now() - c0};
  if (sink == -1) std::puts("");
  bytes = rows * (v.config.context + 1) * v.loader->manifest().token_bytes;
  return t;
}

double open_seconds(LoaderConfig c, Verify verify) {
  c.verify = verify;
  const double t0 = now();
  const TokenLoader loader(c);
  return now() - t0;
}

// Drops the shards from the page cache (they are written and synced, so
// clean), so that they come back the way a job's data does: by a read. The
// writer leaves them cached in small folios; a read on a file system with
// large folios (ext4 and xfs on recent kernels) brings them in as 2 MiB
// folios, which the loader's mapping (MADV_HUGEPAGE) can map whole. Advice
// only: where the kernel ignores it, the files simply stay cached.
void evict(const Manifest& m, const fs::path& dir) {
  for (const auto& s : m.train.shards) {
    const int fd = ::open((dir / s.file).c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// KiB of this process's file mappings mapped with 2 MiB page table entries
// (smaps_rollup): how much of the shards the loader reads without a 4 KiB
// TLB entry per page.
std::uint64_t file_pmd_kib() {
  std::uint64_t pmd = 0;
  FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (f == nullptr) return 0;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long v = 0;
    if (std::sscanf(line, "FilePmdMapped: %llu kB", &v) == 1) pmd = v;
  }
  std::fclose(f);
  return pmd;
}

// ns for one cache line to go from one thread's write to the other's read
// (a ping-pong of 200,000 round trips): low where the host keeps the two
// threads' cores in one core complex, several times higher where it does not.
// The report prints it per repetition next to the loader's rate.
double handoff_ns() {
  alignas(64) std::atomic<long> turn{0};
  constexpr long kTrips = 200000;
  std::thread other([&] {
    for (long i = 1; i < 2 * kTrips; i += 2) {
      while (turn.load(std::memory_order_acquire) != i) {
      }
      turn.store(i + 1, std::memory_order_release);
    }
  });
  const double t0 = now();
  for (long i = 0; i < 2 * kTrips; i += 2) {
    while (turn.load(std::memory_order_acquire) != i) {
    }
    turn.store(i + 1, std::memory_order_release);
  }
  const double t = now() - t0;
  other.join();
  return t / (2.0 * kTrips) * 1e9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool parse_args(int argc, char** argv, Args& a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir")
      a.dir = v;
    else if (k == "--mb")
      a.mb = std::stoull(v);
    else if (k == "--shards")
      a.shards = static_cast<unsigned>(std::stoul(v));
    else if (k == "--context")
      a.context = std::stoull(v);
    else if (k == "--batch")
      a.batch = std::stoull(v);
    else if (k == "--reps")
      a.reps = std::stoi(v);
    else if (k == "--vocab")
      a.vocab = static_cast<std::uint32_t>(std::stoul(v));
    else if (k == "--keep-cache")
      a.keep_cache = v == "1";
    else if (k == "--make-only")
      a.make_only = v == "1";
    else {
      std::fprintf(stderr,
                   "usage: %s --dir DIR [--mb 1024] [--shards 4] [--context 2048] "
                   "[--batch 8] [--reps 5] [--vocab 32000] [--keep-cache 0|1] [--make-only 0|1]\n",
                   argv[0]);
      return false;
    }
  }
  if (a.dir.empty()) {
    std::fprintf(stderr, "wireup-bench-loader: --dir is required\n");
    return false;
  }
  return true;
}

// The loader configurations timed. The first is wireup-train's, the one the
// verdict is about.
std::vector<Variant> make_variants(const Args& a) {
  std::vector<Variant> variants;
  const auto add = [&](const char* name, auto edit, bool fresh = false) {
    Variant v;
    v.name = name;
    v.config = base_config(a);
    edit(v.config);
    v.fresh = fresh;
    variants.push_back(std::move(v));
  };
  add("loader as wireup-train reads (mmap, stored uint16 rows)", [](LoaderConfig&) {});
  add(
      "same, new loader each pass", [](LoaderConfig&) {}, true);
  add("same, no read-ahead threads (prefetch 0)", [](LoaderConfig& c) { c.prefetch = 0; });
  add("same, 2 workers", [](LoaderConfig& c) { c.workers = 2; });
  add("pread", [](LoaderConfig& c) { c.read_mode = ReadMode::Pread; });
  add("readahead 8 steps (FSx setting)", [](LoaderConfig& c) { c.readahead = 8; });
  return variants;
}

// What the raw reads and the machine measured (the variants hold their own
// rates), GB/s per repetition.
struct Measured {
  std::vector<double> raw, raw_cpu, raw16, raw16_cpu, handoff;
  std::uint64_t pmd_kib = 0;  // the verdict loader's mappings with 2 MiB entries
  double open_verify = 0, open_sizes = 0;
};

// Everything once to warm up (which also pages the evicted files back in),
// then the repetitions, each reading the raw files and every variant.
Measured measure(const Args& a, const Manifest& m, std::vector<Variant>& variants) {
  Measured out;
  std::uint64_t bytes = 0;
  raw_read(m, a.dir, bytes);
  loader_pass(variants[0], bytes);
  out.pmd_kib = file_pmd_kib();  // the verdict loader's mappings only, so far
  for (std::size_t i = 1; i < variants.size(); ++i) loader_pass(variants[i], bytes);
  for (int r = 0; r < a.reps; ++r) {
    out.handoff.push_back(handoff_ns());
    Timing t = raw_read(m, a.dir, bytes);
    out.raw.push_back(static_cast<double>(bytes) / t.wall / 1e9);
    out.raw_cpu.push_back(static_cast<double>(bytes) / t.cpu / 1e9);
    t = raw_read(m, a.dir, bytes, 16);
    out.raw16.push_back(static_cast<double>(bytes) / t.wall / 1e9);
    out.raw16_cpu.push_back(static_cast<double>(bytes) / t.cpu / 1e9);
    for (auto& v : variants) {
      t = loader_pass(v, bytes);
      v.gbps.push_back(static_cast<double>(bytes) / t.wall / 1e9);
      v.cpu_gbps.push_back(static_cast<double>(bytes) / t.cpu / 1e9);
    }
  }
  for (auto& v : variants) v.loader.reset();
  out.open_verify = open_seconds(base_config(a), Verify::All);
  out.open_sizes = open_seconds(base_config(a), Verify::SizesOnly);
  return out;
}

std::uint64_t shard_bytes(const Manifest& m) {
  std::uint64_t total = 0;
  for (const auto& s : m.train.shards) total += s.bytes;
  return total;
}

// The heading, the table of variants and the verdict; returns the verdict's ratio.
double print_table(const Args& a, const Manifest& m, const std::vector<Variant>& variants,
                   const Measured& x) {
  const double raw_med = median(x.raw);
  std::printf("## data: loader read throughput\n\n");
  std::printf(
      "%zu shards, %.0f MB of %u-byte tokens (page cache warm), context %llu, batch %llu, "
      "1 rank, shuffled windows, %d interleaved repetitions; GB/s of token bytes "
      "delivered to the caller (the raw read goes into a page-aligned 8 MiB buffer). Loaders "
      "are kept across passes and seek back to the start, as in a multi-epoch job, except "
      "the 'new loader' row, which also pays for mapping the files.\n\n",
      m.train.shards.size(), static_cast<double>(shard_bytes(m)) / 1e6, m.token_bytes,
      static_cast<unsigned long long>(a.context), static_cast<unsigned long long>(a.batch), a.reps);
  std::printf(
      "| variant | median GB/s | min | max | ratio to raw read | GB per CPU-second |\n"
      "| --- | --- | --- | --- | --- | --- |\n");
  const auto row = [&](const char* name, const std::vector<double>& v,
                       const std::vector<double>& c) {
    std::printf("| %s | %.2f | %.2f | %.2f | %.3f | %.2f |\n", name, median(v),
                *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()),
                median(v) / raw_med, median(c));
  };
  row("raw sequential read() (8 MiB, page-aligned buffer)", x.raw, x.raw_cpu);
  row("raw read(), buffer 16 bytes past alignment (not a baseline)", x.raw16, x.raw16_cpu);
  for (const auto& v : variants) row(v.name, v.gbps, v.cpu_gbps);
  const double ratio = median(variants[0].gbps) / raw_med;
  std::printf("\nLoader as wireup-train reads / raw read: **%.3f** — %s\n", ratio,
              ratio >= 0.9 ? "PASS (>= 0.90)" : "FAIL (< 0.90)");
  return ratio;
}

// The cache-line handoff per repetition, and the verdict's ratio split by it.
void print_handoff(const Variant& verdict, const Measured& x) {
  std::printf(
      "\nCache-line handoff between two threads before each repetition (ns; tens "
      "where the cores share a core complex, over a hundred where they do not):");
  for (const double h : x.handoff) std::printf(" %.0f", h);
  std::printf(".\n");
  std::vector<double> near, far;
  for (std::size_t r = 0; r < x.handoff.size(); ++r)
    (x.handoff[r] < 80 ? near : far).push_back(verdict.gbps[r] / x.raw[r]);
  const auto split = [](const char* name, const std::vector<double>& v) {
    if (v.empty()) return std::printf("%s: no repetition", name);
    return std::printf("%s: %.3f (%zu repetitions)", name, median(v), v.size());
  };
  std::printf("Loader / raw read by repetition, ");
  split("handoff under 80 ns", near);
  std::printf("; ");
  split("80 ns or more", far);
  std::printf(".\n");
}

// The page cache and 2 MiB mappings; the cost of opening.
void print_notes(const Args& a, const Manifest& m, const Measured& x) {
  const std::uint64_t total = shard_bytes(m);
  std::printf(
      "\n%s Of the shards' %.0f MB, the first loader's mappings map %.0f MB with 2 MiB page "
      "table entries (the kernel maps a 2 MiB page cache folio whole; smaller folios get "
      "4 KiB entries, a TLB miss per page for random windows).\n",
      a.keep_cache ? "The shards were read as the page cache held them (--keep-cache 1)."
                   : "The shards were dropped from the page cache after writing, so the "
                     "warm-up read brought them back as a job's reads do.",
      static_cast<double>(total) / 1e6, static_cast<double>(x.pmd_kib) * 1024 / 1e6);
  std::printf(
      "\nOpening (manifest, headers, sizes): %.3f s; with SHA-256 of every shard: %.3f s "
      "(%.2f GB/s).\n",
      x.open_sizes, x.open_verify, static_cast<double>(total) / x.open_verify / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse_args(argc, argv, a)) return 2;
  if (!fs::exists(a.dir / "manifest.json")) make_dataset(a);
  if (a.make_only) return 0;
  const auto m = load_manifest(a.dir);
  if (!a.keep_cache) evict(m, a.dir);
  auto variants = make_variants(a);
  const Measured x = measure(a, m, variants);
  const double ratio = print_table(a, m, variants, x);
  print_handoff(variants[0], x);
  print_notes(a, m, x);
  std::printf("\nratio=%.4f\n", ratio);
  return 0;
}
