#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_format.hpp"
#include "wireup/file_io.hpp"

// The files of a checkpoint, in plain C++ (no Torch): the rank files' chunks written and read back
// with their SHA-256, verification of a whole step directory, and the listing of a checkpoint
// directory. The Checkpointer and the Hugging Face export both read through ChunkReader.
namespace wireup::train {

// A checkpoint's or config's text file, whole (wireup::io::read_text: a
// regular file, never waited on, at most max_bytes); "PATH: cannot read:
// <strerror>" when it cannot be read.
std::string read_text(const std::filesystem::path& p, std::uint64_t max_bytes = kMaxMetadataBytes);

// Whether `p` exists: false when it does not; InputError "PATH: cannot read:
// WHY" when that cannot be told (a symlink loop, a directory without search
// permission), never a raw filesystem_error.
bool path_exists(const std::filesystem::path& p);
// Whether `p` is a directory (symlinks followed); errors as path_exists.
bool directory_exists(const std::filesystem::path& p);

// Writes one rank file: fp32 chunks one after another, each hashed (on a
// second thread) while it is written. The file appears under its name only
// after commit() made it durable; until then it is PATH.tmp.
class ChunkWriter {
 public:
  explicit ChunkWriter(std::filesystem::path path);
  // A writer that was not committed (a full disk, an error) removes its .tmp.
  ~ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;
  // Appends `numel` floats; returns their file offset (bytes) and SHA-256.
  std::pair<std::uint64_t, std::string> append(const float* data, std::int64_t numel);
  // fsync and rename into place; the file's size in bytes.
  std::uint64_t commit();

 private:
  std::filesystem::path path_, tmp_;
  io::Fd fd_;
  std::uint64_t bytes_ = 0;
  bool committed_ = false;
};

// Reads units' slices out of a step directory's rank files. Before a file is
// used: its size must be the recorded one. Before a chunk is used: it must lie
// inside its file, and its SHA-256 must match (each chunk is checked once,
// whole: a checksum covers nothing less). reads retry on EINTR. Every failure
// is an InputError naming the file and what is wrong.
class ChunkReader {
 public:
  ChunkReader(std::filesystem::path step_dir, const CheckpointMeta& meta);
  // Elements [begin, begin+count) of `kind` of `unit` into out[0, count);
  // elements at or past the unit's numel (padding) are left as they are.
  void read(int unit, const std::string& kind, std::int64_t begin, std::int64_t count, float* out);
  // Opens every rank file and checks its size against the recorded one, so a
  // caller can size buffers by the metadata only once the files bear it out.
  void open_all();
  // Reads and checks every chunk of every rank file.
  void verify_all();

 private:
  int file(std::size_t i);
  std::uint64_t chunk_bytes(std::size_t file, std::size_t chunk) const;
  void check_digest(std::size_t file, std::size_t chunk, const std::string& hex);
  void read_chunk(std::size_t file, std::size_t chunk, float* into);
  const std::vector<float>& chunk(std::size_t file, std::size_t chunk);
  void verify_chunk(std::size_t file, std::size_t chunk);

  std::filesystem::path dir_;
  const CheckpointMeta& meta_;
  std::vector<io::Fd> fds_;
  std::map<std::pair<std::size_t, std::size_t>, bool> checked_;
  std::vector<float> buf_;
};

// What is wrong with a committed step directory ("" when nothing): its
// metadata.json parses, every rank file has its recorded size, every
// parameter and moment element is covered by a chunk, every chunk's SHA-256
// matches. Reads the whole checkpoint.
std::string verify_checkpoint(const std::filesystem::path& step_dir);

// "step-" and digits only: a step directory (not one moved aside).
bool is_step_dir_name(const std::string& name);

// The committed checkpoints under dir (step-NNNNNNNN with a metadata.json),
// newest first. Directories moved aside (step-N.corrupt) are not among them,
// nor entries whose metadata.json cannot be reached (a symlink loop).
std::vector<std::filesystem::path> complete_checkpoints(const std::filesystem::path& dir);

// Renames step_dir to step_dir.corrupt (or .corrupt-2, ...) so that it is never
// loaded or counted again and stays for inspection; returns the new path.
std::filesystem::path move_aside(const std::filesystem::path& step_dir);

}  // namespace wireup::train
