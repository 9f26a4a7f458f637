#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "wireup/error.hpp"
#include "wireup/rendezvous.hpp"

using namespace wireup;

TEST_CASE("ports are deterministic, in range and outside the ephemeral range") {
  const PortPolicy p;
  CHECK(derive_port(p, 1234, 0) == derive_port(p, 1234, 0));
  for (std::uint64_t job = 1; job < 5000; job += 7)
    for (std::uint64_t step : {0ull, 1ull, 63ull, 0xfffffffbull}) {
      const auto port = derive_port(p, job, step);
      REQUIRE(port >= 61000);
      REQUIRE(port <= 65534);
    }
  CHECK_FALSE(check_port_policy(p, 32768, 60999));
}

TEST_CASE("concurrent steps of one job get different ports") {
  const PortPolicy p;
  std::set<std::uint32_t> seen;
  for (std::uint64_t step = 0; step < 1000; ++step) seen.insert(derive_port(p, 777, step));
  CHECK(seen.size() == 1000);
}

TEST_CASE("nearby jobs never share a port for their first 64 steps") {
  const PortPolicy p;
  for (std::uint64_t base : {1ull, 4534ull, 123456ull}) {
    std::set<std::uint32_t> seen;
    std::size_t n = 0;
    for (std::uint64_t job = base; job < base + 70; ++job)
      for (std::uint64_t step = 0; step < kStepsPerJob; ++step, ++n)
        seen.insert(derive_port(p, job, step));
    CHECK(seen.size() == n);
  }
}

TEST_CASE("ports spread evenly over the range") {
  const PortPolicy p = GENERATE(PortPolicy{61000, 100}, PortPolicy{20000, 128});
  std::map<std::uint32_t, int> hits;
  for (std::uint64_t job = 1; job <= 10000; ++job) ++hits[derive_port(p, job, 0)];
  CHECK(hits.size() == p.range);  // every port used
  const int expected = 10000 / static_cast<int>(p.range);
  for (const auto& [port, n] : hits) {
    INFO(port);
    CHECK(n >= expected / 2);
    CHECK(n <= expected * 3 / 2);
  }
}

TEST_CASE("port policy checks") {
  CHECK(check_port_policy({20000, 1000}, 32768, 60999) == std::nullopt);
  CHECK(check_port_policy({32000, 1000}, 32768, 60999)->find("ephemeral") != std::string::npos);
  CHECK(check_port_policy({65000, 1000}, 32768, 60999)->find("65535") != std::string::npos);
  CHECK(check_port_policy({80, 10}, 32768, 60999));
  CHECK(check_port_policy({61000, 0}, 32768, 60999));
}

TEST_CASE("IPv4 from host names") {
  CHECK(ipv4_from_host_name("ip-10-1-2-3") == "10.1.2.3");
  CHECK(ipv4_from_host_name("ip-172-31-255-7.ec2.internal") == "172.31.255.7");
  CHECK(ipv4_from_host_name("127.0.0.5") == "127.0.0.5");
  CHECK_FALSE(ipv4_from_host_name("ip-10-1-2"));
  CHECK_FALSE(ipv4_from_host_name("ip-10-1-2-300"));
  CHECK_FALSE(ipv4_from_host_name("gpu-01"));
  CHECK_FALSE(ipv4_from_host_name("ip-010-1-2-3"));
  CHECK_FALSE(is_ipv4_literal("1.2.3"));
  CHECK_FALSE(is_ipv4_literal("1.2.3.4.5"));
  CHECK(is_ipv4_literal("0.0.0.0"));
}

TEST_CASE("task layouts are checked") {
  CHECK_NOTHROW(check_layout({3, 1, 4, 2, 1, 2}));
  CHECK_THROWS_AS(check_layout({4, 0, 4, 2, 1, 2}), InputError);
  CHECK_THROWS_AS(check_layout({0, 2, 4, 2, 0, 2}), InputError);
  CHECK_THROWS_AS(check_layout({0, 0, 0, 1, 0, 1}), InputError);
  CHECK_THROWS_AS(check_layout({0, 0, 4, 2, 2, 2}), InputError);
  CHECK_THROWS_AS(check_layout({0, 0, 4, 5, 0, 1}), InputError);
}
