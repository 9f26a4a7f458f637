#include "config/metrics.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace wireup::train {

std::string format_step_line(const StepMetrics& m) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "[train] step=%lld/%lld loss=%.6f lr=%.3e grad_norm=%.4f tokens_per_s=%.1f "
                "mfu=%.4f step_time_s=%.3f peak_mem_mib=%.1f data_wait_s=%.4f",
                static_cast<long long>(m.step), static_cast<long long>(m.max_steps), m.loss, m.lr,
                m.grad_norm, m.tokens_per_s, m.mfu, m.step_time_s, m.peak_mem_mib, m.data_wait_s);
  return buf;
}

std::string format_step_json(const StepMetrics& m) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"type\":\"train\",\"step\":%lld,\"loss\":%.9g,\"lr\":%.9g,\"grad_norm\":%.9g,"
                "\"tokens_per_s\":%.6g,\"mfu\":%.6g,\"step_time_s\":%.6g,\"peak_mem_mib\":%.6g,"
                "\"data_wait_s\":%.6g}",
                static_cast<long long>(m.step), m.loss, m.lr, m.grad_norm, m.tokens_per_s, m.mfu,
                m.step_time_s, m.peak_mem_mib, m.data_wait_s);
  return buf;
}

std::string format_validation_line(std::int64_t step, double loss) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "[val] step=%lld val_loss=%.6f val_ppl=%.3f",
                static_cast<long long>(step), loss, std::exp(loss));
  return buf;
}

std::string format_validation_json(std::int64_t step, double loss) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "{\"type\":\"validation\",\"step\":%lld,\"val_loss\":%.9g}",
                static_cast<long long>(step), loss);
  return buf;
}

double model_flops_utilization(double tokens_per_s, double flops_per_token,
                               double peak_flops_per_rank, std::int64_t world) {
  if (!(peak_flops_per_rank > 0) || world < 1) return 0;
  return tokens_per_s * flops_per_token / (peak_flops_per_rank * static_cast<double>(world));
}

std::string format_peak_line(double peak_flops_per_rank, const std::string& source) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "[mfu] peak=%.4g TFLOP/s per rank (%s)",
                peak_flops_per_rank / 1e12, source.c_str());
  return buf;
}

std::string format_eval_line(const EvalResult& r) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "[eval] loss=%.6f ppl=%.4f tokens=%llu windows=%llu", r.loss,
                std::exp(r.loss), static_cast<unsigned long long>(r.tokens),
                static_cast<unsigned long long>(r.windows));
  return buf;
}

std::string format_eval_json(const EvalResult& r) {
  nlohmann::ordered_json j;
  j["type"] = "eval";
  j["loss"] = r.loss;
  j["ppl"] = std::exp(r.loss);
  j["tokens"] = r.tokens;
  j["windows"] = r.windows;
  j["context"] = r.context;
  j["split"] = r.split;
  j["data"] = r.data;
  j["weights"] = r.weights;
  return j.dump() + "\n";
}

}  // namespace wireup::train
