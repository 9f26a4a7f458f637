#include <catch2/catch.hpp>
#include <map>

#include "wireup/error.hpp"
#include "wireup/launch_env.hpp"

using namespace wireup;

static std::map<std::string, std::string> as_map(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const auto& kv : env) {
    const auto eq = kv.find('=');
    REQUIRE(m.emplace(kv.substr(0, eq), kv.substr(eq + 1)).second);  // no duplicates
  }
  return m;
}

static WorkerSpec spec() {
  WorkerSpec w;
  w.rank = 5;
  w.local_rank = 1;
  w.world_size = 8;
  w.local_world_size = 2;
  w.group_rank = 2;
  w.group_world_size = 4;
  w.master_addr = "127.0.0.2";
  w.master_port = 61234;
  w.restart_count = 1;
  w.max_restarts = 3;
  w.run_id = "42.0";
  w.error_file = "/tmp/e/5/error.json";
  return w;
}

TEST_CASE("the full torchrun worker set") {
  auto m = as_map(build_worker_env(spec(), {"PATH=/bin", "HOME=/root"}));
  const std::map<std::string, std::string> want = {
      {"RANK", "5"},
      {"GROUP_RANK", "2"},
      {"ROLE_RANK", "5"},
      {"ROLE_NAME", "default"},
      {"LOCAL_RANK", "1"},
      {"LOCAL_WORLD_SIZE", "2"},
      {"WORLD_SIZE", "8"},
      {"GROUP_WORLD_SIZE", "4"},
      {"ROLE_WORLD_SIZE", "8"},
      {"MASTER_ADDR", "127.0.0.2"},
      {"MASTER_PORT", "61234"},
      {"TORCHELASTIC_RESTART_COUNT", "1"},
      {"TORCHELASTIC_MAX_RESTARTS", "3"},
      {"TORCHELASTIC_RUN_ID", "42.0"},
      {"TORCHELASTIC_USE_AGENT_STORE", "False"},
      {"TORCHELASTIC_ERROR_FILE", "/tmp/e/5/error.json"},
      {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
      {"OMP_NUM_THREADS", "1"},
      {"PATH", "/bin"},
      {"HOME", "/root"}};
  CHECK(m == want);
}

TEST_CASE("the launcher's PMIx/MPI identity and stale torchrun values do not leak") {
  auto m = as_map(build_worker_env(
      spec(),
      {"PMIX_RANK=0", "PMIX_NAMESPACE=x", "PMIX_SERVER_URI41=y", "OMPI_COMM_WORLD_RANK=0",
       "PMI_FD=3", "RANK=99", "MASTER_PORT=1", "TORCHELASTIC_ERROR_FILE=/old", "PMIXY=kept"}));
  CHECK(m.count("PMIX_RANK") == 0);
  CHECK(m.count("PMIX_NAMESPACE") == 0);
  CHECK(m.count("PMIX_SERVER_URI41") == 0);
  CHECK(m.count("OMPI_COMM_WORLD_RANK") == 0);
  CHECK(m.count("PMI_FD") == 0);
  CHECK(m["RANK"] == "5");
  CHECK(m["MASTER_PORT"] == "61234");
  CHECK(m["TORCHELASTIC_ERROR_FILE"] == "/tmp/e/5/error.json");
  CHECK(m["PMIXY"] == "kept");
}

TEST_CASE("user values for OMP_NUM_THREADS and NCCL error handling win") {
  auto m =
      as_map(build_worker_env(spec(), {"OMP_NUM_THREADS=8", "TORCH_NCCL_ASYNC_ERROR_HANDLING=0"}));
  CHECK(m["OMP_NUM_THREADS"] == "8");
  CHECK(m["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "0");
}

TEST_CASE("one worker per node: OMP_NUM_THREADS is left alone") {
  auto w = spec();
  w.local_world_size = 1;
  w.local_rank = 0;
  auto m = as_map(build_worker_env(w, {}));
  CHECK(m.count("OMP_NUM_THREADS") == 0);
}

TEST_CASE("an impossible spec is refused") {
  auto w = spec();
  w.rank = 8;
  CHECK_THROWS_WITH(build_worker_env(w, {}), Catch::Contains("rank 8"));
  w = spec();
  w.master_port = 0;
  CHECK_THROWS_WITH(build_worker_env(w, {}), Catch::Contains("MASTER_PORT"));
  w = spec();
  w.master_addr.clear();
  CHECK_THROWS_WITH(build_worker_env(w, {}), Catch::Contains("MASTER_ADDR"));
}

TEST_CASE("exec mode keeps the task's own PMIx identity") {
  auto w = spec();
  w.keep_task_identity = true;
  auto m = as_map(build_worker_env(w, {"PMIX_RANK=5", "PMIX_NAMESPACE=x", "RANK=1"}));
  CHECK(m["PMIX_RANK"] == "5");
  CHECK(m["PMIX_NAMESPACE"] == "x");
  CHECK(m["RANK"] == "5");
}

TEST_CASE("--agent-store: every rank is told to connect to the agent's store") {
  auto w = spec();
  w.agent_store = true;
  auto m = as_map(build_worker_env(w, {"TORCHELASTIC_USE_AGENT_STORE=False"}));
  CHECK(m["TORCHELASTIC_USE_AGENT_STORE"] == "True");
}

TEST_CASE("the stop-reason file: set per worker; an inherited one never leaks") {
  auto w = spec();
  w.stop_reason = "/tmp/e/5/stop-reason";
  auto m = as_map(build_worker_env(w, {"WIREUP_LAUNCH_STOP_REASON=/outer/stop-reason"}));
  CHECK(m["WIREUP_LAUNCH_STOP_REASON"] == "/tmp/e/5/stop-reason");
  // A wireup-launch inside a worker of another: its own workers must not read
  // the outer launcher's file.
  m = as_map(build_worker_env(spec(), {"WIREUP_LAUNCH_STOP_REASON=/outer/stop-reason"}));
  CHECK(m.count("WIREUP_LAUNCH_STOP_REASON") == 0);
  w.stop_reason = "/tmp/a\nb";
  CHECK_THROWS_WITH(build_worker_env(w, {}), Catch::Contains("newline"));
}
