// libFuzzer target: the parsers that read admin and user input must only ever
// return or throw InputError, never crash, hang or throw anything else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "wireup/error.hpp"
#include "wireup/nodelist.hpp"
#include "wireup/plugstack_conf.hpp"
#include "wireup/ofi_nccl_install.hpp"
#include "wireup/settings.hpp"
#include "wireup/slurm_conf_nodes.hpp"
#include "wireup/text.hpp"

namespace {
template <typename F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const wireup::InputError&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  expect_clean([&] { wireup::parse_admin_args(wireup::split(in, ' ')); });
  expect_clean([&] { wireup::expand_nodelist(in, 4096); });
  expect_clean([&] { wireup::first_node(in); });
  expect_clean([&] { wireup::expand_tasks_per_node(in); });
  expect_clean([&] { wireup::parse_on_off("--wireup", in.c_str(), true); });
  expect_clean([&] { wireup::parse_efa_mode("--wireup-efa", in.c_str()); });
  expect_clean([&] { wireup::parse_nccl_debug("--wireup-nccl-debug", in.c_str()); });
  expect_clean([&] { wireup::wireup_args_in_plugstack(in, "fuzz.conf"); });
  // slurm.conf text whose every include is the input again.
  expect_clean([&] {
    wireup::find_conf_node(in, "/f/slurm.conf", "gpu01",
                           [&](const std::string&) { return std::optional<std::string>(in); });
  });
  wireup::parse_version(in);  // no throw at all
  wireup::ofi_nccl_version_in(in);
  return 0;
}
