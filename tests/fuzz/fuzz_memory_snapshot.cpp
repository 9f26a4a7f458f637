// libFuzzer target: the texts a memory snapshot is made of (docs/memory-snapshots.md).
// The first byte picks the reader: 'm' a manifest, 'n' a node's report for the
// resume's gather, anything else a rank's part (header, then tensors). Each
// only returns, with a reason when it refuses; what one accepts is consistent:
// a manifest has a part per rank and prints back to a text that parses to the
// same manifest; a part's header ends inside it and the tensors fill the rest.
#include "checkpoint/memory_snapshot_manifest.hpp"
#include "checkpoint/memory_snapshot_part.hpp"
#include "fuzz_common.hpp"

namespace tr = wireup::train;

namespace {

void manifest(const std::string& in) {
  std::string why;
  const auto m = tr::parse_snapshot_manifest(in, why);
  if (!m) {
    if (why.empty()) __builtin_trap();
    return;
  }
  if (m->parts.size() != m->rank_node.size()) __builtin_trap();
  const std::string text = tr::to_text(*m);
  const auto back = tr::parse_snapshot_manifest(text, why);
  if (!back || tr::to_text(*back) != text) __builtin_trap();
}

void node_report(const std::string& in) {
  std::string why;
  const auto n = tr::parse_node_memory(in, why);
  if (!n) {
    if (why.empty()) __builtin_trap();
    return;
  }
  const auto back = tr::parse_node_memory(tr::to_text(*n), why);
  if (!back || tr::to_text(*back) != tr::to_text(*n)) __builtin_trap();
}

void part(const std::string& in) {
  std::string why;
  std::uint64_t header_bytes = 0;
  const auto h = tr::parse_part_header(in.data(), in.size(), header_bytes, why);
  if (!h) {
    if (why.empty()) __builtin_trap();
    return;
  }
  if (header_bytes > in.size() || header_bytes + h->tensor_bytes() != in.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = wireup::fuzz::as_string(data, size);
  const std::string rest = size > 0 ? in.substr(1) : in;
  wireup::fuzz::expect_clean([&] {
    if (size > 0 && data[0] == 'm')
      manifest(rest);
    else if (size > 0 && data[0] == 'n')
      node_report(rest);
    else
      part(rest);
  });
  return 0;
}
