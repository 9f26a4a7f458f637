#pragma once
// A worker's output on its way to the console and its log files, line by line.
#include <cstddef>
#include <memory>
#include <string>

#include "wireup/launch_output.hpp"
#include "wireup/launch_report.hpp"

namespace wireup {

// Writes all of s to fd; gives up quietly on a closed fd (a closed console
// must not stop supervision).
void write_fd(int fd, const std::string& s);
// "wireup-launch: LINE" on stderr.
void say(const std::string& line);

// One worker's output stream: where it goes and what is kept for the summary.
struct Stream {
  int pipe = -1;
  int file = -1;
  int console = -1;  // 1, 2, or -1 when not shown
  std::unique_ptr<LinePrefixer> prefix;
  LineTail tail{20};

  void pump(const char* data, std::size_t n);
  // Reads what is there; false at EOF.
  bool read_some();
  // Drains the pipe (what the worker wrote before exiting) and closes it all.
  void close_all();
};

}  // namespace wireup
