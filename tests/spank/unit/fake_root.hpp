#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

// A throwaway sysfs/DMI/opt tree, as the EFA probe reads it on a real node.
class FakeRoot {
 public:
  FakeRoot() {
    char tmpl[] = "/tmp/wireup-fakeroot-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~FakeRoot() { std::filesystem::remove_all(path_); }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;

  const std::string& path() const { return path_; }

  void instance_type(const std::string& type) {
    write("sys/devices/virtual/dmi/id/product_name", type + "\n");
  }
  // An RDMA device bound to `driver` (efa, mlx5_core, ...).
  void rdma_device(const std::string& name, const std::string& driver) {
    namespace fs = std::filesystem;
    const fs::path dev = fs::path(path_) / "sys/class/infiniband" / name / "device";
    fs::create_directories(dev);
    fs::create_directory_symlink("../../../../bus/pci/drivers/" + driver, dev / "driver");
  }
  void file(const std::string& rel) { write(rel, ""); }

 private:
  void write(const std::string& rel, const std::string& text) {
    const auto p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string path_;
};
