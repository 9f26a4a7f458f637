// The NCCL backend on its own. Built wherever NCCL is (CI too: it proves
// comm_nccl.cpp compiles and every NCCL/CUDA symbol resolves); run with
// --run on a GPU node (tests/gpu/gpu_check.sh), where it checks each
// collective's values through a real NCCL communicator. One process per GPU;
// rank wiring from the environment as for wireup-train (none: one rank).
#include <ATen/ATen.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "comm/comm_nccl.hpp"
#include "comm/job_store.hpp"
#include "comm/world_layout.hpp"
#include "wireup/stderr_lines.hpp"

namespace wt = wireup::train;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

bool same(const at::Tensor& got, const at::Tensor& want) {
  return at::equal(got.cpu().to(at::kDouble), want.cpu().to(at::kDouble));
}

void run(wt::Comm& c, at::Device dev) {
  const int r = c.rank(), n = c.size();
  const std::int64_t len = 1000;  // not a multiple of 16: NCCL's odd tails
  for (const auto type : {at::kFloat, at::kBFloat16}) {
    const std::string tn = type == at::kFloat ? "fp32" : "bf16";
    const auto opts = at::TensorOptions().dtype(type).device(dev);
    // all_gather: rank q's shard holds q + 1.
    at::Tensor shard = at::full({len}, r + 1, opts), full = at::zeros({len * n}, opts);
    c.all_gather(shard, full)->wait();
    at::Tensor want = at::arange(1, n + 1, at::kDouble).repeat_interleave(len);
    expect(same(full, want), "all_gather " + tn);
    // reduce_scatter_sum: rank q contributes (0..len*n) + q; small integers stay exact in bf16.
    at::Tensor in = (at::arange(len * n, at::kDouble) % 64 + r).to(opts);
    at::Tensor out = at::zeros({len}, opts);
    c.reduce_scatter_sum(in, out)->wait();
    const double ranks = n * (n - 1) / 2.0;
    want = (at::arange(len * n, at::kDouble) % 64).narrow(0, r * len, len) * n + ranks;
    expect(same(out, want), "reduce_scatter_sum " + tn);
  }
  at::Tensor s = wt::scalar_tensor(r + 1, dev);
  c.all_reduce_sum(s);
  expect(s.item<double>() == n * (n + 1) / 2.0, "all_reduce_sum fp64");
  at::Tensor b = at::full({7}, r == 0 ? 42.0 : -1.0, at::TensorOptions().device(dev));
  c.broadcast(b, 0);
  expect(same(b, at::full({7}, 42.0)), "broadcast");
  c.barrier();
  expect(true, "barrier");
}

}  // namespace

int main(int argc, char** argv) {
  wireup::stderr_by_whole_lines();
  if (argc < 2 || std::strcmp(argv[1], "--run") != 0) {
    std::printf("NCCL backend linked: %s (--run on a GPU node checks it)\n",
                wt::nccl_available() ? "yes" : "no");
    return 0;
  }
  try {
    const auto w = wt::world_from_env();
    const at::Device dev(at::kCUDA, static_cast<c10::DeviceIndex>(w.local_rank));
    std::shared_ptr<wt::Comm> comm;
    if (w.world > 1) {
      comm = wt::make_nccl_groups(w, wt::Sharding::Full).world;  // sets the device too
    } else {  // through NCCL even alone: make_nccl_groups keeps one rank solo
      const auto store = wt::open_job_store(w);
      comm = wt::make_nccl_comm(store, "nccl/check", 0, 1);
    }
    run(*comm, dev);
    std::printf("rank %d of %d: %d failure(s)\n", comm->rank(), comm->size(), failures);
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wireup-train-nccl-check: %s\n", e.what());
    return 1;
  }
}
