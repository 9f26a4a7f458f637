#include "wireup/shell_export.hpp"

namespace wireup {

std::string shell_quote(std::string_view value) {
  std::string out = "'";
  for (const char c : value) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  out += '\'';
  return out;
}

std::string export_lines(const TaskPlan& plan) {
  std::string out;
  for (const auto& d : plan.decisions)
    if (d.action == Action::Set) out += "export " + d.name + "=" + shell_quote(d.value) + "\n";
  return out;
}

}  // namespace wireup
