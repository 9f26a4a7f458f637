#include "main/straggler_report.hpp"

#include <ATen/ATen.h>

namespace wireup::train {
namespace {

constexpr std::int64_t kHostChars = 64;

// Every rank's `mine` (the same length on each), rank by rank, on the host.
at::Tensor all_gather_rows(Comm& world, const at::Tensor& mine) {
  const auto n = mine.numel();
  at::Tensor full = at::empty({n * world.size()}, mine.options());
  world.all_gather(mine, full)->wait();
  return full.cpu().view({world.size(), n}).contiguous();
}

std::vector<std::string> gather_hosts(Comm& world, at::Device device, const std::string& mine) {
  std::vector<float> chars(kHostChars, 0.0f);  // a float per byte: a dtype every backend gathers
  for (std::size_t i = 0; i < mine.size() && i + 1 < chars.size(); ++i)
    chars[i] = static_cast<float>(static_cast<unsigned char>(mine[i]));
  const at::Tensor row = at::tensor(chars, at::kFloat).to(device);
  const at::Tensor all = all_gather_rows(world, row);
  std::vector<std::string> hosts;
  for (std::int64_t r = 0; r < world.size(); ++r) {
    const float* p = all.data_ptr<float>() + r * kHostChars;
    std::string h;
    for (std::int64_t i = 0; i < kHostChars && p[i] != 0; ++i) h += static_cast<char>(p[i]);
    hosts.push_back(h);
  }
  return hosts;
}

}  // namespace

StragglerReport::StragglerReport(Comm& world, at::Device device, const std::string& my_host,
                                 double ratio, std::int64_t steps)
    : world_(world),
      device_(device),
      hosts_(gather_hosts(world, device, my_host)),
      rule_(ratio, steps) {}

StragglerReport::Step StragglerReport::logged_step(std::int64_t step, double my_compute_s) {
  const at::Tensor mine =
      at::full({1}, my_compute_s, at::TensorOptions().dtype(at::kFloat).device(device_));
  const at::Tensor all = all_gather_rows(world_, mine);
  const float* p = all.data_ptr<float>();
  const std::vector<double> per_rank(p, p + world_.size());
  Step out;
  out.spread = spread_of(per_rank);
  for (const auto& s : rule_.observe(per_rank, out.spread))
    out.warnings.push_back(format_straggler_warning(s, hosts_.at(static_cast<std::size_t>(s.rank)),
                                                    out.spread.median_s, step));
  return out;
}

}  // namespace wireup::train
