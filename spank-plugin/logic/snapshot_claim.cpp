#include "wireup/snapshot_claim.hpp"

#include <cstdio>

namespace wireup {
namespace {

constexpr std::string_view kWorkPrefix = ".wireup-prolog-";
constexpr std::size_t kRandomDigits = 16;

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

std::string squat_reason(const FoundEntry& e, std::uint32_t job_uid) {
  if (e.kind == FoundEntry::Kind::Symlink) return "a symlink, never followed";
  if (e.kind != FoundEntry::Kind::Directory) return "a file or other non-directory";
  if (e.uid != job_uid)
    return "a directory of uid " + std::to_string(e.uid) + ", not the job's user (uid " +
           std::to_string(job_uid) + ")";
  if (e.mode != 0700) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", e.mode & 07777u);
    return std::string("mode ") + mode + ", not 0700";
  }
  return e.marker_problem;
}

std::string prolog_work_dir_name(std::string_view job, std::uint64_t random) {
  char hex[kRandomDigits + 1];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(random));
  return std::string(kWorkPrefix) + std::string(job) + "-" + hex;
}

bool is_prolog_work_dir_name(std::string_view name, std::string_view job) {
  const std::size_t head = kWorkPrefix.size() + job.size() + 1;
  if (job.empty() || name.size() != head + kRandomDigits) return false;
  if (name.substr(0, kWorkPrefix.size()) != kWorkPrefix) return false;
  if (name.substr(kWorkPrefix.size(), job.size()) != job || name[head - 1] != '-') return false;
  for (const char c : name.substr(head))
    if (!is_lower_hex(c)) return false;
  return true;
}

std::string moved_entry_name(int n) { return "moved-" + std::to_string(n); }

}  // namespace wireup
