// Agent 0's control endpoint without PMIx: the port every agent derives, and
// the HELLO that carries an agent's worker count.
#include <catch2/catch.hpp>

#include "wireup/control_endpoint.hpp"
#include "wireup/rendezvous.hpp"

using namespace wireup;

TEST_CASE("control port: MASTER_PORT + 32, below it near the top, the same on every agent") {
  CHECK(control_port_for(29500) == 29532);
  CHECK(control_port_for(65503) == 65535);
  CHECK(control_port_for(65504) == 65472);
  CHECK(control_port_for(65535) == 65503);
  // Derived MASTER_PORTs: the control port is this job's slot for step + 32,
  // never the next steps' MASTER_PORTs.
  const PortPolicy p{};
  for (std::uint64_t step = 0; step < 4; ++step) {
    const std::uint32_t master = derive_port(p, 4242, step);
    const std::uint32_t control = control_port_for(master);
    CHECK(control != master);
    CHECK(control == derive_port(p, 4242, step + kControlPortOffset));
    for (std::uint64_t other = 0; other < 8; ++other) CHECK(control != derive_port(p, 4242, other));
  }
}

TEST_CASE("agent HELLO: rank and worker count on the wire, exec mode's rank alone") {
  CHECK(format_message(ControlVerb::Hello, hello_args({3, 8})) == "HELLO 3 8\n");
  CHECK(format_message(ControlVerb::Hello, hello_args({3, std::nullopt})) == "HELLO 3\n");

  std::vector<ControlMessage> msgs;
  ControlLineReader r;
  REQUIRE(r.feed("HELLO 3 8\nHELLO 2\nHELLO\nSTOP 1\n", msgs));
  REQUIRE(msgs.size() == 4);
  const auto a = parse_hello(msgs[0]);
  REQUIRE(a);
  CHECK(a->rank == 3);
  CHECK(a->nproc == 8u);
  const auto b = parse_hello(msgs[1]);
  REQUIRE(b);
  CHECK(b->rank == 2);
  CHECK_FALSE(b->nproc);
  CHECK_FALSE(parse_hello(msgs[2]));  // no rank
  CHECK_FALSE(parse_hello(msgs[3]));  // not a HELLO
}

TEST_CASE("agent HELLO: a worker count other than agent 0's is refused, naming both") {
  CHECK_FALSE(nproc_mismatch({1, 4}, 4));
  const auto m = nproc_mismatch({1, 2}, 4);
  REQUIRE(m);
  CHECK_THAT(*m, Catch::Contains("agent 1 runs 2 worker(s) but agent 0 runs 4") &&
                     Catch::Contains("same --nproc-per-node") && Catch::Contains("--mpi=pmix"));
  const auto silent = nproc_mismatch({5, std::nullopt}, 4);
  REQUIRE(silent);
  CHECK_THAT(*silent, Catch::Contains("agent 5 did not say"));
}

TEST_CASE("an unreachable agent 0 is named by address and port") {
  const std::string e = control_unreachable("10.0.0.1", 61032, 600, "Connection refused");
  CHECK_THAT(e, Catch::Contains("10.0.0.1:61032") && Catch::Contains("within 600 s") &&
                    Catch::Contains("Connection refused") &&
                    Catch::Contains("WIREUP_FENCE_TIMEOUT"));
}

TEST_CASE("agent HELLO: the step it belongs to; another step's link is closed") {
  const AgentHello h{1, 2, 77, 4294967291u};
  CHECK(format_message(ControlVerb::Hello, hello_args(h)) == "HELLO 1 2 77 4294967291\n");
  std::vector<ControlMessage> msgs;
  ControlLineReader r;
  REQUIRE(r.feed("HELLO 1 2 77 4294967291\n", msgs));
  const auto back = parse_hello(msgs.at(0));
  REQUIRE(back);
  CHECK(back->job == 77u);
  CHECK(back->step == 4294967291u);
  CHECK_FALSE(foreign_hello(*back, 77, 4294967291u));
  CHECK_FALSE(foreign_hello({1, 2, std::nullopt, std::nullopt}, 77, 0));  // did not say
  const auto other = foreign_hello({1, 2, 78, 0}, 77, 0);
  REQUIRE(other);
  CHECK_THAT(*other, Catch::Contains("agent 1 of job 78 step 0, not this step (77.0)") &&
                         Catch::Contains("--control-port"));
}
