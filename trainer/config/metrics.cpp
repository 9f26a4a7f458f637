#include "config/metrics.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace wireup::train {
namespace {

// DPO's figures: the line's key ("" for none) and TRL's name.
struct DpoFigure {
  const char* line;
  const char* trl;
  double value;
};
std::vector<DpoFigure> dpo_figures(const preference::DpoMetrics& d) {
  return {{"reward_accuracy", "rewards/accuracies", d.reward_accuracy},
          {"reward_margin", "rewards/margins", d.reward_margin},
          {"chosen_reward", "rewards/chosen", d.chosen_reward},
          {"rejected_reward", "rewards/rejected", d.rejected_reward},
          {"", "logps/chosen", d.chosen_logps},
          {"", "logps/rejected", d.rejected_logps}};
}

// " PREFIXreward_accuracy=... PREFIXrejected_reward=..." for a line.
std::string dpo_line_fields(const preference::DpoMetrics& d, const std::string& prefix) {
  std::string out;
  char buf[64];
  for (const DpoFigure& f : dpo_figures(d)) {
    if (*f.line == '\0') continue;
    std::snprintf(buf, sizeof buf, "%.6f", f.value);
    out += " " + prefix + f.line + "=" + buf;
  }
  return out;
}

}  // namespace

StepRecord step_record(const StepMetrics& m) {
  StepRecord r{m.step, m.max_steps, {}};
  auto figure = [&](const char* key, double value, const char* format, bool integer = false,
                    const char* chart = "train/") {
    r.figures.push_back({key, key, value, format, std::string(chart) + key, integer});
  };
  figure("loss", m.loss, "%.6f");
  if (m.dpo) {
    for (const DpoFigure& f : dpo_figures(*m.dpo))
      r.figures.push_back({f.line, f.trl, f.value, "%.6f", std::string("train/") + f.trl, false});
  }
  figure("lr", m.lr, "%.3e");
  figure("grad_norm", m.grad_norm, "%.4f");
  figure("tokens_per_s", m.tokens_per_s, "%.1f");
  figure("mfu", m.mfu, "%.4f");
  figure("step_time_s", m.step_time_s, "%.3f");
  figure("peak_mem_mib", m.peak_mem_mib, "%.1f");
  figure("data_wait_s", m.data_wait_s, "%.4f");
  if (m.trained_tokens >= 0)
    figure("trained_tokens", static_cast<double>(m.trained_tokens), "%.0f", true);
  if (m.slowest_rank >= 0) {
    figure("slowest_rank", m.slowest_rank, "%.0f", true, "straggler/");
    figure("compute_min_s", m.compute_min_s, "%.4f", false, "straggler/");
    figure("compute_median_s", m.compute_median_s, "%.4f", false, "straggler/");
    figure("compute_max_s", m.compute_max_s, "%.4f", false, "straggler/");
  }
  return r;
}

std::string format_step_line(const StepRecord& r) {
  std::string line = "[train] step=" + std::to_string(r.step) + "/" + std::to_string(r.max_steps);
  char buf[64];
  for (const StepFigure& f : r.figures) {
    if (f.key.empty()) continue;
    std::snprintf(buf, sizeof buf, f.line_format, f.value);
    line += " " + f.key + "=" + buf;
  }
  return line;
}

std::string format_step_json(const StepRecord& r) {
  nlohmann::ordered_json j = {{"type", "train"}, {"step", r.step}};
  for (const StepFigure& f : r.figures) {
    if (f.integer)
      j[f.json] = static_cast<std::int64_t>(f.value);
    else
      j[f.json] = f.value;
  }
  return j.dump();
}

std::string format_validation_line(std::int64_t step, double loss,
                                   const std::optional<preference::DpoMetrics>& dpo) {
  char buf[160];
  if (dpo) {
    std::snprintf(buf, sizeof buf, "[val] step=%lld val_loss=%.6f", static_cast<long long>(step),
                  loss);
    return buf + dpo_line_fields(*dpo, "val_");
  }
  std::snprintf(buf, sizeof buf, "[val] step=%lld val_loss=%.6f val_ppl=%.3f",
                static_cast<long long>(step), loss, std::exp(loss));
  return buf;
}

std::string format_validation_json(std::int64_t step, double loss,
                                   const std::optional<preference::DpoMetrics>& dpo) {
  nlohmann::ordered_json j = {{"type", "validation"}, {"step", step}, {"val_loss", loss}};
  if (dpo)
    for (const DpoFigure& f : dpo_figures(*dpo)) j[std::string("val_") + f.trl] = f.value;
  return j.dump();
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
  if (r.dpo) {
    std::snprintf(buf, sizeof buf, "[eval] dpo_loss=%.6f", r.dpo->loss);
    return buf + dpo_line_fields(*r.dpo, "") +
           " pairs=" + std::to_string(static_cast<unsigned long long>(r.dpo->pairs));
  }
  std::snprintf(buf, sizeof buf, "[eval] loss=%.6f ppl=%.4f tokens=%llu windows=%llu", r.loss,
                std::exp(r.loss), static_cast<unsigned long long>(r.tokens),
                static_cast<unsigned long long>(r.windows));
  return buf;
}

std::string format_eval_json(const EvalResult& r) {
  nlohmann::ordered_json j;
  j["type"] = "eval";
  if (r.dpo) {
    j["dpo_loss"] = r.dpo->loss;
    for (const DpoFigure& f : dpo_figures(*r.dpo)) j[f.trl] = f.value;
    j["pairs"] = r.dpo->pairs;
  } else {
    j["loss"] = r.loss;
    j["ppl"] = std::exp(r.loss);
  }
  j["tokens"] = r.tokens;
  j["windows"] = r.windows;
  j["context"] = r.context;
  j["split"] = r.split;
  j["data"] = r.data;
  j["weights"] = r.weights;
  return j.dump() + "\n";
}

}  // namespace wireup::train
