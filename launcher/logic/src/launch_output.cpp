#include "wireup/launch_output.hpp"

#include <algorithm>
#include <utility>

namespace wireup {

StreamRoute route_stream(const LaunchOptions& o, unsigned stream, std::uint32_t local_rank) {
  StreamRoute r;
  r.file = !o.log_dir.empty();
  // With a log dir, torchrun-style: files only, unless teed or not redirected.
  const unsigned redirected =
      o.redirects_given ? o.redirects : (r.file ? kBothStreams : kNoStreams);
  r.console = !(redirected & stream) || (o.tee & stream);
  if (!o.local_ranks_filter.empty() &&
      !std::binary_search(o.local_ranks_filter.begin(), o.local_ranks_filter.end(), local_rank))
    r.console = false;
  return r;
}

std::string LinePrefixer::feed(std::string_view bytes) {
  std::string out;
  std::size_t start = 0;
  while (start < bytes.size()) {
    const auto nl = bytes.find('\n', start);
    if (nl == std::string_view::npos) {
      partial_.append(bytes.substr(start));
      // A line that never ends is emitted in pieces rather than held forever.
      if (partial_.size() >= 64 * 1024) out += prefix_ + std::exchange(partial_, {}) + "\n";
      break;
    }
    out += prefix_;
    out += partial_;
    partial_.clear();
    out.append(bytes.substr(start, nl + 1 - start));
    start = nl + 1;
  }
  return out;
}

std::string LinePrefixer::flush() {
  if (partial_.empty()) return {};
  return prefix_ + std::exchange(partial_, {}) + "\n";
}

}  // namespace wireup
