// Catch2 v2's single header, made of Catch2 v3's headers: the tests are written against
// v2 (<catch2/catch.hpp>, Catch::Contains, StartsWith, EndsWith and Equals, unqualified
// Approx, CATCH_CONFIG_MAIN) and build unchanged against v3, where tests/CMakeLists.txt
// puts this folder first on the include path of Catch2::Catch2.
#pragma once

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <string>

namespace Catch {
// v2: Catch::Contains(str) is the substring matcher (v3: Matchers::ContainsSubstring).
inline Matchers::StringContainsMatcher Contains(const std::string& s,
                                                CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(s, cs);
}
// v2: Catch::StartsWith(str) (v3: Matchers::StartsWith).
inline Matchers::StartsWithMatcher StartsWith(const std::string& s,
                                              CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::StartsWith(s, cs);
}
// v2: Catch::EndsWith(str) (v3: Matchers::EndsWith).
inline Matchers::EndsWithMatcher EndsWith(const std::string& s,
                                          CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::EndsWith(s, cs);
}
// v2: Catch::Equals(str) (v3: Matchers::Equals).
inline Matchers::StringEqualsMatcher Equals(const std::string& s,
                                            CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::Equals(s, cs);
}
namespace Matchers {
// v2's Catch::Matchers::Contains(str); v3's template Contains(element) is a range
// matcher, and these non-template overloads win for string arguments.
inline StringContainsMatcher Contains(const std::string& s, CaseSensitive cs = CaseSensitive::Yes) {
  return ContainsSubstring(s, cs);
}
inline StringContainsMatcher Contains(const char* s, CaseSensitive cs = CaseSensitive::Yes) {
  return ContainsSubstring(s, cs);
}
}  // namespace Matchers
}  // namespace Catch

using Catch::Approx;

// v2: the translation unit that defines CATCH_CONFIG_MAIN provides main().
#ifdef CATCH_CONFIG_MAIN
#include <catch2/catch_session.hpp>
int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
#endif
