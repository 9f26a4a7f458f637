// Whose value a variable is when a container plugin imported an image's
// environment before wireup's task_init, and where plugstack.conf puts the
// container plugin (docs/containers.md).
#include <catch2/catch.hpp>

#include "env_fixture.hpp"
#include "wireup/plugstack_conf.hpp"
#include "wireup/task_env.hpp"

using namespace wireup;

namespace {
TaskFacts task() {
  TaskFacts t;
  t.job_id = 42;
  t.step_id = 1;
  t.layout = {0, 0, 2, 2, 0, 1};
  t.master_addr = "10.0.0.1";
  return t;
}
TaskContext submitted(const std::map<std::string, std::string>& env) {
  TaskContext c;
  c.submitted = lookup(env);
  return c;
}
std::vector<std::string> none(const std::string&) { return {}; }
}  // namespace

TEST_CASE("a value that differs from the submitted one is the image's or the hook's") {
  AdminConfig admin;
  admin.nccl_debug = "INFO";
  const auto now = lookup({{"NCCL_DEBUG", "WARN"}, {"MASTER_ADDR", "node-1"}, {"RANK", "0"}});
  const auto p = plan_task(task(), admin, {}, {}, now, submitted({}));
  const auto* debug = find(p.decisions, "NCCL_DEBUG");
  REQUIRE(debug != nullptr);
  CHECK(debug->value == "WARN");
  CHECK(debug->action == Action::KeptContainer);
  CHECK(debug->source == kByContainer);
  const auto* addr = find(p.decisions, "MASTER_ADDR");
  CHECK(addr->value == "10.0.0.1");
  CHECK(addr->source == kByWireup);
  CHECK(addr->reason.find("replaces 'node-1' from the container image or hook") !=
        std::string::npos);
  const auto* rank = find(p.decisions, "RANK");
  CHECK(rank->action == Action::Unchanged);  // pyxis's RANK equals wireup's
  REQUIRE(find(p.decisions, kImageVar) != nullptr);
  CHECK(find(p.decisions, kImageVar)->value == "NCCL_DEBUG");
  CHECK(p.decisions.back().name == kInjectedVar);
}

TEST_CASE("the user's submitted values win; a replaced rendezvous value comes back") {
  const auto now = lookup({{"NCCL_DEBUG", "INFO"}, {"MASTER_PORT", "61003"}});
  const auto ctx = submitted({{"NCCL_DEBUG", "INFO"}, {"MASTER_PORT", "777"}});
  AdminConfig admin;
  admin.nccl_debug = "WARN";
  const auto p = plan_task(task(), admin, {}, {}, now, ctx);
  CHECK(find(p.decisions, "NCCL_DEBUG")->action == Action::KeptUser);
  const auto* port = find(p.decisions, "MASTER_PORT");
  CHECK(port->value == "777");
  CHECK(port->source == kByUser);
  CHECK(port->action == Action::Set);
}

TEST_CASE("admin forceenv and user options replace the image's value") {
  AdminConfig admin;
  admin.extra.push_back({"NCCL_SOCKET_IFNAME", "lo", "plugstack.conf forceenv", Mode::Force});
  UserOptions user;
  user.nccl_debug = "TRACE";
  const auto now = lookup({{"NCCL_DEBUG", "WARN"}, {"NCCL_SOCKET_IFNAME", "eth9"}});
  const auto p = plan_task(task(), admin, user, {}, now, submitted({}));
  CHECK(find(p.decisions, "NCCL_DEBUG")->value == "TRACE");
  CHECK(find(p.decisions, "NCCL_DEBUG")->source == kByUser);
  CHECK(find(p.decisions, "NCCL_SOCKET_IFNAME")->value == "lo");
  CHECK(find(p.decisions, "NCCL_SOCKET_IFNAME")->source == kByAdmin);
}

TEST_CASE("a path list names its owners; describe shows every source") {
  HostFacts h;
  h.efa_devices = {"rdmap0"};
  h.ofi_nccl_lib_dir = "/opt/amazon/ofi-nccl/lib";
  h.ofi_nccl_net_lib = "/opt/amazon/ofi-nccl/lib/libnccl-net.so";
  TaskContext ctx = submitted({});
  ctx.root_read = "the task's root";
  const auto p = plan_task(task(), {}, {}, h, lookup({{"LD_LIBRARY_PATH", "/cuda"}}), ctx);
  const auto* ld = find(p.decisions, "LD_LIBRARY_PATH");
  CHECK(ld->value == "/opt/amazon/ofi-nccl/lib:/cuda");
  CHECK(ld->source == "wireup + image or hook");
  const std::string text = describe(p);
  CHECK(text.find("RANK=0  (set: global task id) [wireup]\n") != std::string::npos);
  CHECK(text.find("# install trees read from the task's root\n") != std::string::npos);
}

TEST_CASE("without the submitted environment every current value is the user's") {
  const auto p = plan_task(task(), {}, {}, {}, lookup({{"MASTER_ADDR", "10.9.9.9"}}));
  CHECK(find(p.decisions, "MASTER_ADDR")->action == Action::KeptUser);
  CHECK(find(p.decisions, "MASTER_ADDR")->source == kByUser);
}

TEST_CASE("plugstack.conf: a container plugin after wireup, directly or included") {
  const std::string wireup = "optional /usr/local/lib/slurm/spank_wireup.so default=off\n";
  const std::string pyxis = "required /usr/local/lib/slurm/spank_pyxis.so # containers\n";
  auto c = container_after_wireup(wireup + pyxis, "/etc/slurm/plugstack.conf", none);
  REQUIRE(c);
  CHECK(c->wireup_line == 1);
  CHECK(c->container_line == 2);
  CHECK(c->text == "required /usr/local/lib/slurm/spank_pyxis.so");
  CHECK_FALSE(container_after_wireup(pyxis + wireup, "p", none));
  CHECK_FALSE(container_after_wireup(pyxis, "p", none));
  c = container_after_wireup(wireup + "include /opt/slurm/etc/plugstack.conf.d/pyxis.conf\n", "p",
                             none);
  CHECK((c && c->container_line == 2));
  std::string asked;
  const IncludeReader reader = [&](const std::string& pattern) {
    asked = pattern;
    return std::vector<std::string>{"# nothing\n", pyxis};
  };
  c = container_after_wireup(wireup + "include plugstack.conf.d/*\n", "/etc/slurm/plugstack.conf",
                             reader);
  CHECK((c && c->container_line == 2));
  CHECK(asked == "/etc/slurm/plugstack.conf.d/*");
  const std::string warning = order_warning(*c, "/etc/slurm/plugstack.conf");
  CHECK(warning.find("before the container plugin pyxis (line 2") != std::string::npos);
  CHECK(warning.find("Fix: list spank_wireup.so after pyxis") != std::string::npos);
}

TEST_CASE("plugstack.conf's path from slurm.conf") {
  CHECK(plugstack_path_for("ClusterName=x\n", "/opt/slurm/etc/slurm.conf") ==
        "/opt/slurm/etc/plugstack.conf");
  CHECK(plugstack_path_for("plugstackconfig = spank.conf # x\n", "/etc/slurm/slurm.conf") ==
        "/etc/slurm/spank.conf");
  CHECK(plugstack_path_for("PlugStackConfig=/a/b.conf\n", "/etc/slurm/slurm.conf") == "/a/b.conf");
  CHECK(is_container_plugin("/usr/lib/slurm/spank_pyxis.so"));
  CHECK_FALSE(is_container_plugin("/usr/lib/slurm/spank_wireup.so"));
}
