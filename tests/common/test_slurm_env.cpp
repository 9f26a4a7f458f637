#include <catch2/catch.hpp>

#include "env_fixture.hpp"
#include "wireup/slurm_env.hpp"

using namespace wireup;

TEST_CASE("task facts from SLURM_* variables") {
  const auto t = task_from_slurm_env(lookup({{"SLURM_JOB_ID", "7"},
                                             {"SLURM_STEP_ID", "2"},
                                             {"SLURM_PROCID", "4"},
                                             {"SLURM_LOCALID", "0"},
                                             {"SLURM_STEP_NUM_TASKS", "5"},
                                             {"SLURM_NODEID", "2"},
                                             {"SLURM_STEP_NUM_NODES", "3"},
                                             {"SLURM_STEP_TASKS_PER_NODE", "2(x2),1"},
                                             {"SLURM_STEP_NODELIST", "ip-127-0-0-[2-4]"}}));
  CHECK(t.facts.job_id == 7);
  CHECK(t.facts.layout.rank == 4);
  CHECK(t.facts.layout.local_world_size == 1);
  CHECK(t.first_node == "ip-127-0-0-2");
  CHECK_THROWS_WITH(task_from_slurm_env(lookup({})), Catch::Contains("SLURM_JOB_ID"));
}
