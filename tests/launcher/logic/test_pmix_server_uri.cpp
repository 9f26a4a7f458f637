#include <catch2/catch.hpp>

#include "wireup/pmix_server_uri.hpp"

using namespace wireup;

TEST_CASE("PMIx server URIs as Open MPI and Slurm set them") {
  const auto v4 = parse_pmix_server_uri("1211301888.1;tcp4://127.0.0.1:39957");
  REQUIRE(v4);
  CHECK_FALSE(v4->ipv6);
  CHECK(v4->addr == "127.0.0.1");
  CHECK(v4->port == 39957);

  const auto v6 = parse_pmix_server_uri("slurm.pmix.12.0;tcp6://[fe80::1]:4000");
  REQUIRE(v6);
  CHECK(v6->ipv6);
  CHECK(v6->addr == "fe80::1");
  CHECK(v6->port == 4000);

  // No namespace part: the address alone still reads.
  REQUIRE(parse_pmix_server_uri("tcp4://10.0.0.5:1"));
}

TEST_CASE("PMIx server URIs that name no TCP endpoint give nothing") {
  for (const char* bad : {"", "1.0;usock:/tmp/pmix", "1.0;tcp4://127.0.0.1", "1.0;tcp4://:80",
                          "1.0;tcp4://127.0.0.1:0", "1.0;tcp4://127.0.0.1:65536",
                          "1.0;tcp4://127.0.0.1:80x", "1.0;tcp6://::1:80", "1.0;tcp6://[]:80"}) {
    INFO(bad);
    CHECK_FALSE(parse_pmix_server_uri(bad));
  }
}
