#include <catch2/catch.hpp>

#include "env_fixture.hpp"
#include "wireup/error.hpp"
#include "wireup/task_env.hpp"

using namespace wireup;

namespace {
TaskFacts task(std::uint32_t rank, std::uint32_t local, std::uint32_t node) {
  TaskFacts t;
  t.job_id = 42;
  t.step_id = 1;
  t.layout = {rank, local, 4, 2, node, 2};
  t.master_addr = "127.0.0.2";
  return t;
}
std::string value(const TaskPlan& p, const std::string& n) {
  const auto* d = find(p.decisions, n);
  return d ? d->value : "<absent>";
}
}  // namespace

TEST_CASE("rendezvous variables for a task") {
  const auto p = plan_task(task(3, 1, 1), {}, {}, {}, lookup({}));
  CHECK(value(p, "RANK") == "3");
  CHECK(value(p, "LOCAL_RANK") == "1");
  CHECK(value(p, "WORLD_SIZE") == "4");
  CHECK(value(p, "LOCAL_WORLD_SIZE") == "2");
  CHECK(value(p, "GROUP_RANK") == "1");
  CHECK(value(p, "NODE_RANK") == "1");
  CHECK(value(p, "GROUP_WORLD_SIZE") == "2");
  CHECK(value(p, "MASTER_ADDR") == "127.0.0.2");
  CHECK(value(p, "MASTER_PORT") == std::to_string(derive_port({}, 42, 1)));
  CHECK(value(p, "TORCH_NCCL_ASYNC_ERROR_HANDLING") == "1");
  CHECK(value(p, "OMP_NUM_THREADS") == "1");
  CHECK(value(p, "FI_PROVIDER") == "<absent>");
  CHECK(value(p, "NCCL_DEBUG") == "<absent>");
}

TEST_CASE("all tasks of a step agree on the port and the address") {
  const auto a = plan_task(task(0, 0, 0), {}, {}, {}, lookup({}));
  const auto b = plan_task(task(3, 1, 1), {}, {}, {}, lookup({}));
  CHECK(value(a, "MASTER_PORT") == value(b, "MASTER_PORT"));
  CHECK(value(a, "MASTER_ADDR") == value(b, "MASTER_ADDR"));
}

TEST_CASE("OMP_NUM_THREADS only when tasks share a node and it is unset") {
  auto t = task(0, 0, 0);
  t.layout.local_world_size = 1;
  t.layout.world_size = 2;
  CHECK(value(plan_task(t, {}, {}, {}, lookup({})), "OMP_NUM_THREADS") == "<absent>");
  t = task(0, 0, 0);
  t.cpus_per_task = 6;
  CHECK(value(plan_task(t, {}, {}, {}, lookup({})), "OMP_NUM_THREADS") == "6");
  CHECK(value(plan_task(t, {}, {}, {}, lookup({{"OMP_NUM_THREADS", "3"}})), "OMP_NUM_THREADS") ==
        "3");
  AdminConfig off;
  off.omp_threads = false;
  CHECK(value(plan_task(t, off, {}, {}, lookup({})), "OMP_NUM_THREADS") == "<absent>");
}

TEST_CASE("user, admin and option precedence") {
  AdminConfig admin;
  admin.nccl_debug = "WARN";
  admin.nccl_socket_ifname = "^docker,lo";
  admin.extra = {{"MASTER_PORT", "29500", "plugstack.conf forceenv", Mode::Force},
                 {"FOO", "bar", "plugstack.conf setenv"}};
  UserOptions user;
  auto p = plan_task(task(0, 0, 0), admin, user, {},
                     lookup({{"NCCL_DEBUG", "TRACE"}, {"FOO", "mine"}, {"MASTER_PORT", "1"}}));
  CHECK(value(p, "NCCL_DEBUG") == "TRACE");  // user's env wins over admin default
  CHECK(value(p, "NCCL_SOCKET_IFNAME") == "^docker,lo");
  CHECK(value(p, "MASTER_PORT") == "29500");  // forced by the admin
  CHECK(value(p, "FOO") == "mine");

  user.nccl_debug = "INFO";
  p = plan_task(task(0, 0, 0), admin, user, {}, lookup({{"NCCL_DEBUG", "TRACE"}}));
  CHECK(value(p, "NCCL_DEBUG") == "INFO");  // the explicit option wins
  user.nccl_debug = "";
  p = plan_task(task(0, 0, 0), admin, user, {}, lookup({}));
  CHECK(value(p, "NCCL_DEBUG") == "<absent>");
}

TEST_CASE("EFA required but absent fails the task with a clear message") {
  UserOptions user;
  user.efa = EfaMode::On;
  CHECK_THROWS_WITH(plan_task(task(0, 0, 0), {}, user, {}, lookup({})),
                    Catch::Contains("EFA required"));
}

TEST_CASE("a missing or non-IPv4 master address is an error") {
  auto t = task(0, 0, 0);
  t.master_addr = "node1";
  CHECK_THROWS_WITH(plan_task(t, {}, {}, {}, lookup({})), Catch::Contains("IPv4"));
  t.master_addr.clear();
  CHECK_THROWS_AS(plan_task(t, {}, {}, {}, lookup({})), InputError);
}

TEST_CASE("describe shows every decision and note") {
  const auto p = plan_task(task(0, 0, 0), {}, {}, {}, lookup({{"MASTER_PORT", "5"}}));
  const auto text = describe(p);
  CHECK_THAT(text, Catch::Contains("MASTER_PORT=5  (kept user value"));
  CHECK_THAT(text, Catch::Contains("RANK=0  (set: global task id)"));
  CHECK_THAT(text, Catch::Contains("# no EFA device"));
}
