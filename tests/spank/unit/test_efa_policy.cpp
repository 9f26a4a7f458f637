#include <catch2/catch.hpp>

#include "env_fixture.hpp"
#include "fake_root.hpp"
#include "host_probe.hpp"
#include "wireup/efa_policy.hpp"
#include "wireup/error.hpp"

using namespace wireup;
using wireup::spank::probe_host;

namespace {
const EnvEntry* entry(const EfaPlan& p, const std::string& name) {
  for (const auto& e : p.entries)
    if (e.name == name) return &e;
  return nullptr;
}
}  // namespace

TEST_CASE("GPUDirect RDMA table per instance type") {
  for (const char* yes : {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "ml.p5.48xlarge",
                          "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "P5.48XLARGE"}) {
    INFO(yes);
    CHECK(gdr_capable(yes));
  }
  for (const char* no : {"g5.48xlarge", "p5.4xlarge", "p3dn.24xlarge", "g6.48xlarge",
                         "trn1.32xlarge", "c5n.18xlarge", "", "weird"}) {
    INFO(no);
    CHECK_FALSE(gdr_capable(no));
  }
  CHECK(wants_shm_cuda_memcpy("ml.g5.48xlarge"));
  CHECK_FALSE(wants_shm_cuda_memcpy("p5.48xlarge"));
}

TEST_CASE("probe reads a fake p5 node") {
  FakeRoot root;
  root.instance_type("p5.48xlarge");
  root.rdma_device("rdmap0s31", "efa");
  root.rdma_device("rdmap1s31", "efa");
  root.rdma_device("mlx5_0", "mlx5_core");
  root.file("opt/amazon/efa/lib/libfabric.so.1");
  root.file("opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so");
  const HostFacts h = probe_host(root.path());
  CHECK(h.instance_type == "p5.48xlarge");
  auto devs = h.efa_devices;
  std::sort(devs.begin(), devs.end());
  CHECK(devs == std::vector<std::string>{"rdmap0s31", "rdmap1s31"});
  CHECK(h.efa_lib_dir == "/opt/amazon/efa/lib");
  CHECK(h.ofi_nccl_lib_dir == "/opt/amazon/ofi-nccl/lib");
  CHECK(h.tuner_plugin == "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so");
}

TEST_CASE("probe of an empty tree finds nothing and does not throw") {
  FakeRoot root;
  const HostFacts h = probe_host(root.path());
  CHECK(h.instance_type.empty());
  CHECK(h.efa_devices.empty());
  CHECK(h.tuner_plugin.empty());
  CHECK_NOTHROW(probe_host("/nonexistent/root"));
}

TEST_CASE("EFA decision table") {
  HostFacts p5;
  p5.instance_type = "p5.48xlarge";
  p5.efa_devices = {"rdmap0s31"};
  p5.libfabric_efa = true;
  p5.tuner_plugin = "/opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so";
  p5.ofi_nccl_lib_dir = "/opt/amazon/ofi-nccl/lib";

  SECTION("p5 with everything installed") {
    const auto plan = plan_efa(EfaMode::Auto, p5);
    CHECK(entry(plan, "FI_PROVIDER")->value == "efa");
    CHECK(entry(plan, "FI_EFA_USE_DEVICE_RDMA")->value == "1");
    CHECK(entry(plan, "NCCL_TUNER_PLUGIN")->value == p5.tuner_plugin);
    CHECK(entry(plan, "LD_LIBRARY_PATH")->mode == Mode::PrependPath);
    CHECK(entry(plan, "NCCL_SHM_USE_CUDA_MEMCPY") == nullptr);
    CHECK(entry(plan, "RDMAV_FORK_SAFE") == nullptr);
  }
  SECTION("g5: EFA but never device RDMA") {
    HostFacts g5 = p5;
    g5.instance_type = "g5.48xlarge";
    const auto plan = plan_efa(EfaMode::Auto, g5);
    CHECK(entry(plan, "FI_PROVIDER"));
    CHECK(entry(plan, "FI_EFA_USE_DEVICE_RDMA") == nullptr);
    CHECK(entry(plan, "NCCL_SHM_USE_CUDA_MEMCPY")->value == "1");
  }
  SECTION("no EFA device: nothing, unless required") {
    HostFacts none;
    none.instance_type = "c5.xlarge";
    none.tuner_plugin = "/opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so";
    CHECK(plan_efa(EfaMode::Auto, none).entries.empty());
    CHECK_THROWS_WITH(plan_efa(EfaMode::On, none),
                      Catch::Contains("--wireup-efa=on") && Catch::Contains("c5.xlarge"));
  }
  SECTION("device present but libfabric lacks efa: no FI_PROVIDER") {
    HostFacts h = p5;
    h.libfabric_efa = false;
    const auto plan = plan_efa(EfaMode::Auto, h);
    CHECK(entry(plan, "FI_PROVIDER") == nullptr);
    CHECK_THROWS_AS(plan_efa(EfaMode::On, h), InputError);
  }
  SECTION("tuner absent: no NCCL_TUNER_PLUGIN") {
    HostFacts h = p5;
    h.tuner_plugin.clear();
    CHECK(entry(plan_efa(EfaMode::Auto, h), "NCCL_TUNER_PLUGIN") == nullptr);
  }
  SECTION("off means off") { CHECK(plan_efa(EfaMode::Off, p5).entries.empty()); }
}

TEST_CASE("fake p4d tree through probe and policy") {
  FakeRoot root;
  root.instance_type("p4d.24xlarge");
  root.rdma_device("rdmap16s27", "efa");
  HostFacts h = probe_host(root.path());
  h.libfabric_efa = true;
  const auto plan = plan_efa(EfaMode::Auto, h);
  CHECK(entry(plan, "FI_EFA_USE_DEVICE_RDMA"));
  CHECK(entry(plan, "NCCL_TUNER_PLUGIN") == nullptr);
  CHECK(entry(plan, "LD_LIBRARY_PATH") == nullptr);
}
