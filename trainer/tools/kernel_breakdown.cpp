#include "tools/kernel_breakdown.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

namespace wireup::train {
namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

constexpr KernelPhase kAll[] = {KernelPhase::Gemm,         KernelPhase::Attention,
                                KernelPhase::Float8Casts,  KernelPhase::Optimizer,
                                KernelPhase::CrossEntropy, KernelPhase::Copies,
                                KernelPhase::Collectives,  KernelPhase::Elementwise};

}  // namespace

const char* phase_name(KernelPhase p) {
  switch (p) {
    case KernelPhase::Gemm:
      return "gemm";
    case KernelPhase::Attention:
      return "attention";
    case KernelPhase::Float8Casts:
      return "float8_casts";
    case KernelPhase::Optimizer:
      return "optimizer";
    case KernelPhase::CrossEntropy:
      return "cross_entropy";
    case KernelPhase::Copies:
      return "copies";
    case KernelPhase::Collectives:
      return "collectives";
    case KernelPhase::Elementwise:
      break;
  }
  return "elementwise";
}

KernelPhase classify_kernel(const std::string& raw) {
  const std::string n = lower(raw);
  if (has(n, "nccl")) return KernelPhase::Collectives;
  if (has(n, "flash") || has(n, "fmha") || has(n, "attention") || has(n, "attn"))
    return KernelPhase::Attention;
  if (has(n, "gemm") || has(n, "cutlass") || has(n, "xmma") || has(n, "nvjet") ||
      has(n, "cublas") || has(n, "sm90_") || has(n, "scaled_mm") || has(n, "f8f8bf16"))
    return KernelPhase::Gemm;
  if (has(n, "adam") || has(n, "multi_tensor_apply")) return KernelPhase::Optimizer;
  if (has(n, "logsumexp") || has(n, "scatter") || has(n, "gather") || has(n, "nll_loss") ||
      has(n, "log_softmax"))
    return KernelPhase::CrossEntropy;
  if (has(n, "float8")) return KernelPhase::Float8Casts;
  if (has(n, "memcpy") || has(n, "memset") || has(n, "copy") || has(n, "cat_") ||
      has(n, "catarray"))
    return KernelPhase::Copies;
  return KernelPhase::Elementwise;
}

std::vector<PhaseTotal> phase_totals(const std::vector<KernelTime>& kernels) {
  std::vector<PhaseTotal> out;
  for (const KernelPhase p : kAll) out.push_back({p, 0, 0});
  for (const auto& k : kernels) {
    auto& t = out[static_cast<std::size_t>(classify_kernel(k.name))];
    t.ns += k.ns;
    ++t.kernels;
  }
  return out;
}

std::string format_breakdown(const std::vector<KernelTime>& kernels, double wall_ms, int top) {
  const auto totals = phase_totals(kernels);
  std::uint64_t all = 0;
  for (const auto& t : totals) all += t.ns;
  std::string out;
  char buf[320];
  for (const auto& t : totals) {
    std::snprintf(buf, sizeof buf, "[breakdown] phase=%s ms=%.3f share=%.3f kernels=%lld\n",
                  phase_name(t.phase), t.ns / 1e6, all ? double(t.ns) / double(all) : 0.0,
                  static_cast<long long>(t.kernels));
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "[breakdown] total ms=%.3f wall_ms=%.3f busy=%.3f\n", all / 1e6,
                wall_ms, wall_ms > 0 ? all / 1e6 / wall_ms : 0.0);
  out += buf;
  // The heaviest kernels by name, summed over their launches.
  std::map<std::string, std::uint64_t> by_name;
  for (const auto& k : kernels) by_name[k.name] += k.ns;
  std::vector<std::pair<std::string, std::uint64_t>> sorted(by_name.begin(), by_name.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  for (int i = 0; i < top && i < static_cast<int>(sorted.size()); ++i) {
    std::snprintf(buf, sizeof buf, "[kernel] ms=%.3f phase=%s name=%s\n", sorted[i].second / 1e6,
                  phase_name(classify_kernel(sorted[i].first)),
                  sorted[i].first.substr(0, 120).c_str());
    out += buf;
  }
  return out;
}

}  // namespace wireup::train
