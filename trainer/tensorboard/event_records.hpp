#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// TensorBoard's event files, encoded by hand: TFRecord framing around `Event`
// protobufs (tensorboard/compat/proto/event.proto and summary.proto), only
// the fields wireup-train writes:
//   Event      { double wall_time = 1; int64 step = 2; oneof what {
//                string file_version = 3; Summary summary = 5; SessionLog session_log = 7; } }
//   Summary    { repeated Value value = 1; }
//   Value      { string tag = 1; oneof value { float simple_value = 2; } }
//   SessionLog { SessionStatus status = 1; }  with START = 1
// Fields are written in field-number order and proto3 defaults (a zero
// wall_time or step) are left out, so the bytes are what protobuf's own
// serializer makes of the same message.
namespace wireup::train::tensorboard {

// The version every event file starts with; TensorBoard's restart handling
// (SessionLog START, below) applies to version 2 files.
inline constexpr std::string_view kFileVersion = "brain.Event:2";

struct Scalar {
  std::string tag;
  double value = 0;  // stored as a float (simple_value)
};

// Event{wall_time, file_version = "brain.Event:2"}: a file's first record.
std::string file_version_event(double wall_time);
// Event{wall_time, step, session_log{status: START}}: a run starts at `step`.
// TensorBoard treats every START after the first one it reads as a restart
// and drops the events with step >= `step` that it read before it.
std::string session_start_event(double wall_time, std::int64_t step);
// Event{wall_time, step, summary{value: [{tag, simple_value}...]}}.
std::string scalars_event(double wall_time, std::int64_t step, const std::vector<Scalar>& values);

// One TFRecord: uint64 length (little-endian), masked CRC-32C of those 8
// bytes, the data, masked CRC-32C of the data.
std::string tfrecord(std::string_view data);
// TFRecord's mask of a CRC-32C (wireup/crc32c.hpp), so that the CRC of data
// that itself holds CRCs does not collide with them:
// ((crc >> 15) | (crc << 17)) + 0xa282ead8, in 32 bits.
std::uint32_t mask_crc(std::uint32_t crc);
std::uint32_t masked_crc32c(std::string_view data);

}  // namespace wireup::train::tensorboard
