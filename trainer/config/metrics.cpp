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
  std::string line = buf;
  if (m.trained_tokens >= 0) line += " trained_tokens=" + std::to_string(m.trained_tokens);
  if (m.slowest_rank >= 0) {
    std::snprintf(buf, sizeof buf,
                  " slowest_rank=%d compute_min_s=%.4f compute_median_s=%.4f compute_max_s=%.4f",
                  m.slowest_rank, m.compute_min_s, m.compute_median_s, m.compute_max_s);
    line += buf;
  }
  return line;
}

std::string format_step_json(const StepMetrics& m) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"type\":\"train\",\"step\":%lld,\"loss\":%.9g,\"lr\":%.9g,\"grad_norm\":%.9g,"
                "\"tokens_per_s\":%.6g,\"mfu\":%.6g,\"step_time_s\":%.6g,\"peak_mem_mib\":%.6g,"
                "\"data_wait_s\":%.6g}",
                static_cast<long long>(m.step), m.loss, m.lr, m.grad_norm, m.tokens_per_s, m.mfu,
                m.step_time_s, m.peak_mem_mib, m.data_wait_s);
  std::string json = buf;
  if (m.trained_tokens >= 0) {
    json.pop_back();  // the closing brace
    json += ",\"trained_tokens\":" + std::to_string(m.trained_tokens) + "}";
  }
  if (m.slowest_rank >= 0) {
    json.pop_back();  // the closing brace
    std::snprintf(buf, sizeof buf,
                  ",\"slowest_rank\":%d,\"compute_min_s\":%.6g,\"compute_median_s\":%.6g,"
                  "\"compute_max_s\":%.6g}",
                  m.slowest_rank, m.compute_min_s, m.compute_median_s, m.compute_max_s);
    json += buf;
  }
  return json;
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

std::string format_config_line(const RunConfig& c) {
  const ModelConfig& m = c.model;
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "[config] preset=%s params=%lld params_per_rank=%lld state_bytes_per_rank=%lld "
                "world=%d local_world=%d nodes=%d sharding=%s layers=%lld hidden=%lld heads=%lld "
                "kv_heads=%lld intermediate=%lld vocab=%lld context=%lld batch_per_rank=%lld "
                "grad_accum=%lld global_batch_tokens=%lld max_steps=%lld lr=%g threads=%d "
                "activation_checkpointing=%d blas=%s gemm=%s",
                c.preset.c_str(), (long long)c.params, (long long)c.params_per_rank,
                (long long)c.state_bytes_per_rank, c.world, c.local_world, c.world / c.local_world,
                c.sharding.c_str(), (long long)m.layers, (long long)m.hidden, (long long)m.heads,
                (long long)m.kv_heads, (long long)m.intermediate, (long long)m.vocab,
                (long long)m.context, (long long)c.batch_per_rank, (long long)c.grad_accum,
                (long long)(c.batch_per_rank * c.grad_accum * c.world * m.context),
                (long long)c.max_steps, c.lr, c.threads, c.activation_checkpointing ? 1 : 0,
                c.blas.c_str(), c.gemm.c_str());
  return buf;
}

std::string format_summary_line(const RunSummary& s) {
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "[summary] steps=%lld first_loss=%.6f final_loss=%.6f tokens=%lld "
                "mean_tokens_per_s=%.1f wall_s=%.2f peak_mem_mib=%.1f checkpoint_saves=%d "
                "checkpoint_stall_s=%.3f data_wait_s=%.3f data_wait_pct=%.3f",
                (long long)s.steps, s.first_loss, s.final_loss, (long long)s.tokens,
                s.step_time_s > 0 ? static_cast<double>(s.tokens) / s.step_time_s : 0.0, s.wall_s,
                s.peak_mem_mib, s.checkpoint_saves, s.checkpoint_stall_s, s.data_wait_s,
                s.step_time_s > 0 ? 100.0 * s.data_wait_s / s.step_time_s : 0.0);
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
