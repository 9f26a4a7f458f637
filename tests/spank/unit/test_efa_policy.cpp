#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "env_fixture.hpp"
#include "fake_root.hpp"
#include "host_probe.hpp"
#include "wireup/efa_policy.hpp"
#include "wireup/error.hpp"
#include "wireup/ofi_nccl_install.hpp"

using namespace wireup;
using wireup::spank::probe_host;

namespace {
const EnvEntry* entry(const EfaPlan& p, const std::string& name) {
  for (const auto& e : p.entries)
    if (e.name == name) return &e;
  return nullptr;
}
std::string describe_notes(const EfaPlan& p) {
  std::string out;
  for (const auto& n : p.notes) out += n + "\n";
  return out;
}
}  // namespace

TEST_CASE("GPUDirect RDMA table per instance type") {
  for (const char* yes :
       {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "ml.p5.48xlarge", "p5e.48xlarge",
        "p5en.48xlarge", "p6-b200.48xlarge", "P5.48XLARGE", "p6-b300.48xlarge",
        "p6e-gb200.36xlarge", "p7.48xlarge", "trn1.32xlarge", "trn2.48xlarge", "trn2u.48xlarge"}) {
    INFO(yes);
    CHECK(gdr_capable(yes));
  }
  for (const char* no : {"g5.48xlarge", "p5.4xlarge", "p3dn.24xlarge", "g6.48xlarge",
                         "g6e.48xlarge", "c5n.18xlarge", "p4.xlarge", "", "weird"}) {
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

TEST_CASE("instance table: today's GPU and Trainium types") {
  const InstanceInfo* p5en = instance_info("p5en.48xlarge");
  REQUIRE(p5en);
  CHECK(p5en->accelerators == 8);
  CHECK(p5en->efa_devices == 16);
  CHECK(p5en->gdr);
  REQUIRE(instance_info("ml.p6-b200.48xlarge"));
  CHECK(instance_info("ml.p6-b200.48xlarge")->accelerator == "B200");
  CHECK(instance_info("p6-b300.48xlarge")->accelerator == "B300");
  CHECK(instance_info("trn2.48xlarge")->efa_devices == 16);
  CHECK(instance_info("trn2.48xlarge")->accelerators == 16);
  CHECK(instance_info("g6e.48xlarge")->efa_devices == 4);
  CHECK(instance_info("g6e.12xlarge")->shm_cuda_memcpy);  // any g6e size
  CHECK(wants_shm_cuda_memcpy("g6.48xlarge"));
  CHECK_FALSE(wants_shm_cuda_memcpy("trn2.48xlarge"));
  CHECK(instance_info("c7i.large") == nullptr);
}

TEST_CASE("versions parse; the embedded aws-ofi-nccl string is found in binary bytes") {
  CHECK(parse_version("1.16.2") == Version{1, 16, 2});
  CHECK(parse_version("1.13.2-aws") == Version{1, 13, 2});
  CHECK(parse_version("1.7") == Version{1, 7, 0});
  for (const char* bad : {"", "1", "x.1", "1.", "1.16x", "git-6e504db", "1234567.1"}) {
    INFO(bad);
    CHECK_FALSE(parse_version(bad));
  }
  CHECK(Version{1, 7, 0} < Version{1, 16, 0});
  using namespace std::string_literals;
  CHECK(ofi_nccl_version_in("\0\x7f"
                            "ELF aws-ofi-nccl git-6e504db\0aws-ofi-nccl 1.16.2\0"s) ==
        Version{1, 16, 2});
  CHECK_FALSE(ofi_nccl_version_in("\0aws-ofi-nccl git-6e504db\0"s));
  CHECK_FALSE(ofi_nccl_version_in("libnccl-net.so"));
}

namespace {

// An aws-ofi-nccl install tree: the net library holding its version string
// (at `offset` into the file, to cross the probe's read chunks), and optionally
// the separate tuner library.
void fake_ofi_nccl(FakeRoot& root, const std::string& rel_lib, const std::string& version,
                   std::size_t offset = 100, bool tuner = false) {
  namespace fs = std::filesystem;
  const fs::path lib = fs::path(root.path()) / rel_lib;
  fs::create_directories(lib.parent_path());
  std::string bytes(offset, '\0');
  bytes +=
      "\x7f"
      "ELF";
  if (!version.empty()) bytes += "aws-ofi-nccl " + version + std::string(1, '\0');
  bytes += std::string(4096, '\0');
  std::ofstream(lib, std::ios::binary) << bytes;
  if (tuner) std::ofstream(lib.parent_path() / "libnccl-ofi-tuner.so") << "";
}

HostFacts efa_node(FakeRoot& root, const std::string& type) {
  root.instance_type(type);
  root.rdma_device("rdmap0s31", "efa");
  HostFacts h = probe_host(root.path());
  h.libfabric_efa = true;
  return h;
}

}  // namespace

TEST_CASE("fake install trees: the plugin's version decides the variables") {
  FakeRoot root;
  SECTION("aws-ofi-nccl 1.16 (libnccl-net-ofi.so, arch dir) with libfabric 2.1 on p5en") {
    fake_ofi_nccl(root, "opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net-ofi.so", "1.16.2",
                  (1u << 20) - 7);  // the string straddles the first 1 MiB read
    HostFacts h = efa_node(root, "p5en.48xlarge");
    h.libfabric_version = Version{2, 1, 0};
    CHECK(h.ofi_nccl_version == Version{1, 16, 2});
    CHECK(h.ofi_nccl_lib_dir == "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu");
    const auto plan = plan_efa(EfaMode::Auto, h);
    CHECK(entry(plan, "NCCL_NET_PLUGIN")->value == "ofi");
    for (const char* gone : {"FI_PROVIDER", "FI_EFA_FORK_SAFE", "FI_EFA_USE_DEVICE_RDMA",
                             "NCCL_TUNER_PLUGIN", "NCCL_PROTO"}) {
      INFO(gone);
      CHECK(entry(plan, gone) == nullptr);
    }
    CHECK(entry(plan, "LD_LIBRARY_PATH")->value == "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu");
    CHECK_THAT(describe_notes(plan), Catch::Contains("aws-ofi-nccl 1.16.2 sets it itself") &&
                                         Catch::Contains("configures its own tuner"));
  }
  SECTION("1.16 with an old libfabric (1.17): device RDMA still needed on p5") {
    fake_ofi_nccl(root, "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", "1.16.0");
    HostFacts h = efa_node(root, "p5.48xlarge");
    h.libfabric_version = Version{1, 17, 0};
    CHECK(entry(plan_efa(EfaMode::Auto, h), "FI_EFA_USE_DEVICE_RDMA"));
    h.libfabric_version.reset();  // unknown: the old rule
    CHECK(entry(plan_efa(EfaMode::Auto, h), "FI_EFA_USE_DEVICE_RDMA"));
  }
  SECTION("aws-ofi-nccl 1.13 (libnccl-net.so + separate tuner): tuner path, no provider filter") {
    fake_ofi_nccl(root, "opt/amazon/ofi-nccl/lib/libnccl-net.so", "1.13.2-aws", 100, true);
    HostFacts h = efa_node(root, "p4d.24xlarge");
    h.libfabric_version = Version{1, 22, 0};
    const auto plan = plan_efa(EfaMode::Auto, h);
    CHECK(entry(plan, "NCCL_NET_PLUGIN") == nullptr);
    CHECK(entry(plan, "NCCL_TUNER_PLUGIN")->value ==
          "/opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so");
    CHECK(entry(plan, "FI_PROVIDER") == nullptr);
    CHECK(entry(plan, "FI_EFA_USE_DEVICE_RDMA") == nullptr);
  }
  SECTION("aws-ofi-nccl 1.6: device RDMA on p4d, nothing else") {
    fake_ofi_nccl(root, "opt/amazon/ofi-nccl/lib/libnccl-net.so", "1.6.0");
    HostFacts h = efa_node(root, "p4d.24xlarge");
    h.libfabric_version = Version{1, 22, 0};
    const auto plan = plan_efa(EfaMode::Auto, h);
    CHECK(entry(plan, "FI_EFA_USE_DEVICE_RDMA")->value == "1");
    CHECK(entry(plan, "FI_PROVIDER") == nullptr);
    CHECK(entry(plan, "NCCL_PROTO") == nullptr);
  }
  SECTION("aws-ofi-nccl 1.5: provider filter, simple protocol, fork safety, device RDMA") {
    fake_ofi_nccl(root, "opt/amazon/ofi-nccl/lib/libnccl-net.so", "1.5.0");
    HostFacts h = efa_node(root, "p4d.24xlarge");
    h.libfabric_version = Version{1, 22, 0};
    const auto plan = plan_efa(EfaMode::Auto, h);
    CHECK(entry(plan, "FI_PROVIDER")->value == "efa");
    CHECK(entry(plan, "NCCL_PROTO")->value == "simple");
    CHECK(entry(plan, "FI_EFA_FORK_SAFE")->value == "1");
    CHECK(entry(plan, "FI_EFA_USE_DEVICE_RDMA")->value == "1");
    // Never device RDMA where RDMA read is absent, whatever the version.
    h.instance_type = "g5.48xlarge";
    CHECK(entry(plan_efa(EfaMode::Auto, h), "FI_EFA_USE_DEVICE_RDMA") == nullptr);
  }
  SECTION("a git build of libnccl-net-ofi.so: at least 1.15 by its name") {
    fake_ofi_nccl(root, "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", "");
    HostFacts h = efa_node(root, "trn2.48xlarge");
    h.libfabric_version = Version{2, 6, 0};
    CHECK_FALSE(h.ofi_nccl_version);
    const auto plan = plan_efa(EfaMode::Auto, h);
    CHECK(entry(plan, "NCCL_NET_PLUGIN")->value == "ofi");
    CHECK(entry(plan, "FI_PROVIDER") == nullptr);
    CHECK(entry(plan, "FI_EFA_USE_DEVICE_RDMA") == nullptr);
    CHECK_THAT(describe_notes(plan), Catch::Contains("aws-ofi-nccl >= 1.15"));
  }
  SECTION("a configured prefix instead of /opt/amazon/ofi-nccl") {
    fake_ofi_nccl(root, "opt/ofi/lib/libnccl-net-ofi.so", "1.21.1");
    root.instance_type("p6-b200.48xlarge");
    root.rdma_device("rdmap0s31", "efa");
    const HostFacts h = probe_host(root.path(), "/opt/ofi");
    CHECK(h.ofi_nccl_version == Version{1, 21, 1});
    CHECK(h.ofi_nccl_net_lib == "/opt/ofi/lib/libnccl-net-ofi.so");
    CHECK(probe_host(root.path()).ofi_nccl_net_lib.empty());
  }
  SECTION("fewer EFA devices than the type has: a note") {
    HostFacts h = efa_node(root, "p5.48xlarge");
    CHECK_THAT(describe_notes(plan_efa(EfaMode::Auto, h)),
               Catch::Contains("p5.48xlarge has 32 EFA devices; 1 seen"));
  }
  SECTION("no EFA device: the library's version is not even read") {
    fake_ofi_nccl(root, "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", "1.16.2");
    root.instance_type("c5.xlarge");
    const HostFacts h = probe_host(root.path());
    CHECK_FALSE(h.ofi_nccl_version);
    CHECK(plan_efa(EfaMode::Auto, h).entries.empty());
  }
}

TEST_CASE("ofi_nccl_prefix: an absolute path from plugstack.conf, or a clear error") {
  CHECK(parse_admin_args({}).ofi_nccl_prefix == "/opt/amazon/ofi-nccl");
  CHECK(parse_admin_args({"ofi_nccl_prefix=/opt/ofi"}).ofi_nccl_prefix == "/opt/ofi");
  CHECK_THROWS_WITH(parse_admin_args({"ofi_nccl_prefix=opt/ofi"}),
                    Catch::Contains("ofi_nccl_prefix") && Catch::Contains("absolute path"));
}
