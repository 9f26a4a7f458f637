// Exec mode's fail-fast rules and the process-tree walk.
#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>

#include "wireup/exec_supervision.hpp"
#include "wireup/process_tree.hpp"

using namespace wireup;

TEST_CASE("exec step watch: the first failure is the root cause; done counts each rank once") {
  ExecStepWatch w(3);
  CHECK_FALSE(w.all_done());
  w.done(0);
  w.done(0);
  w.done(7);  // not a rank of this step
  w.done(2);
  CHECK_FALSE(w.all_done());
  const auto first = w.fail(1, 3);
  REQUIRE(first);
  CHECK(first->rank == 1);
  CHECK(first->code == 3);
  CHECK_FALSE(w.fail(2, 137));
  CHECK(w.root()->code == 3);
  w.done(1);
  CHECK(w.all_done());
  ExecStepWatch z(2);
  CHECK(z.fail(0, 0)->code == 1);  // a failure never reports success
}

TEST_CASE("signals are forwarded to the program only from senders that did not reach it") {
  const pid_t parent = 100, program = 200;
  CHECK(forward_to_program(SI_USER, 555, parent, program));  // kill PID by a user
  CHECK(forward_to_program(SI_QUEUE, 555, parent, program));
  CHECK_FALSE(forward_to_program(SI_USER, parent, parent, program));  // slurmstepd, orted
  CHECK_FALSE(forward_to_program(SI_USER, program, parent, program));
  CHECK_FALSE(forward_to_program(SI_KERNEL, 0, parent, program));  // a terminal's ^C
  CHECK_FALSE(forward_to_program(SI_USER, 0, parent, program));
}

TEST_CASE("a program that cannot run exits as the shell says: 127 not found, 126 not runnable") {
  CHECK(exec_failure_exit_code(ENOENT) == 127);
  CHECK(exec_failure_exit_code(EACCES) == 126);
  CHECK(exec_failure_exit_code(ENOEXEC) == 126);
  CHECK(exec_failure_exit_code(EISDIR) == 126);
}

TEST_CASE("proc stat lines: odd command names, bad lines") {
  auto p = parse_proc_stat("4242 (my (odd) name) S 17 4242 4242 0 -1");
  REQUIRE(p);
  CHECK(p->pid == 4242);
  CHECK(p->ppid == 17);
  CHECK(p->state == 'S');
  auto z = parse_proc_stat("9 (a) b) Z 1 0");
  REQUIRE(z);
  CHECK(z->state == 'Z');
  CHECK(z->ppid == 1);
  CHECK_FALSE(parse_proc_stat(""));
  CHECK_FALSE(parse_proc_stat("12 comm S 1"));
  CHECK_FALSE(parse_proc_stat("x (a) S 1 2"));
  CHECK_FALSE(parse_proc_stat("12 (a) S"));
}

TEST_CASE("live descendants: the whole subtree, zombies skipped but walked, others left") {
  const std::vector<ProcStat> procs{
      {1, 0, 'S'},   {10, 1, 'S'}, {11, 10, 'S'}, {12, 11, 'S'},  // 10 is the root
      {13, 10, 'Z'}, {14, 1, 'S'}, {15, 14, 'S'}, {16, 12, 'R'},
  };
  auto d = live_descendants(10, procs);
  CHECK(d == std::vector<pid_t>{11, 12, 16});
  CHECK(live_descendants(16, procs).empty());
  CHECK(live_descendants(99, procs).empty());
}
