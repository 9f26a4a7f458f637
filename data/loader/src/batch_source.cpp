#include "wireup/data/batch_source.hpp"

#include "wireup/error.hpp"

namespace wireup::data {

BatchSource::BatchSource(const BatchSourceConfig& c)
    : c_(c),
      accum_(c.split == Split::Train ? static_cast<std::int64_t>(c.grad_accum) : 1),
      synthetic_seed_(c.split == Split::Train ? c.seed : c.seed ^ 0x5eedf00dULL) {
  if (c.dataset.empty()) return;
  LoaderConfig l;
  l.manifest = c.dataset;
  l.split = c.split;
  l.context = c.context;
  l.batch_size = c.batch_size;
  l.rank = c.rank;
  l.world_size = c.world_size;
  l.seed = c.seed;
  l.shuffle = c.split == Split::Train;
  l.readahead = c.readahead;
  l.packing = c.packing;
  l.overlong = c.overlong;
  l.epochs = c.split == Split::Train ? c.epochs : 0;
  loader_ = std::make_unique<TokenLoader>(l);
}

BatchSource::~BatchSource() = default;

bool BatchSource::next(Batch& b) { return loader_->next(b); }

SyntheticDraw BatchSource::next_synthetic() {
  SyntheticDraw d;
  const std::int64_t step = draws_ / accum_, micro = draws_ % accum_;
  ++draws_;
  d.step = static_cast<std::uint64_t>(step);
  d.micro = static_cast<std::uint64_t>(micro);
  d.seed = synthetic_seed_ * 7919 + static_cast<std::uint64_t>(step);
  d.global_rows = accum_ * c_.world_size * c_.batch_size;
  d.first_row = (d.micro * c_.world_size + c_.rank) * c_.batch_size;
  return d;
}

std::string BatchSource::position() const {
  if (loader_) return position_to_json(loader_->position());
  return "synthetic:" + std::to_string(draws_);
}

void BatchSource::seek(const std::string& p) {
  if (loader_) {
    loader_->seek(position_from_json(p, "checkpoint data position"));
    return;
  }
  if (p.rfind("synthetic:", 0) != 0)
    throw InputError("checkpoint data position " + p + " is not for --synthetic_data");
  draws_ = std::stoll(p.substr(10));
  if (draws_ % accum_ != 0)  // rebuild the step's global batch on the next draw
    throw InputError("checkpoint taken mid-accumulation: " + p);
}

void BatchSource::rewind() {
  draws_ = 0;
  if (loader_) loader_->seek(Position{c_.seed, 0, 0, 0});
}

}  // namespace wireup::data
