#include "wireup/data/loader.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "wireup/error.hpp"

namespace wireup::data {

const void* Batch::data() const {
  return type == TokenType::Int64 ? static_cast<const void*>(tokens64.data())
                                  : static_cast<const void*>(tokens32.data());
}

void* Batch::data() {
  return type == TokenType::Int64 ? static_cast<void*>(tokens64.data())
                                  : static_cast<void*>(tokens32.data());
}

namespace {

struct Item {
  Batch batch;
  bool end = false;
  std::exception_ptr error;
};

}  // namespace

struct TokenLoader::Impl {
  LoaderConfig cfg;
  std::filesystem::path dir;
  Manifest manifest;
  std::unique_ptr<ShardSet> set;
  std::unique_ptr<Sampler> sampler;
  std::uint64_t windows = 0;
  Position pos;  // after the last batch handed out

  // Prefetch state, guarded by mu. The thread only reads cfg/set/sampler.
  std::mutex mu;
  std::condition_variable changed;
  std::deque<Item> queue;
  std::vector<Batch> spare;  // buffers handed back by next(), reused
  bool stop = false;
  std::thread worker;
  // Sticky outcome once the queue reported it: later next() calls repeat it.
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
    const std::uint64_t n = b.rows * b.cols;
    if (b.type == TokenType::Int64) {
      b.tokens64.resize(n);
      b.tokens32.clear();
      for (std::uint64_t i = 0; i < b.rows; ++i)
        set->read(step.windows[i] * T, T + 1, b.tokens64.data() + i * b.cols);
    } else {
      b.tokens32.resize(n);
      b.tokens64.clear();
      for (std::uint64_t i = 0; i < b.rows; ++i)
        set->read(step.windows[i] * T, T + 1, b.tokens32.data() + i * b.cols);
    }
  }

  void run(Position p) {
    try {
      for (;;) {
        auto step = sampler->next(p);
        Item item;
        if (!step) {
          item.end = true;
        } else {
          {
            const std::lock_guard lock(mu);
            if (!spare.empty()) {
              item.batch = std::move(spare.back());
              spare.pop_back();
            }
          }
          fill(*step, item.batch);
          p = step->after;
        }
        std::unique_lock lock(mu);
        changed.wait(lock, [&] { return stop || queue.size() < cfg.prefetch; });
        if (stop) return;
        const bool end = item.end;
        queue.push_back(std::move(item));
        changed.notify_all();
        if (end) return;
      }
    } catch (...) {
      Item item;
      item.error = std::current_exception();
      const std::lock_guard lock(mu);
      queue.push_back(std::move(item));
      changed.notify_all();
    }
  }

  void start() {
    ended = false;
    failed = nullptr;
    if (cfg.prefetch == 0) return;
    stop = false;
    worker = std::thread([this, p = pos] { run(p); });
  }

  void halt() {
    {
      const std::lock_guard lock(mu);
      stop = true;
    }
    changed.notify_all();
    if (worker.joinable()) worker.join();
    const std::lock_guard lock(mu);
    for (auto& item : queue)
      if (!item.end && !item.error) spare.push_back(std::move(item.batch));
    queue.clear();
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
      changed.wait(lock, [&] { return !queue.empty(); });
      item = std::move(queue.front());
      queue.pop_front();
    }
    changed.notify_all();
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
