#include "main/training_state.hpp"

namespace wireup::train {

namespace {

// One unit's layout and parameter shard, as a checkpoint records them.
UnitShard unit_shard(FlatUnit& u) {
  UnitShard shard;
  shard.layout.name = u.name();
  shard.layout.numel = u.numel();
  for (const auto& spec : u.specs()) {
    shard.layout.param_names.push_back(spec.name);
    shard.layout.param_shapes.push_back(spec.shape);
  }
  shard.offset = u.shard_offset();
  shard.numel = u.shard_numel();
  shard.tensors.push_back(u.master());  // "param"
  return shard;
}

}  // namespace

TrainingState training_state(const std::vector<FlatUnit*>& units, ShardedAdamW& opt) {
  TrainingState s;
  // A unit's state: its parameters and AdamW's two moments of them.
  s.tensor_names = {"param", "exp_avg", "exp_avg_sq"};
  for (std::size_t i = 0; i < units.size(); ++i) {
    UnitShard shard = unit_shard(*units[i]);
    shard.tensors.push_back(opt.exp_avg()[i]);
    shard.tensors.push_back(opt.exp_avg_sq()[i]);
    s.units.push_back(std::move(shard));
  }
  const AdamWConfig& c = opt.config();
  s.beta1 = c.beta1, s.beta2 = c.beta2, s.eps = c.eps, s.weight_decay = c.weight_decay;
  s.optimizer_steps = [&opt] { return opt.steps(); };
  s.restored = [units, &opt](std::int64_t steps) {
    opt.set_steps(steps);
    for (auto* u : units) u->zero_grad();
  };
  return s;
}

TrainingState weights_state(const std::vector<FlatUnit*>& units) {
  TrainingState s;
  s.tensor_names = {"param"};
  s.weights_only = true;
  for (auto* u : units) s.units.push_back(unit_shard(*u));
  s.optimizer_steps = [] { return std::int64_t{0}; };
  s.restored = [](std::int64_t) {};
  return s;
}

}  // namespace wireup::train
