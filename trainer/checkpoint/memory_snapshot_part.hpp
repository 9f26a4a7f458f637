#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

}  // namespace wireup::train
