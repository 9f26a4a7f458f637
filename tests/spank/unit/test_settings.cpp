#include <catch2/catch.hpp>

#include "wireup/error.hpp"
#include "wireup/settings.hpp"

using namespace wireup;
using Args = std::vector<std::string>;

TEST_CASE("admin arguments") {
  const auto c = parse_admin_args({"default=on", "efa=off", "port_base=20000", "port_range=500",
                                   "nccl_socket_ifname=^docker,lo,veth", "nccl_debug=info",
                                   "omp_num_threads=off", "setenv=FOO=a=b",
                                   "forceenv=NCCL_P2P_DISABLE=1", "sysroot=/tmp/fake"});
  CHECK(c.default_on);
  CHECK(c.efa == EfaMode::Off);
  CHECK(c.ports.base == 20000);
  CHECK(c.ports.range == 500);
  CHECK(c.nccl_socket_ifname == "^docker,lo,veth");
  CHECK(c.nccl_debug == "INFO");
  CHECK_FALSE(c.omp_threads);
  REQUIRE(c.extra.size() == 2);
  CHECK(c.extra[0].name == "FOO");
  CHECK(c.extra[0].value == "a=b");
  CHECK(c.extra[0].mode == Mode::IfUnset);
  CHECK(c.extra[1].mode == Mode::Force);
  CHECK(c.sysroot == "/tmp/fake");

  const auto d = parse_admin_args({});
  CHECK_FALSE(d.default_on);
  CHECK(d.efa == EfaMode::Auto);
  CHECK(d.ports.base == 61000);
}

TEST_CASE("bad admin arguments name the key and the expected values") {
  CHECK_THROWS_WITH(parse_admin_args({"defualt=on"}),
                    Catch::Contains("unknown key 'defualt'") && Catch::Contains("default=on|off"));
  CHECK_THROWS_WITH(parse_admin_args({"efa=maybe"}),
                    Catch::Contains("efa") && Catch::Contains("auto, on or off"));
  CHECK_THROWS_WITH(parse_admin_args({"port_base=80"}), Catch::Contains("1024..65535"));
  for (const Args& bad :
       {Args{"default"}, Args{"=on"}, Args{"port_base=-1"}, Args{"port_base=70000"},
        Args{"port_range=0"}, Args{"port_range=x"}, Args{"nccl_socket_ifname=eth0;rm"},
        Args{"nccl_socket_ifname="}, Args{"nccl_debug=LOUD"}, Args{"setenv=NOEQUALS"},
        Args{"setenv=1BAD=x"}, Args{"setenv=A=b\nc"}, Args{"sysroot=relative"},
        Args{"omp_num_threads=2"}}) {
    INFO(bad[0]);
    CHECK_THROWS_AS(parse_admin_args(bad), InputError);
  }
}

TEST_CASE("user option values") {
  CHECK(parse_on_off("--wireup", nullptr, true));
  CHECK(parse_on_off("--wireup", "", true));
  CHECK_FALSE(parse_on_off("--wireup", "off", true));
  CHECK(parse_on_off("--wireup", "YES", false));
  CHECK_THROWS_WITH(parse_on_off("--wireup", "maybe", true),
                    Catch::Contains("--wireup") && Catch::Contains("on or off"));
  CHECK(parse_efa_mode("--wireup-efa", "ON") == EfaMode::On);
  CHECK_THROWS_WITH(parse_efa_mode("--wireup-efa", "bogus"),
                    Catch::Contains("--wireup-efa") && Catch::Contains("'bogus'") &&
                        Catch::Contains("auto, on or off"));
  CHECK_THROWS_AS(parse_efa_mode("--wireup-efa", nullptr), InputError);
  CHECK(parse_nccl_debug("--wireup-nccl-debug", "info") == "INFO");
  CHECK(parse_nccl_debug("--wireup-nccl-debug", "off").empty());
  CHECK_THROWS_AS(parse_nccl_debug("--wireup-nccl-debug", "verbose"), InputError);
}

TEST_CASE("when wireup is on") {
  AdminConfig admin;
  UserOptions user;
  CHECK_FALSE(wireup_enabled(admin, user));
  admin.default_on = true;
  CHECK(wireup_enabled(admin, user));
  user.wireup = false;
  CHECK_FALSE(wireup_enabled(admin, user));
  admin.default_on = false;
  user = {};
  user.efa = EfaMode::Off;
  CHECK(wireup_enabled(admin, user));  // a sub-option implies --wireup
  user.wireup = false;
  CHECK_FALSE(wireup_enabled(admin, user));
}
