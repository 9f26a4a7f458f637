// A model built for inference (eval, generate): no gradient shard, the same
// forward, its memory only the master's; and a checkpoint loaded into a
// weights-only state (main/training_state.hpp: the moments left out) is
// read without them.
#include <ATen/ATen.h>
#include <malloc.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "checkpoint/checkpointer.hpp"
#include "comm/comm.hpp"
#include "main/training_state.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"
#include "models/sharded_model.hpp"
#include "optim/sharded_adamw.hpp"

using namespace wireup::train;

namespace {

CommGroups solo() {
  auto c = make_solo_comm();
  return {c, c, c};
}

}  // namespace

TEST_CASE("a model built for inference holds no gradient and computes the same loss") {
  const ModelConfig m = preset("micro");
  ShardedModel train(m, solo(), {}, 9);
  ModelOptions o;
  o.random_init = false;
  o.fsdp.use = UnitUse::Inference;
  ShardedModel infer(m, solo(), o, 0);
  std::int64_t shard = 0;
  for (std::size_t i = 0; i < infer.units().size(); ++i) {
    FlatUnit& u = *infer.units()[i];
    INFO(u.name());
    CHECK_FALSE(u.has_grad());
    CHECK(train.units()[i]->has_grad());
    CHECK(train.units()[i]->grad().numel() == u.shard_numel());
    CHECK_THROWS_WITH(u.grad(), Catch::Contains("FSDP unit " + u.name() + ": built for inference"));
    CHECK_THROWS_WITH(u.zero_grad(), Catch::Contains("holds no gradient"));
    CHECK_THROWS_AS(u.accumulate_grads({}), std::logic_error);
    u.master().copy_(train.units()[i]->master());
    shard += u.shard_numel();
  }
  CHECK(infer.state_bytes() == shard * 4);  // the fp32 master shard alone
  CHECK(train.state_bytes() == shard * 16);
  at::Tensor tokens = at::randint(m.vocab, {2, 17}, at::kLong);
  CHECK(infer.step(tokens, false, 0.0) == train.step(tokens, false, 0.0));  // bit for bit
  CHECK_THROWS_WITH(infer.step(tokens, true, 1.0), Catch::Contains("built for inference"));
  CHECK_THROWS_AS(ShardedAdamW({infer.units()[0].get()}, AdamWConfig{}).step(1e-3, 1.0),
                  std::logic_error);
}

namespace {

// This process's resident anonymous memory now, in bytes (RssAnon of
// /proc/self/status): what the model's buffers touch. Not the whole resident
// size: its file-backed pages (LibTorch's mapped libraries) may be dropped by
// the kernel at any time on a loaded machine, which once made the training
// model look 24 MB smaller than its master and gradient.
std::int64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  REQUIRE(f != nullptr);
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "RssAnon: %ld kB", &kib) == 1) break;
  std::fclose(f);
  REQUIRE(kib >= 0);
  return static_cast<std::int64_t>(kib) * 1024;
}

}  // namespace

TEST_CASE("building for inference leaves the gradient's memory unallocated") {
  // Units of 51 MB and more: each buffer is its own mapping (above glibc's
  // mmap threshold), so resident memory grows by exactly what is touched.
  ModelConfig m = preset("small");
  m.hidden = 1024, m.intermediate = 2816, m.vocab = 16000, m.layers = 2;
  ModelOptions train_opts;
  train_opts.random_init = false;  // zeros: no temporaries
  ModelOptions infer_opts = train_opts;
  infer_opts.fsdp.use = UnitUse::Inference;
  // Free heap memory still resident from earlier test cases goes back first:
  // trimmed during the measurement, it would count against the model.
  malloc_trim(0);
  const std::int64_t before = resident_bytes();
  ShardedModel train(m, solo(), train_opts, 0);
  const std::int64_t after_train = resident_bytes();
  ShardedModel infer(m, solo(), infer_opts, 0);
  const std::int64_t after_infer = resident_bytes();
  std::int64_t grad_bytes = 0;
  for (auto& u : train.units()) grad_bytes += u->grad().numel() * 4;
  REQUIRE(grad_bytes > (200 << 20));
  const std::int64_t trained = after_train - before, inferred = after_infer - after_train;
  INFO("training model " << trained << " bytes resident, inference model " << inferred
                         << ", gradient " << grad_bytes);
  // The gradient is what the two builds differ by: the training model's master
  // and gradient against the inference model's master alone.
  CHECK(trained - inferred > grad_bytes * 8 / 10);
  CHECK(inferred > grad_bytes * 9 / 10);   // the master
  CHECK(inferred < grad_bytes * 13 / 10);  // and no gradient
}

TEST_CASE("a weights-only state loads a checkpoint's parameters and refuses to save") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("wireup-weights-only-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const ModelConfig m = preset("micro");
  ShardedModel train(m, solo(), {}, 4);
  std::vector<FlatUnit*> units;
  for (auto& u : train.units()) units.push_back(u.get());
  ShardedAdamW opt(units, AdamWConfig{});
  train.step(at::randint(m.vocab, {2, 17}, at::kLong), true, 1.0);
  opt.step(1e-3, 1.0);  // moments and parameters no longer what they started as
  CheckpointPolicy policy;
  policy.dir = dir;
  Checkpointer saver(policy, solo(), training_state(units, opt));
  CheckpointInfo info;
  info.step = 1;
  info.model = m;
  saver.save(info);
  saver.wait();

  ModelOptions o;
  o.random_init = false;
  o.fsdp.use = UnitUse::Inference;
  ShardedModel infer(m, solo(), o, 0);
  std::vector<FlatUnit*> infer_units;
  for (auto& u : infer.units()) infer_units.push_back(u.get());
  Checkpointer loader(policy, solo(), weights_state(infer_units));
  REQUIRE(loader.load("auto", {m, std::nullopt}).has_value());
  for (std::size_t i = 0; i < units.size(); ++i) {
    INFO(units[i]->name());
    CHECK(at::equal(infer.units()[i]->master(), units[i]->master()));
  }
  const auto steps_before = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
  info.step = 2;
  CHECK_THROWS_WITH(loader.save(info), Catch::Contains("a weights-only state loads, never saves"));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == steps_before);
  fs::remove_all(dir);
}

TEST_CASE("a load from a writer fills one rank's parameters in place, padding zeroed") {
  const ModelConfig m = preset("micro");
  ModelOptions o;
  o.random_init = false;
  o.fsdp.use = UnitUse::Inference;
  ShardedModel f(m, solo(), o, 0);
  for (auto& unit : f.units()) {
    FlatUnit& u = *unit;
    INFO(u.name());
    u.master().fill_(7.0f);
    const at::Tensor want = at::arange(u.numel(), at::kFloat);
    const void* written = nullptr;
    u.load_full([&](at::Tensor& flat) {
      CHECK(flat.numel() == u.numel());
      written = flat.data_ptr();
      flat.copy_(want);
    });
    CHECK(written == u.master().data_ptr());  // no staging buffer at one rank
    CHECK(at::equal(u.master().narrow(0, 0, u.numel()), want));
    const auto pad = u.shard_numel() - u.numel();
    CHECK(u.master().narrow(0, u.numel(), pad).count_nonzero().item<std::int64_t>() == 0);
  }
}
