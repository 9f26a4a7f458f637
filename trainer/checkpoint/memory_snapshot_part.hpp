#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/memory_snapshot_manifest.hpp"

// One rank's part of a memory snapshot (rank-NNNNN.bin, and the replica a
// rank of the next node holds of it): a text header, then the tensors.
// Plain C++: the trainer fills and reads the tensor bytes.
//
//   wireup-memory-part 2
//   step 40
//   optimizer_steps 40
//   world_size 4
//   rank 2
//   data_position 37            the loader's position: 37 bytes, then a newline
//   <37 bytes>
//   tensors 3 param exp_avg exp_avg_sq  a unit's state (TrainingState::tensor_names)
//   units 3
//   unit embed offset 0 numel 1024     this rank's slice of each unit
//   ...
//   end
//   <per unit, per tensor in that order: numel float32 values (little-endian)>
namespace wireup::train {

struct PartUnit {
  std::string name;  // no space, no newline
  std::int64_t offset = 0, numel = 0;
};

struct PartHeader {
  std::int64_t step = 0, optimizer_steps = 0;
  int world_size = 1, rank = 0;
  std::string data_position;
  std::vector<std::string> tensors;  // checkpoint_format.hpp's unit_tensors rules
  std::vector<PartUnit> units;
  // Bytes of the tensors after the header: tensors x 4 x the units' numel.
  std::uint64_t tensor_bytes() const;
};

// The header's text (ends with "end\n"); the tensors follow it directly.
std::string to_text(const PartHeader& h);
// Reads the header at the start of `bytes` (a part as written): nullopt with
// `why` set ("line 3: expected optimizer_steps N", "612 bytes, the header
// says 1060") when it is not a part, or its size is not header + tensors.
// `header_bytes` is where the tensors start.
std::optional<PartHeader> parse_part_header(const char* bytes, std::uint64_t size,
                                            std::uint64_t& header_bytes, std::string& why);
// "" when `saved` is a part of this rank's layout (same world size, rank,
// tensors and units), else what differs ("unit layers.3: offset 512 numel 256, this run
// offset 0 numel 512").
std::string part_layout_mismatch(const PartHeader& saved, const PartHeader& mine);

// What a resume loads is what the manifest recorded (docs/reliability.md):
// "" when `size` bytes at `bytes` have the size and crc32c_quarters_hex that
// `expected` records, else why not ("fails its checksum: crc32c H, the
// manifest says H'", "N bytes, the manifest says M").
std::string part_bytes_problem(const char* bytes, std::uint64_t size, const SnapshotPart& expected);
// The part (or replica) file `path` as the manifest records it: its bytes,
// read without following a symlink and never more than expected.bytes; ""
// with `why` naming the path and the fault when it is missing, or has changed
// since the resume's scan checked it.
std::string read_checked_part(const std::filesystem::path& path, const SnapshotPart& expected,
                              std::string& why);
// "" when a replica's size a peer announces is the manifest's, else why not
// (a negative or other size): checked before anything is allocated for it.
std::string replica_size_problem(std::int64_t size, const SnapshotPart& expected);

}  // namespace wireup::train
