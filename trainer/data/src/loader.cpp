#include "wireup/data/loader.hpp"

#include <condition_variable>
#include <algorithm>
#include <map>
#include <optional>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

#include "wireup/error.hpp"

namespace wireup::data {

const void* Batch::data() const {
  switch (type) {
    case TokenType::Int64: return tokens64.data();
    case TokenType::Int32: return tokens32.data();
    case TokenType::Stored: return stored.data();
  }
  return nullptr;
}

void* Batch::data() { return const_cast<void*>(std::as_const(*this).data()); }

namespace {

struct Item {
  Batch batch;
  bool end = false;
  std::exception_ptr error;
};

}  // namespace

// Prefetch: `workers` threads take steps from the sampler in order (cheap,
// under the lock), fill their batches in parallel (the copying, outside the
// lock), and file them by sequence number; next() hands them out in that
// order. At most `prefetch` batches are taken but not yet handed out.
struct TokenLoader::Impl {
  LoaderConfig cfg;
  std::filesystem::path dir;
  Manifest manifest;
  std::unique_ptr<ShardSet> set;
  std::unique_ptr<Sampler> sampler;
  std::uint64_t windows = 0;
  Position pos;  // after the last batch handed out

  // Guarded by mu. A notify only goes to a side that sleeps: a futex call per
  // batch is measurable when batches stream at GB/s.
  std::mutex mu;
  std::condition_variable has_item, has_room;
  bool consumer_waiting = false;
  unsigned producers_waiting = 0;
  std::map<std::uint64_t, Item> ready;
  std::vector<Batch> spare;  // buffers handed back by next(), reused
  Position dispatch_pos;     // position after the last step taken by a worker
  Position hint_pos;         // readahead: position after the last step hinted
  std::uint64_t dispatched = 0, consumed = 0;
  bool dispatch_done = false, stop = false;
  std::vector<std::thread> workers;
  // Sticky outcome once next() met it: later calls repeat it.
  bool ended = false;
  std::exception_ptr failed;

  void fill(const Sampler::Step& step, Batch& b) const {
    const std::uint64_t T = cfg.context;
    b.rows = step.windows.size();
    b.cols = T + 1;
    b.type = cfg.token_type;
    b.windows = step.windows;
    b.epoch = step.epoch;
    b.after = step.after;
    b.token_bytes = manifest.token_bytes;
    const std::uint64_t n = b.rows * b.cols;
    // A loader's batches all have one type: the other vectors stay empty.
    switch (b.type) {
      case TokenType::Int64:
        b.tokens64.resize(n);
        read_rows(step.windows, b.tokens64.data());
        break;
      case TokenType::Int32:
        b.tokens32.resize(n);
        read_rows(step.windows, b.tokens32.data());
        break;
      case TokenType::Stored:
        b.stored.resize(n * b.token_bytes);
        read_rows(step.windows, b.stored.data());
        break;
    }
  }

  // Windows sit at random places: prefetching row i+1 while row i is
  // converted hides most of the cache and TLB misses.
  template <class T>
  void read_rows(const std::vector<std::uint64_t>& rows, T* out) const {
    const std::uint64_t T_ = cfg.context;
    if (!rows.empty()) set->prefetch(rows[0] * T_, T_ + 1);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (i + 1 < rows.size()) set->prefetch(rows[i + 1] * T_, T_ + 1);
      if constexpr (std::is_same_v<T, unsigned char>)
        set->read_raw(rows[i] * T_, T_ + 1, out + i * (T_ + 1) * manifest.token_bytes);
      else
        set->read(rows[i] * T_, T_ + 1, out + i * (T_ + 1));
    }
  }

  // Takes the next step for filling, or returns false when none may be
  // taken now (prefetch bound reached, end reached or stopping). Called
  // with mu held. An end or a sampler error is filed at once.
  bool take(std::uint64_t& seq, Item& item, std::optional<Sampler::Step>& step) {
    if (stop || dispatch_done || dispatched - consumed >= cfg.prefetch) return false;
    seq = dispatched++;
    item = Item{};
    step.reset();
    try {
      step = sampler->next(dispatch_pos);
    } catch (...) {
      item.error = std::current_exception();
    }
    if (!step) {
      dispatch_done = true;
      item.end = !item.error;
      ready.emplace(seq, std::move(item));
      if (consumer_waiting) has_item.notify_one();
      has_room.notify_all();  // the other workers can stop
      return false;
    }
    dispatch_pos = step->after;
    hint_ahead();
    if (!spare.empty()) {
      item.batch = std::move(spare.back());
      spare.pop_back();
    }
    return true;
  }

  // Keeps the kernel fetching the windows of the next `readahead` steps.
  // Called with mu held; hints are advice, so their errors are ignored.
  void hint_ahead() {
    if (cfg.readahead == 0) return;
    if (hint_pos.step < dispatch_pos.step) hint_pos = dispatch_pos;
    while (hint_pos.step < dispatch_pos.step + cfg.readahead) {
      std::optional<Sampler::Step> s;
      try {
        s = sampler->next(hint_pos);
      } catch (...) {
      }
      if (!s) return;
      for (const auto w : s->windows) set->readahead(w * cfg.context, cfg.context + 1);
      hint_pos = s->after;
    }
  }

  // Fills a taken step outside the lock and files it. After a failed batch
  // nothing more is taken, so the error is what next() meets.
  void complete(std::uint64_t seq, Item& item, const Sampler::Step& step) {
    try {
      fill(step, item.batch);
    } catch (...) {
      item.error = std::current_exception();
    }
    const std::lock_guard lock(mu);
    if (item.error) {
      dispatch_done = true;
      has_room.notify_all();
    }
    ready.emplace(seq, std::move(item));
    if (consumer_waiting && seq == consumed) has_item.notify_one();
  }

  void run() {
    std::uint64_t seq = 0;
    Item item;
    std::optional<Sampler::Step> step;
    for (;;) {
      {
        std::unique_lock lock(mu);
        ++producers_waiting;
        bool got = false;
        has_room.wait(lock, [&] {
          if (!stop && !dispatch_done) got = take(seq, item, step);
          return got || stop || dispatch_done;
        });
        --producers_waiting;
        if (!got) return;
      }
      complete(seq, item, *step);
    }
  }

  void start() {
    ended = false;
    failed = nullptr;
    if (cfg.prefetch == 0) return;
    stop = false;
    dispatch_done = false;
    dispatch_pos = hint_pos = pos;
    dispatched = consumed = 0;
    const std::size_t n = std::clamp<std::size_t>(cfg.workers, 1, cfg.prefetch);
    for (std::size_t i = 0; i < n; ++i) workers.emplace_back([this] { run(); });
  }

  void halt() {
    {
      const std::lock_guard lock(mu);
      stop = true;
    }
    has_room.notify_all();
    for (auto& w : workers) w.join();
    workers.clear();
    const std::lock_guard lock(mu);
    for (auto& [seq, item] : ready)
      if (!item.end && !item.error) spare.push_back(std::move(item.batch));
    ready.clear();
  }

  bool next_sync(Batch& b) {
    const auto step = sampler->next(pos);
    if (!step) return false;
    fill(*step, b);
    pos = step->after;
    return true;
  }

  bool next_prefetched(Batch& b) {
    if (failed) std::rethrow_exception(failed);
    if (ended) return false;
    Item item;
    {
      std::unique_lock lock(mu);
      // While its batch is not ready the caller fills later ones itself:
      // a starved consumer adds a thread instead of sleeping and waking.
      std::uint64_t seq = 0;
      Item help;
      std::optional<Sampler::Step> step;
      while (ready.count(consumed) == 0) {
        if (take(seq, help, step)) {
          lock.unlock();
          complete(seq, help, *step);
          lock.lock();
          continue;
        }
        if (ready.count(consumed) != 0) break;
        consumer_waiting = true;
        has_item.wait(lock);
        consumer_waiting = false;
      }
      auto it = ready.find(consumed);
      item = std::move(it->second);
      ready.erase(it);
      ++consumed;
      // Wake sleeping workers only once the read-ahead is half used, so they
      // refill in runs instead of waking once per batch.
      if (producers_waiting > 0 && dispatched - consumed <= cfg.prefetch / 2)
        has_room.notify_all();
    }
    if (item.error) {
      failed = item.error;
      std::rethrow_exception(failed);
    }
    if (item.end) {
      ended = true;
      return false;
    }
    std::swap(b, item.batch);
    pos = b.after;
    const std::lock_guard lock(mu);
    spare.push_back(std::move(item.batch));
    return true;
  }
};

TokenLoader::TokenLoader(LoaderConfig config) : impl_(std::make_unique<Impl>()) {
  auto& d = *impl_;
  d.cfg = std::move(config);
  if (d.cfg.context == 0) throw InputError("loader: context width must be at least 1");
  const auto file = manifest_path(d.cfg.manifest);
  d.dir = file.parent_path();
  if (d.dir.empty()) d.dir = ".";
  d.manifest = load_manifest(file);
  const bool train = d.cfg.split == Split::Train;
  const auto& split = train ? d.manifest.train : d.manifest.validation;
  const std::string split_name = train ? "train" : "validation";
  d.set = std::make_unique<ShardSet>(d.dir, d.manifest, split, split_name, d.cfg.read_mode,
                                     d.cfg.verify, d.cfg.rank, d.cfg.world_size);
  d.windows = window_count(d.set->tokens(), d.cfg.context);
  if (d.windows == 0)
    throw InputError(file.string() + ": the " + split_name + " split has " +
                     std::to_string(d.set->tokens()) + " tokens, fewer than one window of " +
                     std::to_string(d.cfg.context + 1) + " (context + 1)");
  SamplerConfig sc;
  sc.windows = d.windows;
  sc.batch_size = d.cfg.batch_size;
  sc.rank = d.cfg.rank;
  sc.world_size = d.cfg.world_size;
  sc.shuffle = d.cfg.shuffle;
  sc.epochs = d.cfg.epochs;
  sc.max_steps = d.cfg.max_steps;
  try {
    d.sampler = std::make_unique<Sampler>(sc);
  } catch (const InputError& e) {
    throw InputError(file.string() + " (" + split_name + " split): " + e.what());
  }
  d.pos = Position{d.cfg.seed, 0, 0, 0};
  d.start();
}

TokenLoader::~TokenLoader() { impl_->halt(); }

bool TokenLoader::next(Batch& batch) {
  return impl_->cfg.prefetch == 0 ? impl_->next_sync(batch) : impl_->next_prefetched(batch);
}

Position TokenLoader::position() const { return impl_->pos; }

void TokenLoader::seek(const Position& p) {
  impl_->halt();
  impl_->pos = p;
  impl_->start();
}

std::uint64_t TokenLoader::tokens() const { return impl_->set->tokens(); }
std::uint64_t TokenLoader::windows() const { return impl_->windows; }
std::uint64_t TokenLoader::steps_per_epoch() const { return impl_->sampler->steps_per_epoch(); }
const Manifest& TokenLoader::manifest() const { return impl_->manifest; }
const LoaderConfig& TokenLoader::config() const { return impl_->cfg; }
std::filesystem::path TokenLoader::tokenizer_path() const {
  return impl_->dir / impl_->manifest.tokenizer.file;
}

}  // namespace wireup::data
