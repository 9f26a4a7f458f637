#include <catch2/catch.hpp>

#include "env_map.hpp"
#include "wireup/error.hpp"
#include "wireup/launch_layout.hpp"

using namespace wireup;
using U = std::vector<std::uint32_t>;

TEST_CASE("node groups from node ids that are not 0..N-1 (mpirun gives 1, 2)") {
  auto g = group_by_node({1, 1, 2, 2});
  CHECK(g.count == 2);
  CHECK(g.group_of_rank == U{0, 0, 1, 1});
  // Cyclic placement: the node of rank 0 is group 0 whatever its id.
  g = group_by_node({7, 3, 7, 3, 9});
  CHECK(g.count == 3);
  CHECK(g.group_of_rank == U{0, 1, 0, 1, 2});
}

TEST_CASE("rank offsets: sum of lower agents' worker counts") {
  auto r = rank_offsets({4, 2, 4});
  CHECK(r.first_rank == U{0, 4, 6});
  CHECK(r.world_size == 10);
  CHECK_THROWS_AS(rank_offsets({2, 0}), InputError);
}

TEST_CASE("nproc resolution and GPU counting") {
  CHECK(resolve_nproc("3", 8, 2) == 3);
  CHECK(resolve_nproc("auto", 0, 2) == 2);
  CHECK(resolve_nproc("auto", 4, 2) == 4);
  CHECK(resolve_nproc("cpu", 4, 16) == 16);
  CHECK_THROWS_WITH(resolve_nproc("gpu", 0, 2), Catch::Contains("no GPU"));
  CHECK(visible_gpu_count(std::nullopt, 8) == 8);
  CHECK(visible_gpu_count(std::string("0,1,2"), 8) == 3);
  CHECK(visible_gpu_count(std::string(""), 8) == 0);
  CHECK(visible_gpu_count(std::string("0,-1,2"), 8) == 1);
}

TEST_CASE("--nnodes is checked against the job") {
  CHECK_NOTHROW(check_nnodes("2", 2));
  CHECK_NOTHROW(check_nnodes("1:4", 3));
  CHECK_THROWS_WITH(check_nnodes("2", 3), Catch::Contains("--nnodes=2") && Catch::Contains("3 node"));
  CHECK_THROWS(check_nnodes("1:2", 3));
}

TEST_CASE("peer records round-trip and reject garbage") {
  PeerRecord p{5, 8, "ip-10-0-0-1", "10.0.0.1:61234", "10.0.0.1:40000"};
  auto q = decode_peer(encode_peer(p));
  CHECK(q.node_id == 5);
  CHECK(q.nproc == 8);
  CHECK(q.host == "ip-10-0-0-1");
  CHECK(q.master == "10.0.0.1:61234");
  CHECK(q.control == "10.0.0.1:40000");
  CHECK(decode_peer("node=1;nproc=2;future=x").nproc == 2);
  CHECK_THROWS_WITH(decode_peer("nproc=2"), Catch::Contains("node=ID"));
  CHECK_THROWS(decode_peer("node=1;nproc=0"));
  CHECK(split_endpoint("m", "127.0.0.2:29500") == std::pair<std::string, std::uint32_t>{"127.0.0.2", 29500});
  CHECK_THROWS_WITH(split_endpoint("master", "host"), Catch::Contains("master") && Catch::Contains("ADDRESS:PORT"));
  CHECK_THROWS(split_endpoint("m", "h:0"));
}

static std::map<std::string, std::string> slurm_task() {
  return {{"SLURM_JOB_ID", "42"},        {"SLURM_STEP_ID", "3"},
          {"SLURM_PROCID", "5"},         {"SLURM_LOCALID", "1"},
          {"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_NODEID", "2"},
          {"SLURM_STEP_NUM_NODES", "4"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x4)"},
          {"SLURM_STEP_NODELIST", "ip-127-0-0-[2-5]"}};
}

TEST_CASE("identity from a Slurm task without PMIx") {
  CHECK_FALSE(identity_from_slurm(env_of({})));
  auto id = identity_from_slurm(env_of(slurm_task()));
  REQUIRE(id);
  CHECK(id->rank == 5);
  CHECK(id->size == 8);
  CHECK(id->local_rank == 1);
  CHECK(id->local_size == 2);
  CHECK(id->node_rank == 2);
  CHECK(id->num_nodes == 4);
  CHECK(id->master_addr == "127.0.0.2");
  REQUIRE(id->master_port);
  CHECK(*id->master_port >= 61000);
  CHECK(id->run_id == "42.3");
}

TEST_CASE("identity from Slurm honours spank_wireup's address") {
  auto env = slurm_task();
  env["MASTER_ADDR"] = "10.1.1.1";
  env["MASTER_PORT"] = "61111";
  // Not injected by wireup: a user's stale value is not the step's address.
  CHECK(identity_from_slurm(env_of(env))->master_addr == "127.0.0.2");
  env["WIREUP_INJECTED"] = "RANK MASTER_ADDR MASTER_PORT";
  auto id = identity_from_slurm(env_of(env));
  CHECK(id->master_addr == "10.1.1.1");
  CHECK(id->master_port == 61111u);
}

TEST_CASE("a partial Slurm environment names the missing variable") {
  auto env = slurm_task();
  env.erase("SLURM_LOCALID");
  CHECK_THROWS_WITH(identity_from_slurm(env_of(env)), Catch::Contains("SLURM_LOCALID"));
  CHECK_THAT(no_job_message(), Catch::Contains("PMIX_NAMESPACE") && Catch::Contains("SLURM_PROCID") &&
                                   Catch::Contains("--standalone"));
}
