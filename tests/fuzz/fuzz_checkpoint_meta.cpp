// libFuzzer target: a wireup checkpoint's metadata.json (and, when the first
// byte is not '{', the bytes after it as a rank's side file). Only returns or
// throws InputError; in an accepted one every chunk lies inside its file and
// every unit's read plan is computed without error or a clean InputError.
#include "checkpoint/checkpoint_format.hpp"
#include "fuzz_common.hpp"

using namespace wireup;
namespace tr = wireup::train;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::as_string(data, size);
  if (size > 0 && data[0] != '{') {
    fuzz::expect_clean([&] { tr::rank_file_from_json(in.substr(1), "rank-00000.json"); });
    return 0;
  }
  fuzz::expect_clean([&] {
    const tr::CheckpointMeta m = tr::checkpoint_meta_from_json(in, "metadata.json");
    for (const auto& f : m.files)
      for (const auto& c : f.chunks)
        if (c.file_offset + static_cast<std::uint64_t>(c.numel) * 4 > f.bytes) __builtin_trap();
    for (std::size_t u = 0; u < m.units.size() && u < 64; ++u)
      fuzz::expect_clean(
          [&] { tr::plan_reads(m, static_cast<int>(u), "param", 0, m.units[u].numel); });
  });
  return 0;
}
