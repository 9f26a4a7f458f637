#include <catch2/catch.hpp>
#include <csignal>

#include "env_map.hpp"
#include "wireup/error.hpp"
#include "wireup/launch_options.hpp"

using namespace wireup;
using Args = std::vector<std::string>;

static LaunchOptions parse(const Args& a, const std::map<std::string, std::string>& env = {}) {
  return parse_launch_args(a, env_of(env)).options;
}

TEST_CASE("exec mode: no --nproc-per-node, program after --") {
  auto o = parse({"--", "prog", "--nproc-per-node=3", "x"});
  CHECK_FALSE(o.nproc_per_node);
  CHECK(o.program == Args{"prog", "--nproc-per-node=3", "x"});
}

TEST_CASE("torchrun spellings: dashes, underscores, separate values, short flags") {
  auto o = parse({"--nproc_per_node", "4", "--max-restarts=2", "-t", "3", "-r3", "--nnodes=2:4",
                  "--rdzv_backend=c10d", "--rdzv-endpoint", "h:29500", "--rdzv_id=job7", "train.py",
                  "--lr", "1"});
  CHECK(o.nproc_per_node == "4");
  CHECK(o.max_restarts == 2);
  CHECK(o.tee == kBothStreams);
  CHECK(o.redirects == kBothStreams);
  CHECK(o.nnodes == "2:4");
  CHECK(o.run_id == "job7");
  CHECK(o.ignored == Args{"--rdzv-backend", "--rdzv-endpoint"});
  CHECK(o.program == Args{"train.py", "--lr", "1"});
  CHECK(worker_argv(o) == Args{"python3", "-u", "train.py", "--lr", "1"});
}

TEST_CASE("PET_ variables fill flags, the command line wins") {
  auto o =
      parse({"--max-restarts=1", "prog"},
            {{"PET_NPROC_PER_NODE", "gpu"}, {"PET_MAX_RESTARTS", "5"}, {"PET_STANDALONE", "1"}});
  CHECK(o.nproc_per_node == "gpu");
  CHECK(o.max_restarts == 1);
  CHECK(o.standalone);
  CHECK_FALSE(o.control_port);
  CHECK(parse({"--control_port", "29600", "p"}).control_port == 29600u);
  CHECK(parse({"p"}, {{"PET_CONTROL_PORT", "29601"}}).control_port == 29601u);
  CHECK_THROWS_WITH(parse({"prog"}, {{"PET_NPROC_PER_NODE", "many"}}),
                    Catch::Contains("PET_NPROC_PER_NODE") && Catch::Contains("'many'"));
}

TEST_CASE("program wrapping: .py, -m, --no-python") {
  CHECK(worker_argv(parse({"-m", "pkg.mod", "a"})) == Args{"python3", "-u", "-m", "pkg.mod", "a"});
  CHECK(worker_argv(parse({"--no-python", "x.py"})) == Args{"x.py"});
  CHECK(worker_argv(parse({"--python=/usr/bin/python3", "x.py"})) ==
        Args{"/usr/bin/python3", "-u", "x.py"});
  CHECK(worker_argv(parse({"/bin/true"})) == Args{"/bin/true"});
}

TEST_CASE("bad flags name the flag and what was expected") {
  CHECK_THROWS_WITH(parse({"--nproc-per-node=0", "p"}),
                    Catch::Contains("--nproc-per-node") && Catch::Contains("'0'"));
  CHECK_THROWS_WITH(parse({"--bogus", "p"}), Catch::Contains("unknown option '--bogus'"));
  CHECK_THROWS_WITH(parse({"--max-restarts"}), Catch::Contains("--max-restarts: expected a value"));
  CHECK_THROWS_WITH(parse({"--master-port=70000", "p"}), Catch::Contains("--master-port"));
  CHECK_THROWS_WITH(parse({"--control-port=0", "p"}), Catch::Contains("--control-port"));
  CHECK_THROWS_WITH(parse({"--control_port=x", "p"}), Catch::Contains("--control-port"));
  CHECK_THROWS_WITH(parse({"--nnodes=4:2", "p"}), Catch::Contains("MIN:MAX"));
  CHECK_THROWS_WITH(parse({"--tee=7", "p"}), Catch::Contains("--tee"));
  CHECK_THROWS_WITH(parse({"--grace-period=-1", "p"}), Catch::Contains("--grace-period"));
  CHECK_THROWS_WITH(parse({"--no-python", "-m", "p"}), Catch::Contains("cannot be combined"));
  CHECK_THROWS_WITH(parse({"--standalone", "--nnodes=2", "p"}), Catch::Contains("--standalone"));
}

TEST_CASE("a missing program is an error") {
  CHECK_THROWS_WITH(parse({}), Catch::Contains("missing PROGRAM"));
  CHECK_THROWS_WITH(parse({"--nproc-per-node=2", "--"}), Catch::Contains("missing PROGRAM"));
  CHECK_THROWS_AS(parse({"--standalone"}), InputError);
}

TEST_CASE("--help and --version stop parsing") {
  CHECK(parse_launch_args({"--help"}, env_of({})).help);
  CHECK(parse_launch_args({"-h", "--bogus"}, env_of({})).help);
  CHECK(parse_launch_args({"--version"}, env_of({})).version);
}

TEST_CASE("signal lists") {
  CHECK(parse({"p"}).signals_to_handle == default_forwarded_signals());
  CHECK(parse_signal_list("x", "SIGTERM, usr1,2") == std::vector<int>{SIGTERM, SIGUSR1, SIGINT});
  CHECK_THROWS_WITH(parse_signal_list("--signals-to-handle", "SIGFOO"),
                    Catch::Contains("--signals-to-handle") && Catch::Contains("SIGFOO"));
  CHECK_THROWS_WITH(parse_signal_list("s", "SIGKILL"), Catch::Contains("cannot be caught"));
  CHECK_THROWS(parse_signal_list("s", ","));
}

TEST_CASE("local rank lists") {
  CHECK(parse_rank_list("f", "3,0-1,1") == std::vector<std::uint32_t>{0, 1, 3});
  CHECK_THROWS_WITH(parse_rank_list("--local-ranks-filter", "2-1"),
                    Catch::Contains("--local-ranks-filter"));
  CHECK_THROWS(parse_rank_list("f", "a"));
  CHECK_THROWS(parse_rank_list("f", ""));
}

TEST_CASE("--agent-store and --preload: agent mode, Python programs, module names") {
  auto o = parse({"--nproc-per-node=2", "--agent-store", "--preload",
                  "torch, torch.distributed,torch", "train.py"});
  CHECK(o.agent_store);
  CHECK(o.preload == Args{"torch", "torch.distributed"});
  CHECK(runs_python(o));
  auto m = parse({"--nproc-per-node=2", "--preload=numpy", "-m", "pkg.train"}, {});
  CHECK(m.preload == Args{"numpy"});
  auto e = parse({"train.py"},
                 {{"PET_NPROC_PER_NODE", "2"}, {"PET_AGENT_STORE", "1"}, {"PET_PRELOAD", "torch"}});
  CHECK(e.agent_store);
  CHECK(e.preload == Args{"torch"});
  CHECK_FALSE(parse({"--nproc-per-node=2", "train.py"}).agent_store);

  CHECK_THROWS_WITH(parse({"--agent-store", "train.py"}), Catch::Contains("needs agent mode"));
  CHECK_THROWS_WITH(parse({"--preload=torch", "train.py"}), Catch::Contains("needs agent mode"));
  CHECK_THROWS_WITH(parse({"--nproc-per-node=2", "--preload=torch", "./train"}),
                    Catch::Contains("needs a Python PROGRAM") && Catch::Contains("'./train'"));
  CHECK_THROWS_WITH(parse({"--nproc-per-node=2", "--preload=torch", "--no-python", "t.py"}),
                    Catch::Contains("needs a Python PROGRAM"));
  for (const char* bad : {"", "torch,", "1torch", "torch..nn", "torch;rm", "a-b"})
    CHECK_THROWS_WITH(parse({"--nproc-per-node=2", std::string("--preload=") + bad, "t.py"}),
                      Catch::Contains("--preload: expected Python module names"));
  CHECK_THROWS_WITH(
      parse({"--nproc-per-node=2", "--agent-store", "--master-addr=10.0.0.1", "t.py"}),
      Catch::Contains("cannot be combined"));
}
