#include "wireup/data/sampler.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"

namespace wireup::data {

std::string position_to_json(const Position& p) {
  const nlohmann::json j = {
      {"version", 1}, {"seed", p.seed}, {"epoch", p.epoch}, {"offset", p.offset}, {"step", p.step}};
  return j.dump();
}

Position position_from_json(std::string_view text, const std::string& name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number out of range
    throw InputError(name + ": data position is not valid JSON (" + e.what() + ")");
  }
  const auto get = [&](const char* key) -> std::uint64_t {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number_unsigned())
      throw InputError(name + ": data position field '" + key +
                       "': expected a non-negative integer");
    return j[key].get<std::uint64_t>();
  };
  if (get("version") != 1) throw InputError(name + ": data position field 'version': expected 1");
  return {get("seed"), get("epoch"), get("offset"), get("step")};
}

Sampler::Sampler(const SamplerConfig& config) : config_(config) {
  if (config_.world_size == 0 || config_.rank >= config_.world_size)
    throw InputError("loader: rank " + std::to_string(config_.rank) + " is outside world size " +
                     std::to_string(config_.world_size));
  if (config_.batch_size == 0) throw InputError("loader: batch size must be at least 1");
  per_step_ = config_.batch_size * config_.world_size;
  steps_per_epoch_ = config_.windows / per_step_;
  if (steps_per_epoch_ == 0)
    throw InputError("loader: " + std::to_string(config_.windows) +
                     " windows cannot fill one step of batch size " +
                     std::to_string(config_.batch_size) + " x world size " +
                     std::to_string(config_.world_size) +
                     " (expected more data, a smaller context, batch or world)");
}

std::uint64_t Sampler::window_at(std::uint64_t seed, std::uint64_t epoch,
                                 std::uint64_t index) const {
  if (!config_.shuffle) return index;
  return Permutation(config_.windows, epoch_key(seed, epoch))(index);
}

std::optional<Sampler::Step> Sampler::next(const Position& at) const {
  Step s;
  if (!next(at, s)) return std::nullopt;
  return s;
}

bool Sampler::start_of_next(const Position& at, Position& p) const {
  if (config_.max_steps != 0 && at.step >= config_.max_steps) return false;
  p = at;
  // An epoch ends when a whole step no longer fits (drop_last).
  if (p.offset > config_.windows || config_.windows - p.offset < per_step_) {
    ++p.epoch;
    p.offset = 0;
  }
  return config_.epochs == 0 || p.epoch < config_.epochs;
}

std::size_t Sampler::entries(const Position& p, std::uint64_t count, std::uint64_t* out) const {
  const std::uint64_t n = std::min(count, config_.batch_size);
  const std::uint64_t first = p.offset + config_.rank, stride = config_.world_size;
  for (std::uint64_t j = 0; j < n; ++j) out[j] = first + j * stride;
  return static_cast<std::size_t>(n);
}

void Sampler::shuffle(std::uint64_t seed, std::uint64_t epoch, std::uint64_t* ids,
                      std::size_t n) const {
  // A Permutation costs a few mixes to key: one per call, no cache to share.
  if (config_.shuffle) Permutation(config_.windows, epoch_key(seed, epoch)).map(ids, n, ids);
}

std::size_t Sampler::peek(const Position& at, std::size_t count, std::uint64_t* out) const {
  Position p;
  if (!start_of_next(at, p)) return 0;
  const std::size_t n = entries(p, count, out);
  shuffle(p.seed, p.epoch, out, n);
  return n;
}

std::size_t Sampler::next_many(const Position& at, std::size_t count,
                               std::vector<Step>& steps) const {
  if (steps.size() < count) steps.resize(count);
  Position p = at;
  std::size_t n = 0;
  for (; n < count; ++n) {
    Position q;
    if (!start_of_next(p, q)) break;
    Step& s = steps[n];
    s.epoch = q.epoch;
    s.windows.resize(config_.batch_size);
    entries(q, config_.batch_size, s.windows.data());
    q.offset += per_step_;
    ++q.step;
    s.after = p = q;
  }
  if (!config_.shuffle) return n;
  // Entries to window ids, one Permutation::map per run of steps in one epoch.
  std::vector<std::uint64_t> ids;
  for (std::size_t a = 0; a < n;) {
    std::size_t b = a;
    while (b < n && steps[b].epoch == steps[a].epoch) ++b;
    ids.clear();
    for (std::size_t k = a; k < b; ++k)
      ids.insert(ids.end(), steps[k].windows.begin(), steps[k].windows.end());
    shuffle(at.seed, steps[a].epoch, ids.data(), ids.size());
    auto it = ids.begin();
    for (std::size_t k = a; k < b; ++k) {
      std::copy(it, it + static_cast<std::ptrdiff_t>(config_.batch_size), steps[k].windows.begin());
      it += static_cast<std::ptrdiff_t>(config_.batch_size);
    }
    a = b;
  }
  return n;
}

bool Sampler::next(const Position& at, Step& s) const {
  Position p;
  if (!start_of_next(at, p)) return false;
  s.epoch = p.epoch;
  s.windows.resize(config_.batch_size);
  entries(p, config_.batch_size, s.windows.data());
  shuffle(p.seed, p.epoch, s.windows.data(), s.windows.size());
  p.offset += per_step_;
  ++p.step;
  s.after = p;
  return true;
}

std::optional<Position> Sampler::advance(const Position& at, std::uint64_t steps) const {
  if (steps == 0) return at;
  if (config_.max_steps != 0 &&
      (at.step >= config_.max_steps || steps > config_.max_steps - at.step))
    return std::nullopt;
  // As next() does before each step: roll over a finished epoch.
  Position p = at;
  if (p.offset > config_.windows || config_.windows - p.offset < per_step_) {
    ++p.epoch;
    p.offset = 0;
  }
  // Steps left in this epoch (at least 1 after the roll-over), then whole
  // epochs of steps_per_epoch_; an epoch's last step leaves its offset at
  // the end (next() rolls it over), as below.
  const std::uint64_t left = (config_.windows - p.offset) / per_step_;
  if (steps <= left) {
    p.offset += steps * per_step_;
  } else {
    const std::uint64_t more = steps - left - 1;  // steps after the first of the next epoch
    p.epoch += 1 + more / steps_per_epoch_;
    p.offset = (more % steps_per_epoch_ + 1) * per_step_;
  }
  if (config_.epochs != 0 && p.epoch >= config_.epochs) return std::nullopt;
  p.step = at.step + steps;
  return p;
}

}  // namespace wireup::data
