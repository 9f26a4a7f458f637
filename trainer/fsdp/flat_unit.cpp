#include "fsdp/flat_unit.hpp"

#include <ATen/ATen.h>

#include <stdexcept>

#include "profile/step_trace.hpp"

namespace wireup::train {

namespace {

// One view of `flat` per parameter, in order and shape.
std::vector<at::Tensor> split_views(const at::Tensor& flat, const std::vector<ParamSpec>& specs) {
  std::vector<at::Tensor> views;
  std::int64_t off = 0;
  for (const auto& s : specs) {
    views.push_back(flat.narrow(0, off, s.numel()).view(s.shape));
    off += s.numel();
  }
  return views;
}

}  // namespace

FlatUnit::FlatUnit(std::string name, std::vector<ParamSpec> specs, std::shared_ptr<Comm> shard_comm,
                   std::shared_ptr<Comm> replicate_comm, at::ScalarType compute_dtype,
                   at::Device device, UnitUse use)
    : name_(std::move(name)),
      specs_(std::move(specs)),
      shard_comm_(std::move(shard_comm)),
      replicate_comm_(std::move(replicate_comm)),
      dtype_(compute_dtype),
      device_(device) {
  for (const auto& s : specs_) numel_ += s.numel();
  const std::int64_t world = shard_comm_->size();
  padded_ = (numel_ + world - 1) / world * world;
  shard_ = padded_ / world;
  const auto fp32 = at::TensorOptions().dtype(at::kFloat).device(device_);
  const auto held = use == UnitUse::Frozen ? dtype_ : at::kFloat;
  master_ = at::zeros({shard_}, fp32.dtype(held));
  aliased_ = world == 1 && dtype_ == held;
  solo_ = aliased_ && replicate_comm_->size() == 1;
  if (use == UnitUse::Training) grad_ = at::zeros({shard_}, fp32);
  full_ = aliased_ ? master_ : at::empty({padded_}, fp32.dtype(dtype_));
  views_ = split_views(full_, specs_);
  if (aliased_) {
    if (grad_.defined()) grad_views_ = split_views(grad_, specs_);
    state_ = State::Ready;
  } else {
    release();
  }
}

std::int64_t FlatUnit::shard_offset() const { return shard_comm_->rank() * shard_; }

void FlatUnit::load_full(const at::Tensor& flat) {
  master_.zero_();
  const std::int64_t begin = shard_offset();
  const std::int64_t end = std::min(begin + shard_, numel_);
  if (end > begin) master_.narrow(0, 0, end - begin).copy_(flat.narrow(0, begin, end - begin));
}

void FlatUnit::load_full(const std::function<void(at::Tensor& flat)>& fill) {
  if (master_.is_cpu() && master_.scalar_type() == at::kFloat && shard_offset() == 0 &&
      shard_ >= numel_) {
    master_.narrow(0, numel_, shard_ - numel_).zero_();
    at::Tensor flat = master_.narrow(0, 0, numel_);
    fill(flat);
    return;
  }
  at::Tensor flat = at::empty({numel_}, at::kFloat);
  fill(flat);
  load_full(flat);
}

void FlatUnit::allocate_full() {
  auto* impl = full_.storage().unsafeGetStorageImpl();
  const auto bytes = static_cast<std::size_t>(padded_) * full_.element_size();
  if (impl->nbytes() == bytes && impl->data() != nullptr) return;
  impl->set_data_ptr_noswap(impl->allocator()->allocate(bytes));
  impl->set_nbytes(bytes);
}

void FlatUnit::gather_async() {
  if (state_ != State::Released) return;  // aliased units are always Ready
  allocate_full();
  send_ = dtype_ == master_.scalar_type() ? master_ : master_.to(dtype_);
  const UnitScope scope(index_);
  pending_ = shard_comm_->all_gather(send_, full_);
  state_ = State::Gathering;
}

const std::vector<at::Tensor>& FlatUnit::params() {
  gather_async();
  if (state_ == State::Gathering) {
    const UnitScope scope(index_);
    pending_->wait();
    pending_.reset();
    send_ = at::Tensor();
    state_ = State::Ready;
  }
  return views_;
}

void FlatUnit::release() {
  if (aliased_) return;                      // the buffer is master_ itself
  if (state_ == State::Gathering) params();  // never free under a running collective
  auto* impl = full_.storage().unsafeGetStorageImpl();
  impl->set_data_ptr_noswap(at::DataPtr(nullptr, full_.device()));
  impl->set_nbytes(0);
  state_ = State::Released;
}

void FlatUnit::no_grad_error() const {
  throw std::logic_error("FSDP unit " + name_ +
                         ": built for inference (UnitUse::Inference), it holds no gradient");
}

void FlatUnit::accumulate_grads(const std::vector<at::Tensor>& param_grads) {
  if (!grad_.defined()) no_grad_error();
  if (solo_) {  // nothing to sum: straight into grad()
    for (std::size_t i = 0; i < grad_views_.size(); ++i) {
      const at::Tensor& g = param_grads.at(i);
      if (!g.defined()) continue;  // zero: grad() holds it already or adds nothing
      if (grad_zero_)
        grad_views_[i].copy_(g);
      else
        grad_views_[i].add_(g);
    }
    grad_zero_ = false;
    return;
  }
  finish_grads();  // one in flight at a time per unit
  const auto opts = at::TensorOptions().dtype(dtype_).device(device_);
  std::vector<at::Tensor> pieces;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const at::Tensor& g = param_grads.at(i);
    pieces.push_back(g.defined() ? g.reshape({-1}) : at::zeros({specs_[i].numel()}, opts));
  }
  if (padded_ > numel_) pieces.push_back(at::zeros({padded_ - numel_}, opts));
  rs_full_ = at::cat(pieces).to(at::kFloat);  // fp32 reductions
  rs_part_ = shard_comm_->size() == 1 ? rs_full_ : at::empty({shard_}, rs_full_.options());
  const UnitScope scope(index_);
  rs_pending_ = shard_comm_->reduce_scatter_sum(rs_full_, rs_part_);
}

void FlatUnit::finish_grads() {
  if (!rs_pending_) return;
  const UnitScope scope(index_);
  rs_pending_->wait();
  rs_pending_.reset();
  if (replicate_comm_->size() > 1) replicate_comm_->all_reduce_sum(rs_part_);
  if (grad_zero_)
    grad_.copy_(rs_part_);
  else
    grad_.add_(rs_part_);
  grad_zero_ = false;
  rs_full_ = rs_part_ = at::Tensor();
}

}  // namespace wireup::train
