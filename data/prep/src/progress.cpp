#include "progress.hpp"

#include <cstdio>
#include <cstring>

namespace wireup::prep {

Progress::Progress(std::ostream& out, bool enabled, bool terminal, std::uint64_t total_bytes)
    : out_(out),
      enabled_(enabled),
      terminal_(terminal),
      total_(total_bytes),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::update(const char* phase, std::uint64_t bytes, std::uint64_t documents,
                      std::uint64_t tokens) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (phase_ == nullptr || std::strcmp(phase_, phase) != 0) {
    phase_ = phase;
    start_ = last_ = now;
    return;
  }
  const auto interval = terminal_ ? std::chrono::seconds(1) : std::chrono::seconds(30);
  if (now - last_ < interval) return;
  last_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double pct =
      total_ > 0 ? 100.0 * static_cast<double>(bytes) / static_cast<double>(total_) : 0;
  char line[256];
  std::snprintf(line, sizeof line,
                "wireup-prep: %s %5.1f%% of %.1f MB input, %llu documents, %.2f M tokens, "
                "%.1f MB/s, %.0f s",
                phase, pct > 100 ? 100.0 : pct, static_cast<double>(total_) / 1e6,
                static_cast<unsigned long long>(documents), static_cast<double>(tokens) / 1e6,
                secs > 0 ? static_cast<double>(bytes) / 1e6 / secs : 0.0, secs);
  out_ << (terminal_ ? "\r" : "") << line << (terminal_ ? "" : "\n") << std::flush;
  printed_ = true;
}

void Progress::done() {
  if (enabled_ && terminal_ && printed_) out_ << "\n" << std::flush;
  printed_ = false;
}

}  // namespace wireup::prep
