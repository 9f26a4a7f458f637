// wireup-train breakdown: where one training step's GPU time goes. The
// training flags build the model and its step as `wireup-train` would (one
// rank, synthetic tokens); after three warm-up steps, one step runs under
// LibTorch's Kineto profiler and each CUDA kernel's device time is summed
// into its phase (tools/kernel_breakdown.hpp): GEMMs, attention, float8
// casts, optimizer, cross-entropy, copies, collectives, elementwise.
#include "main/breakdown_main.hpp"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "comm/world_layout.hpp"
#include "config/train_options.hpp"
#include "main/run_setup.hpp"
#include "models/sharded_model.hpp"
#include "optim/sharded_adamw.hpp"
#include "tools/kernel_breakdown.hpp"
#include "wireup/error.hpp"

#define WIREUP_KINETO_API \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
#if WIREUP_KINETO_API
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

namespace wireup::train {
namespace {

#if WIREUP_KINETO_API
namespace prof = torch::profiler::impl;
namespace kineto = torch::autograd::profiler;

// The CUDA kernels (and copies) of `step`, by name and device time.
std::vector<KernelTime> kernels_of(const std::function<void()>& step, double* wall_ms) {
  const prof::ProfilerConfig config(prof::ProfilerState::KINETO);
  const std::set<prof::ActivityType> activities{prof::ActivityType::CPU, prof::ActivityType::CUDA};
  kineto::prepareProfiler(config, activities);
  kineto::enableProfiler(config, activities);
  const auto t0 = std::chrono::steady_clock::now();
  step();
  *wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto result = kineto::disableProfiler();
  std::vector<KernelTime> out;
  for (const auto& e : result->events())
    if (e.deviceType() == c10::DeviceType::CUDA && e.durationNs() > 0)
      out.push_back({e.name(), e.durationNs()});
  return out;
}
#endif

}  // namespace

int run_breakdown(int argc, char** argv) {
  TrainOptions o;
  if (!parse_train_options(argc, argv, o)) return 0;
  const WorldLayout w = world_from_env();
  if (w.world != 1)
    throw InputError("breakdown runs one rank (WORLD_SIZE is " + std::to_string(w.world) + ")");
  o.synthetic_data = true;
  o.data.dataset.clear();
  check_train_options(o, 1, 1);
  if (o.compute.device != "cuda")
    throw InputError("breakdown times CUDA kernels: pass --device cuda");
#if WIREUP_KINETO_API
  const ComputeChoice& c = o.compute;
  const CommGroups groups = start_ranks(w, c);
  const ModelOptions fo = model_options(w, c);
  ShardedModel model(o.model, groups, fo, o.seed);
  std::vector<FlatUnit*> units;
  for (auto& u : model.units()) units.push_back(u.get());
  ShardedAdamW opt(units, o.adamw);
  const at::Tensor tokens =
      at::randint(0, o.model.vocab, {o.train_batch_size, o.model.context + 1}, at::kLong);
  const auto sync = [&] {
    (void)at::zeros({1}, at::TensorOptions().device(fo.fsdp.device)).item<float>();
  };
  const auto step = [&] {
    model.step(tokens, true, 1.0);
    const double norm = global_grad_norm(units, *groups.shard);
    opt.step(o.lr, o.grad_clip > 0 && norm > o.grad_clip ? o.grad_clip / (norm + 1e-6) : 1.0);
    sync();
  };
  for (int i = 0; i < 3; ++i) step();
  double wall_ms = 0;
  const auto kernels = kernels_of(step, &wall_ms);
  std::printf("[breakdown] preset=%s batch=%lld seq=%lld bf16=%d float8=%s torch=%s\n",
              o.preset.c_str(), static_cast<long long>(o.train_batch_size),
              static_cast<long long>(o.model.context), o.compute.bf16 ? 1 : 0,
              float8_recipe_name(o.compute.float8), TORCH_VERSION);
  std::fputs(format_breakdown(kernels, wall_ms, 15).c_str(), stdout);
  return kernels.empty() ? 1 : 0;
#else
  throw InputError(
      "breakdown needs LibTorch 2.4 or newer (its Kineto profiler API); this is " TORCH_VERSION);
#endif
}

}  // namespace wireup::train
