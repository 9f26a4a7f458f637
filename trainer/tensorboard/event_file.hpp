#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tensorboard/event_records.hpp"
#include "wireup/file_io.hpp"

// One run's TensorBoard event file: events.out.tfevents.<seconds>.<host>.<pid>
// in the run's directory, opened once, each step's record appended with one
// write(2).
namespace wireup::train::tensorboard {

// "events.out.tfevents.<unix_seconds>.<host>.<pid>": the name TensorBoard
// looks for ("tfevents" in it) and sorts by.
std::string event_file_name(std::int64_t unix_seconds, std::string_view host, long pid);

// The seconds a new file is named with: `now`, or one more than the newest
// event file among `existing` names when that is not older, so the new file
// sorts after every earlier one (TensorBoard reads a directory's files in name
// order, and a restart's START must come after what it replaces).
std::int64_t new_file_seconds(std::int64_t now, const std::vector<std::string>& existing);

// Seconds since the epoch, with the fraction: an event's wall_time.
double wall_time_now();

// Makes `dir` (and its parents) and checks that a file can be created in it
// (one is, then removed), so a run can refuse a bad directory before its first
// step. InputError naming the directory and the reason.
void check_event_dir(const std::filesystem::path& dir);

class EventFileWriter {
 public:
  // Makes `dir` (and its parents), creates a new event file there and writes
  // its first records: the file version, then SessionLog START at
  // `first_step`, the first step this run logs (see session_start_event).
  // InputError naming the directory or file when either cannot be made.
  EventFileWriter(const std::filesystem::path& dir, std::int64_t first_step);

  // One Event with every value, appended with one write(2): once this returns
  // the record is in the file, and a crash of the process loses nothing of it.
  void write_scalars(std::int64_t step, const std::vector<Scalar>& values);

  const std::filesystem::path& path() const { return path_; }

 private:
  void append(std::string_view records);

  std::filesystem::path path_;
  io::Fd fd_;
};

}  // namespace wireup::train::tensorboard
