#include "flat_unit.hpp"

#include <ATen/ATen.h>

namespace wireup::train {

std::int64_t ParamSpec::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

FlatUnit::FlatUnit(std::string name, std::vector<ParamSpec> specs,
                   std::shared_ptr<Comm> shard_comm, std::shared_ptr<Comm> replicate_comm,
                   at::ScalarType compute_dtype, at::Device device)
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
  master_ = at::zeros({shard_}, fp32);
  grad_ = at::zeros({shard_}, fp32);
  full_ = at::empty({padded_}, fp32.dtype(dtype_));
  std::int64_t off = 0;
  for (const auto& s : specs_) {
    views_.push_back(full_.narrow(0, off, s.numel()).view(s.shape));
    off += s.numel();
  }
  release();
}

std::int64_t FlatUnit::shard_offset() const { return shard_comm_->rank() * shard_; }

void FlatUnit::load_full(const at::Tensor& flat) {
  master_.zero_();
  const std::int64_t begin = shard_offset();
  const std::int64_t end = std::min(begin + shard_, numel_);
  if (end > begin) master_.narrow(0, 0, end - begin).copy_(flat.narrow(0, begin, end - begin));
}

void FlatUnit::allocate_full() {
  auto* impl = full_.storage().unsafeGetStorageImpl();
  const auto bytes = static_cast<std::size_t>(padded_) * full_.element_size();
  if (impl->nbytes() == bytes && impl->data() != nullptr) return;
  impl->set_data_ptr_noswap(impl->allocator()->allocate(bytes));
  impl->set_nbytes(bytes);
}

void FlatUnit::gather_async() {
  if (state_ != State::Released) return;
  allocate_full();
  send_ = dtype_ == at::kFloat ? master_ : master_.to(dtype_);
  pending_ = shard_comm_->all_gather(send_, full_);
  state_ = State::Gathering;
}

const std::vector<at::Tensor>& FlatUnit::params() {
  gather_async();
  if (state_ == State::Gathering) {
    pending_->wait();
    pending_.reset();
    send_ = at::Tensor();
    state_ = State::Ready;
  }
  return views_;
}

void FlatUnit::release() {
  if (state_ == State::Gathering) params();  // never free under a running collective
  auto* impl = full_.storage().unsafeGetStorageImpl();
  impl->set_data_ptr_noswap(at::DataPtr(nullptr, full_.device()));
  impl->set_nbytes(0);
  state_ = State::Released;
}

at::Tensor FlatUnit::new_full_grad(std::vector<at::Tensor>& views) const {
  at::Tensor g = at::zeros({padded_}, at::TensorOptions().dtype(dtype_).device(device_));
  views.clear();
  std::int64_t off = 0;
  for (const auto& s : specs_) {
    views.push_back(g.narrow(0, off, s.numel()).view(s.shape));
    off += s.numel();
  }
  return g;
}

void FlatUnit::accumulate_grad(const at::Tensor& full_grad) {
  at::Tensor g32 = full_grad.scalar_type() == at::kFloat ? full_grad : full_grad.to(at::kFloat);
  at::Tensor part = at::empty({shard_}, at::TensorOptions().dtype(at::kFloat).device(device_));
  shard_comm_->reduce_scatter_sum(g32, part);
  if (replicate_comm_->size() > 1) replicate_comm_->all_reduce_sum(part);
  grad_.add_(part);
}

}  // namespace wireup::train
