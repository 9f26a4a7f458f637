#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "wireup/host_facts.hpp"

// What the plugin and wireup-env read about the root a task runs in and about
// the container plugin beside wireup (docs/containers.md). No Slurm headers.
namespace wireup::spank {

// The mount namespace this process is in (inode of /proc/self/ns/mnt); 0 when
// unreadable. slurmstepd's, recorded in user_init, differs from a task's
// when a container plugin (pyxis) moved the task before wireup's task_init.
std::uint64_t mount_namespace_id();

// `h` with its install trees (aws-ofi-nccl under `ofi_nccl_prefix`,
// /opt/amazon/efa/lib) read again under `sysroot` as this process's root sees
// them (inside a container: the container's); the sysfs facts are kept.
HostFacts with_install_trees(HostFacts h, const std::string& sysroot,
                             const std::string& ofi_nccl_prefix);

// The warning for a plugstack.conf that loads a container plugin after
// spank_wireup.so (wireup/plugstack_conf.hpp), "" when it does not or cannot
// be read. The file: `plugstack`, or the PlugStackConfig of the first
// readable slurm.conf among slurm_conf_candidates(task_slurm_conf, ...).
std::string container_order_warning_in(const std::string& plugstack);
std::string container_order_warning(const std::optional<std::string>& task_slurm_conf);

}  // namespace wireup::spank
