// The control lines between launchers: verbs, formatting and the line reader.
#include <catch2/catch.hpp>

#include "wireup/control_message.hpp"

using namespace wireup;

TEST_CASE("control lines: split across reads, numbers, garbage, overlong lines") {
  ControlLineReader r;
  std::vector<ControlMessage> got;
  CHECK(r.feed("FAIL 3 13", got));
  CHECK(got.empty());  // no newline yet
  CHECK(r.feed("7\nDONE 1\n\nSTOP x\n", got));
  REQUIRE(got.size() == 3);
  CHECK(got[0].verb == ControlVerb::Fail);
  CHECK(got[0].args == std::vector<std::uint32_t>{3, 137});
  CHECK(got[1].verb == ControlVerb::Done);
  CHECK(got[1].args == std::vector<std::uint32_t>{1});
  CHECK(got[2].verb == ControlVerb::Stop);
  CHECK(got[2].args == std::vector<std::uint32_t>{0});  // unparsable reads as 0
  CHECK(format_message(ControlVerb::Stop, {2, 3}) == "STOP 2 3\n");
  ControlLineReader flood;
  std::vector<ControlMessage> none;
  CHECK_FALSE(flood.feed(std::string(5000, 'x'), none));
}

TEST_CASE("control verbs: every verb's word reads back as that verb") {
  const ControlVerb all[] = {ControlVerb::Hello,   ControlVerb::Fail, ControlVerb::Done,
                             ControlVerb::Stopped, ControlVerb::Stop, ControlVerb::Start,
                             ControlVerb::Exit,    ControlVerb::Lost};
  for (const ControlVerb v : all) {
    CHECK(parse_verb(verb_word(v)) == v);
    ControlLineReader r;
    std::vector<ControlMessage> got;
    CHECK(r.feed(format_message(v, {7, 8}), got));
    REQUIRE(got.size() == 1);
    CHECK(got[0].verb == v);
    CHECK(got[0].args == std::vector<std::uint32_t>{7, 8});
  }
  CHECK(verb_word(ControlVerb::Hello) == "HELLO");
  CHECK(verb_word(ControlVerb::Stopped) == "STOPPED");
  CHECK(format_message(ControlVerb::Exit) == "EXIT\n");
  CHECK_FALSE(parse_verb("stop"));  // words are upper case
  CHECK_FALSE(parse_verb("STOPP"));
}

TEST_CASE("control lines: a line with an unknown verb is skipped") {
  ControlLineReader r;
  std::vector<ControlMessage> got;
  CHECK(r.feed("HELO 1\nRESTART 2\nHELLO 4\n", got));
  REQUIRE(got.size() == 1);
  CHECK(got[0].verb == ControlVerb::Hello);
  CHECK(got[0].args == std::vector<std::uint32_t>{4});
}
