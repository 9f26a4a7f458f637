#include <catch2/catch.hpp>

#include "wireup/error.hpp"
#include "wireup/nodelist.hpp"

using wireup::expand_nodelist;
using wireup::InputError;
using V = std::vector<std::string>;

TEST_CASE("node lists expand ranges, lists and padding") {
  CHECK(expand_nodelist("n1") == V{"n1"});
  CHECK(expand_nodelist("n[1-3,7],gpu-[01-02]") == V{"n1", "n2", "n3", "n7", "gpu-01", "gpu-02"});
  CHECK(expand_nodelist("ip-10-0-[1-2]-5") == V{"ip-10-0-1-5", "ip-10-0-2-5"});
  CHECK(expand_nodelist("r[1-2]n[08-10]") ==
        V{"r1n08", "r1n09", "r1n10", "r2n08", "r2n09", "r2n10"});
  CHECK(expand_nodelist("a,b.example.com") == V{"a", "b.example.com"});
  CHECK(expand_nodelist("n[9-11]") == V{"n9", "n10", "n11"});
}

TEST_CASE("first_node does not expand the whole list") {
  CHECK(wireup::first_node("ip-172-31-[4-9]-7,x") == "ip-172-31-4-7");
  CHECK(wireup::first_node("n[5-999999999]") == "n5");
  CHECK(wireup::first_node("gpu-[01-02]") == "gpu-01");
}

TEST_CASE("malformed node lists name the list and the fault") {
  for (const char* bad : {"", "n[1-3", "n1-3]", "n[3-1]", "n[a-b]", "n[1-2", "n[[1]]", "n,,m",
                          "n[1-2],", "[1-2]", "n[]", "n[1-]", "no space", "n\n1"}) {
    INFO(bad);
    CHECK_THROWS_AS(expand_nodelist(bad), InputError);
  }
  CHECK_THROWS_WITH(expand_nodelist("n[3-1]"), Catch::Contains("runs backwards") &&
                                                   Catch::Contains("'n[3-1]'"));
}

TEST_CASE("expansion is capped") {
  CHECK(expand_nodelist("n[1-100]", 100).size() == 100);
  CHECK_THROWS_WITH(expand_nodelist("n[1-101]", 100), Catch::Contains("more than 100"));
  CHECK_THROWS_AS(expand_nodelist("n[1-999999999]"), InputError);
}

TEST_CASE("tasks per node") {
  using U = std::vector<std::uint32_t>;
  CHECK(wireup::expand_tasks_per_node("4") == U{4});
  CHECK(wireup::expand_tasks_per_node("2(x3),1") == U{2, 2, 2, 1});
  for (const char* bad : {"", "x", "2(x0)", "2(3)", "2(x3", "-1", "2(x)"}) {
    INFO(bad);
    CHECK_THROWS_AS(wireup::expand_tasks_per_node(bad), InputError);
  }
}
