#include "wireup/nodelist.hpp"

#include <cctype>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup {
namespace {

struct Range {
  std::uint64_t lo, hi;
  std::size_t width;
};

[[noreturn]] void fail(std::string_view list, const std::string& why) {
  throw InputError("node list " + quoted(list) + ": " + why +
                   " (expected e.g. n[1-3,7],gpu-[01-02])");
}

bool host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

std::vector<Range> parse_ranges(std::string_view list, std::string_view body) {
  std::vector<Range> out;
  for (const auto& part : split(body, ',')) {
    const auto dash = part.find('-');
    const std::string lo_s = part.substr(0, dash);
    const std::string hi_s = dash == std::string::npos ? lo_s : part.substr(dash + 1);
    const auto lo = parse_uint(lo_s, 999999999);
    const auto hi = parse_uint(hi_s, 999999999);
    if (!lo || !hi) fail(list, "bad range " + quoted(part) + " inside brackets");
    if (*lo > *hi) fail(list, "range " + quoted(part) + " runs backwards");
    out.push_back({*lo, *hi, lo_s.size()});
  }
  return out;
}

std::string pad(std::uint64_t v, std::size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// Appends the hosts of one comma-free item; returns false once `cap` is hit.
bool expand_item(std::string_view list, const std::string& prefix, std::string_view rest,
                 std::vector<std::string>& out, std::size_t cap) {
  const auto open = rest.find('[');
  if (open == std::string_view::npos) {
    if (out.size() >= cap) return false;
    out.push_back(prefix + std::string(rest));
    return true;
  }
  const auto close = rest.find(']', open);
  if (close == std::string_view::npos) fail(list, "unclosed '['");
  const auto body = rest.substr(open + 1, close - open - 1);
  if (body.find('[') != std::string_view::npos) fail(list, "nested '['");
  const std::string head = prefix + std::string(rest.substr(0, open));
  for (const Range& r : parse_ranges(list, body)) {
    for (std::uint64_t v = r.lo; v <= r.hi; ++v) {
      if (!expand_item(list, head + pad(v, r.width), rest.substr(close + 1), out, cap))
        return false;
    }
  }
  return true;
}

std::vector<std::string> split_items(std::string_view list) {
  std::vector<std::string> items;
  int depth = 0;
  std::string cur;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0 || depth > 1) fail(list, "unbalanced brackets");
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else if (c == '[' || c == ']' || c == ',' || c == '-' || host_char(c)) {
      cur += c;
    } else {
      fail(list, "character " + quoted(std::string_view(&c, 1)) + " is not allowed");
    }
  }
  if (depth != 0) fail(list, "unclosed '['");
  items.push_back(cur);
  for (const auto& item : items) {
    if (item.empty()) fail(list, "empty host name");
    if (item.front() == '[') fail(list, "host name starts with '['");
  }
  return items;
}

}  // namespace

std::vector<std::string> expand_nodelist(std::string_view list, std::size_t max_hosts) {
  if (trim(list).empty()) fail(list, "empty list");
  std::vector<std::string> out;
  for (const auto& item : split_items(list)) {
    if (!expand_item(list, "", item, out, max_hosts))
      fail(list, "more than " + std::to_string(max_hosts) + " hosts");
  }
  return out;
}

std::string first_node(std::string_view list) {
  if (trim(list).empty()) fail(list, "empty list");
  std::vector<std::string> out;
  expand_item(list, "", split_items(list).front(), out, 1);
  return out.front();
}

}  // namespace wireup

namespace wireup {

std::vector<std::uint32_t> expand_tasks_per_node(std::string_view spec) {
  auto bad = [&](const std::string& why) -> std::vector<std::uint32_t> {
    throw InputError("tasks per node " + quoted(spec) + ": " + why +
                     " (expected e.g. 2(x3),1)");
  };
  std::vector<std::uint32_t> out;
  if (trim(spec).empty()) return bad("empty");
  for (const auto& item : split(spec, ',')) {
    const auto paren = item.find('(');
    const auto count = parse_uint(item.substr(0, paren), 1u << 20);
    if (!count) return bad("bad count " + quoted(item));
    std::uint64_t repeat = 1;
    if (paren != std::string::npos) {
      if (item.size() < paren + 4 || item.compare(paren, 2, "(x") != 0 || item.back() != ')')
        return bad("bad repeat " + quoted(item));
      const auto r = parse_uint(item.substr(paren + 2, item.size() - paren - 3), 1u << 20);
      if (!r || *r == 0) return bad("bad repeat " + quoted(item));
      repeat = *r;
    }
    if (out.size() + repeat > (1u << 20)) return bad("too many nodes");
    out.insert(out.end(), repeat, static_cast<std::uint32_t>(*count));
  }
  return out;
}

}  // namespace wireup
