#include "tensorboard/event_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <system_error>

#include "wireup/error.hpp"

namespace wireup::train::tensorboard {
namespace {

constexpr std::string_view kPrefix = "events.out.tfevents.";

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    names.push_back(entry.path().filename().string());
  if (ec) throw InputError(dir.string() + ": cannot list the directory: " + ec.message());
  return names;
}

void make_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir.string() + ": cannot create the directory: " + ec.message());
  if (!std::filesystem::is_directory(dir, ec)) throw InputError(dir.string() + ": not a directory");
}

}  // namespace

std::string event_file_name(std::int64_t unix_seconds, std::string_view host, long pid) {
  return std::string(kPrefix) + std::to_string(unix_seconds) + "." + std::string(host) + "." +
         std::to_string(pid);
}

std::int64_t new_file_seconds(std::int64_t now, const std::vector<std::string>& existing) {
  std::int64_t seconds = now;
  for (const std::string& name : existing) {
    if (name.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    const char* first = name.data() + kPrefix.size();
    const char* last = name.data() + name.size();
    std::int64_t theirs = 0;
    auto [end, err] = std::from_chars(first, last, theirs);
    if (err == std::errc() && end != first && theirs >= seconds) seconds = theirs + 1;
  }
  return seconds;
}

double wall_time_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

void check_event_dir(const std::filesystem::path& dir) {
  make_dir(dir);
  const auto probe = dir / (".wireup-tensorboard-probe." + std::to_string(getpid()));
  io::open_file(probe, O_WRONLY | O_CREAT | O_TRUNC);  // closed at once
  std::error_code ignored;
  std::filesystem::remove(probe, ignored);
}

EventFileWriter::EventFileWriter(const std::filesystem::path& dir, std::int64_t first_step) {
  make_dir(dir);
  const double now = wall_time_now();
  std::int64_t seconds = new_file_seconds(static_cast<std::int64_t>(now), names_in(dir));
  const std::string host = host_name();
  // O_EXCL: never append to another writer's file; a name taken since the
  // listing (another run starting in the same second) moves to the next second.
  for (int attempt = 0;; ++attempt, ++seconds) {
    path_ = dir / event_file_name(seconds, host, static_cast<long>(getpid()));
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      fd_ = io::Fd(fd);
      break;
    }
    if (errno != EEXIST || attempt == 100) io::throw_errno(path_, "cannot create the event file");
  }
  append(tfrecord(file_version_event(now)) + tfrecord(session_start_event(now, first_step)));
}

void EventFileWriter::write_scalars(std::int64_t step, const std::vector<Scalar>& values) {
  append(tfrecord(scalars_event(wall_time_now(), step, values)));
}

void EventFileWriter::append(std::string_view records) {
  io::write_all(fd_.get(), records.data(), records.size(), path_);
}

}  // namespace wireup::train::tensorboard
