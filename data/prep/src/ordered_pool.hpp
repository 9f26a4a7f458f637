#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "wireup/chat/conversation.hpp"
#include "wireup/chat/preference.hpp"
#include "wireup/error.hpp"

// Internal to wireup-prep: the tokeniser threads and the one thread that
// writes their output in input order.
namespace wireup::prep {

// Documents are tokenised in chunks of about this much text: large enough
// to keep workers busy, small enough to bound memory.
inline constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
inline constexpr std::size_t kChunkDocs = 4096;

struct Chunk {
  std::vector<std::string> texts;
  std::vector<chat::Conversation> conversations;               // --chat-template: instead of texts
  std::vector<chat::PreferencePair> pairs;                     // preference rows: instead of texts
  std::vector<std::string> pair_where;                         // each pair's FILE:LINE
  std::vector<std::pair<std::size_t, std::uint64_t>> pair_at;  // ... its input and line
  std::vector<chat::PairError> pair_errors;                    // pairs whose ids were refused
  std::vector<std::size_t> pair_error_at;                      // ... and their index in the chunk
  std::vector<std::uint8_t> mask;                              // --chat-template: one a token
  std::uint64_t rough_cuts = 0;                                // piece cuts outside a word boundary
  std::vector<char> validation;
  std::vector<std::uint32_t> tokens;   // all documents, BOS/EOS included
  std::vector<std::uint64_t> lengths;  // tokens per document
  std::uint64_t bytes_read = 0;        // input consumed when the chunk was cut
  std::size_t text_bytes = 0;
};

// Runs `work` on chunks in parallel and `sink` on them one at a time, in
// the order they were pushed: the output does not depend on thread timing.
class OrderedPool {
 public:
  using Fn = std::function<void(Chunk&)>;
  // At most 2 * workers + 2 chunks in flight, and (unless only one) at most
  // that many kChunkBytes of text: a few huge documents cannot fill memory.
  // InputError when the threads cannot be started (those started are joined).
  OrderedPool(unsigned workers, Fn work, Fn sink)
      : work_(std::move(work)), sink_(std::move(sink)), max_in_flight_(2 * workers + 2) {
    try {
      for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work_loop(); });
      threads_.emplace_back([this] { sink_loop(); });
    } catch (const std::system_error& e) {
      fail(nullptr);
      join();
      throw InputError("cannot start " + std::to_string(workers + 1) + " threads (" +
                       std::to_string(threads_.size()) + " started): " + e.what() +
                       "; pass a smaller -j");
    }
  }
  ~OrderedPool() {
    fail(nullptr);
    join();
  }
  OrderedPool(const OrderedPool&) = delete;
  OrderedPool& operator=(const OrderedPool&) = delete;

  void push(Chunk chunk) {
    std::unique_lock lock(mu_);
    const std::uint64_t budget = max_in_flight_ * kChunkBytes;
    cv_.wait(lock, [&] {
      return failed_ || (submitted_ - written_ < max_in_flight_ &&
                         (submitted_ == written_ || in_flight_bytes_ + chunk.text_bytes <= budget));
    });
    if (failed_) rethrow_locked();
    in_flight_bytes_ += chunk.text_bytes;
    todo_.emplace_back(submitted_++, std::move(chunk));
    cv_.notify_all();
  }

  void finish() {
    {
      const std::lock_guard lock(mu_);
      closed_ = true;
      cv_.notify_all();
    }
    join();
    const std::lock_guard lock(mu_);
    if (failed_) rethrow_locked();
  }

 private:
  void rethrow_locked() {
    if (error_) std::rethrow_exception(error_);
    throw std::logic_error("OrderedPool: used after abort");
  }

  void fail(std::exception_ptr e) {
    const std::lock_guard lock(mu_);
    if (!failed_) {
      failed_ = true;
      error_ = std::move(e);
    }
    cv_.notify_all();
  }

  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

  void work_loop() {
    for (;;) {
      std::pair<std::uint64_t, Chunk> job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return failed_ || closed_ || !todo_.empty(); });
        if (failed_ || todo_.empty()) return;
        job = std::move(todo_.front());
        todo_.pop_front();
      }
      try {
        work_(job.second);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
      const std::lock_guard lock(mu_);
      done_.emplace(job.first, std::move(job.second));
      cv_.notify_all();
    }
  }

  void sink_loop() {
    for (;;) {
      Chunk chunk;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] {
          return failed_ || done_.count(written_) != 0 || (closed_ && written_ == submitted_);
        });
        if (failed_ || done_.count(written_) == 0) return;
        auto it = done_.find(written_);
        chunk = std::move(it->second);
        done_.erase(it);
      }
      try {
        sink_(chunk);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
      const std::lock_guard lock(mu_);
      in_flight_bytes_ -= chunk.text_bytes;
      ++written_;
      cv_.notify_all();
    }
  }

  Fn work_, sink_;
  const std::uint64_t max_in_flight_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::uint64_t, Chunk>> todo_;
  std::map<std::uint64_t, Chunk> done_;
  std::uint64_t submitted_ = 0, written_ = 0, in_flight_bytes_ = 0;
  bool closed_ = false, failed_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace wireup::prep
