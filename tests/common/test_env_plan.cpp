#include <catch2/catch.hpp>

#include "env_fixture.hpp"

using namespace wireup;

TEST_CASE("a user's own value is never overwritten") {
  const auto ds = resolve_env({{"MASTER_PORT", "61000", "derived"}, {"RANK", "3", "id"}},
                              lookup({{"MASTER_PORT", "1234"}}));
  REQUIRE(find(ds, "MASTER_PORT"));
  CHECK(find(ds, "MASTER_PORT")->action == Action::KeptUser);
  CHECK(find(ds, "MASTER_PORT")->value == "1234");
  CHECK(find(ds, "RANK")->action == Action::Set);
  CHECK(find(ds, kInjectedVar)->value == "RANK");
}

TEST_CASE("forced values win; later entries replace earlier ones") {
  const auto ds = resolve_env({{"NCCL_DEBUG", "WARN", "admin"},
                               {"NCCL_DEBUG", "INFO", "forced", Mode::Force}},
                              lookup({{"NCCL_DEBUG", "TRACE"}}));
  CHECK(find(ds, "NCCL_DEBUG")->value == "INFO");
  CHECK(find(ds, "NCCL_DEBUG")->action == Action::Set);
  CHECK(ds.size() == 2);  // NCCL_DEBUG + bookkeeping
}

TEST_CASE("values wireup injected in an outer step are not the user's") {
  const auto ds = resolve_env({{"RANK", "5", "id"}, {"MASTER_PORT", "61001", "derived"}},
                              lookup({{"RANK", "0"},
                                      {"MASTER_PORT", "999"},
                                      {kInjectedVar, "RANK WORLD_SIZE"}}));
  CHECK(find(ds, "RANK")->value == "5");
  CHECK(find(ds, "RANK")->action == Action::Set);
  CHECK(find(ds, "MASTER_PORT")->action == Action::KeptUser);
}

TEST_CASE("path lists are prepended once") {
  auto ds = resolve_env({{"LD_LIBRARY_PATH", "/a:/b", "lib", Mode::PrependPath}},
                        lookup({{"LD_LIBRARY_PATH", "/usr/lib:/b"}}));
  CHECK(find(ds, "LD_LIBRARY_PATH")->value == "/a:/usr/lib:/b");
  ds = resolve_env({{"LD_LIBRARY_PATH", "/a", "lib", Mode::PrependPath}},
                   lookup({{"LD_LIBRARY_PATH", "/x:/a"}}));
  CHECK(find(ds, "LD_LIBRARY_PATH")->action == Action::Unchanged);
  CHECK(find(ds, kInjectedVar) == nullptr);
  ds = resolve_env({{"LD_LIBRARY_PATH", "/a", "lib", Mode::PrependPath}}, lookup({}));
  CHECK(find(ds, "LD_LIBRARY_PATH")->value == "/a");
}

TEST_CASE("newlines, NUL and bad names are refused") {
  const auto ds = resolve_env({{"GOOD", "x", ""},
                               {"BAD", "a\nLD_PRELOAD=/evil.so", ""},
                               {"NUL", std::string("a\0b", 3), ""},
                               {"1X", "y", ""},
                               {"A-B", "y", ""},
                               {kInjectedVar, "RANK", ""}},
                              lookup({}));
  CHECK(find(ds, "GOOD")->action == Action::Set);
  for (const char* n : {"BAD", "NUL", "1X", "A-B"}) {
    INFO(n);
    CHECK(find(ds, n)->action == Action::Rejected);
  }
  CHECK(ds.back().name == kInjectedVar);
  CHECK(ds.back().value == "GOOD");
  CHECK(valid_env_name("_A1"));
  CHECK_FALSE(valid_env_name(""));
  CHECK_FALSE(valid_env_value("a\rb"));
}
