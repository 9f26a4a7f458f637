#include <catch2/catch.hpp>

#include "wireup/shell_export.hpp"

using namespace wireup;

TEST_CASE("shell_quote single-quotes everything and escapes only the single quote") {
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("plain") == "'plain'");
  CHECK(shell_quote("RANK LOCAL_RANK") == "'RANK LOCAL_RANK'");
  CHECK(shell_quote("$(touch x) `id` $HOME \\") == "'$(touch x) `id` $HOME \\'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("''") == "''\\'''\\'''");
  CHECK(shell_quote("a\nb") == "'a\nb'");
}

TEST_CASE("export_lines prints only the variables the plan sets") {
  TaskPlan plan;
  plan.decisions = {{"RANK", "0", "global task id", Action::Set},
                    {"MASTER_PORT", "5", "already set", Action::KeptUser},
                    {"FOO", "a b'c", "plugstack.conf setenv", Action::Set},
                    {"WIREUP_INJECTED", "RANK FOO", "names wireup set", Action::Set}};
  CHECK(export_lines(plan) ==
        "export RANK='0'\n"
        "export FOO='a b'\\''c'\n"
        "export WIREUP_INJECTED='RANK FOO'\n");
}
