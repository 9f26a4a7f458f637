#include <catch2/catch.hpp>

#include "fake_root.hpp"
#include "host_probe.hpp"
#include "wireup/host_facts.hpp"

using namespace wireup;

TEST_CASE("host facts from readings: EFA devices are those bound to the efa driver") {
  HostReadings r;
  r.product_name = "  p5.48xlarge\n";
  r.rdma_devices = {{"rdmap0s31", "../../../../bus/pci/drivers/efa"},
                    {"mlx5_0", "../../../../bus/pci/drivers/mlx5_core"},
                    {"rdmap1s31", "efa"},
                    {"odd", ""},
                    {"efa_named", "../../drivers/not-efa"}};
  const HostFacts h = host_facts(r);
  CHECK(h.instance_type == "p5.48xlarge");
  CHECK(h.efa_devices == std::vector<std::string>{"rdmap0s31", "rdmap1s31"});
  CHECK(h.efa_lib_dir.empty());
  CHECK(h.ofi_nccl_lib_dir.empty());
  CHECK(h.tuner_plugin.empty());
  CHECK_FALSE(h.libfabric_efa.has_value());
}

TEST_CASE("host facts: the EFA lib dir") {
  HostReadings r;
  r.present = {"/opt/amazon/efa/lib"};
  CHECK(host_facts(r).efa_lib_dir == "/opt/amazon/efa/lib");
}

TEST_CASE("probe: aws-ofi-nccl's lib dir and the tuner, per-architecture copy first") {
  FakeRoot root;
  root.file("opt/amazon/efa/lib/libfabric.so.1");
  root.file("opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so");
  root.file("opt/amazon/ofi-nccl/lib/aarch64-linux-gnu/libnccl-ofi-tuner.so");
  HostFacts h = spank::probe_host(root.path());
  CHECK(h.efa_lib_dir == "/opt/amazon/efa/lib");
  CHECK(h.ofi_nccl_lib_dir == "/opt/amazon/ofi-nccl/lib");
  CHECK(h.tuner_plugin == "/opt/amazon/ofi-nccl/lib/aarch64-linux-gnu/libnccl-ofi-tuner.so");
  FakeRoot plain;
  plain.file("opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so");
  h = spank::probe_host(plain.path());
  CHECK(h.tuner_plugin == "/opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so");
}

TEST_CASE("every path host_facts judges is one the probe reads") {
  const auto& paths = install_paths();
  CHECK(paths.size() == 1);
  for (const auto& p : paths) CHECK(p.rfind("/opt/amazon/", 0) == 0);
}

TEST_CASE("the probe reads raw values from a fake tree") {
  FakeRoot root;
  root.instance_type("g5.48xlarge");
  root.rdma_device("rdmap0s31", "efa");
  root.file("opt/amazon/efa/lib/libfabric.so.1");
  const HostReadings r = spank::read_host(root.path());
  CHECK(r.product_name == "g5.48xlarge\n");
  REQUIRE(r.rdma_devices.size() == 1);
  CHECK(r.rdma_devices[0].name == "rdmap0s31");
  CHECK(r.rdma_devices[0].driver_link == "../../../../bus/pci/drivers/efa");
  CHECK(r.present == std::vector<std::string>{"/opt/amazon/efa/lib"});
}
