#include "checkpoint/checkpoint_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>

#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

namespace fs = std::filesystem;

namespace wireup::train {

std::string read_text(const fs::path& p, std::uint64_t max_bytes) {
  if (::access(p.c_str(), R_OK) != 0) io::throw_errno(p, "cannot read");
  return io::read_text(p, max_bytes);
}

bool path_exists(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw InputError(io::shown(p) + ": cannot read: " + ec.message());
  return fs::exists(st);
}

bool directory_exists(const fs::path& p) {
  std::error_code ec;
  return path_exists(p) && fs::is_directory(p, ec);
}

// ------------------------------------------------------------ ChunkWriter

ChunkWriter::ChunkWriter(fs::path path)
    : path_(std::move(path)),
      tmp_(path_.string() + ".tmp"),
      fd_(io::open_file(tmp_, O_WRONLY | O_CREAT | O_TRUNC)) {}

std::pair<std::uint64_t, std::string> ChunkWriter::append(const float* data, std::int64_t numel) {
  const auto bytes = static_cast<std::size_t>(numel) * sizeof(float);
  // Hash on a second thread while this one writes: neither waits for the other.
  auto digest = std::async(std::launch::async, [data, bytes] {
    Sha256 h;
    h.update(data, bytes);
    return h.hex_digest();
  });
  try {
    io::write_all(fd_.get(), data, bytes, tmp_);
  } catch (...) {
    digest.wait();
    throw;
  }
  const std::uint64_t offset = bytes_;
  bytes_ += bytes;
  return {offset, digest.get()};
}

ChunkWriter::~ChunkWriter() {
  if (!committed_) ::unlink(tmp_.c_str());
}

std::uint64_t ChunkWriter::commit() {
  io::fsync_fd(fd_.get(), tmp_);
  fd_ = io::Fd();
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) io::throw_errno(path_, "rename");
  committed_ = true;
  return bytes_;
}

// ------------------------------------------------------------ ChunkReader

ChunkReader::ChunkReader(fs::path step_dir, const CheckpointMeta& meta)
    : dir_(std::move(step_dir)), meta_(meta), fds_(meta.files.size()) {}

int ChunkReader::file(std::size_t i) {
  if (fds_[i]) return fds_[i].get();
  const RankFile& rf = meta_.files[i];
  const fs::path bin = dir_ / rf.file;
  // A regular file (a FIFO is refused, never waited on) of the recorded size.
  io::RegularFile f = io::open_regular(bin, UINT64_MAX);
  if (f.size != rf.bytes)
    throw InputError(io::shown(bin) + ": " + std::to_string(f.size) + " bytes, expected " +
                     std::to_string(rf.bytes) + " (truncated or replaced)");
  fds_[i] = std::move(f.fd);
  return fds_[i].get();
}

// Chunk ci of file fi's size in bytes, checked to lie inside the file.
std::uint64_t ChunkReader::chunk_bytes(std::size_t fi, std::size_t ci) const {
  const RankFile& rf = meta_.files[fi];
  const ChunkRef& c = rf.chunks[ci];
  const auto bytes = static_cast<std::uint64_t>(c.numel) * sizeof(float);
  if (c.file_offset > rf.bytes || bytes > rf.bytes - c.file_offset)
    throw InputError(io::shown(dir_ / rf.file) + ": chunk of " + meta_.units.at(c.unit).name + " " +
                     c.kind + " lies past the file's end (" + std::to_string(rf.bytes) + " bytes)");
  return bytes;
}

void ChunkReader::check_digest(std::size_t fi, std::size_t ci, const std::string& hex) {
  const RankFile& rf = meta_.files[fi];
  const ChunkRef& c = rf.chunks[ci];
  if (hex != c.sha256)
    throw InputError(io::shown(dir_ / rf.file) + ": checksum mismatch in " +
                     meta_.units.at(c.unit).name + " " + c.kind + " (corrupted)");
  checked_[{fi, ci}] = true;
}

void ChunkReader::read_chunk(std::size_t fi, std::size_t ci, float* into) {
  const int fd = file(fi);
  const auto bytes = chunk_bytes(fi, ci);
  const RankFile& rf = meta_.files[fi];
  io::pread_all(fd, into, bytes, rf.chunks[ci].file_offset, dir_ / rf.file);
  if (checked_[{fi, ci}]) return;
  Sha256 h;
  h.update(into, bytes);
  check_digest(fi, ci, h.hex_digest());
}

const std::vector<float>& ChunkReader::chunk(std::size_t fi, std::size_t ci) {
  buf_.resize(static_cast<std::size_t>(meta_.files[fi].chunks[ci].numel));
  read_chunk(fi, ci, buf_.data());
  return buf_;
}

// Reads and hashes a chunk in pieces of at most 16 MiB: verification holds
// no chunk whole.
void ChunkReader::verify_chunk(std::size_t fi, std::size_t ci) {
  const int fd = file(fi);
  const auto bytes = chunk_bytes(fi, ci);
  const RankFile& rf = meta_.files[fi];
  constexpr std::uint64_t kPiece = std::uint64_t{16} << 20;
  std::vector<unsigned char> piece(static_cast<std::size_t>(std::min(bytes, kPiece)));
  Sha256 h;
  for (std::uint64_t done = 0; done < bytes;) {
    const auto n = std::min(kPiece, bytes - done);
    io::pread_all(fd, piece.data(), n, rf.chunks[ci].file_offset + done, dir_ / rf.file);
    h.update(piece.data(), n);
    done += n;
  }
  check_digest(fi, ci, h.hex_digest());
}

void ChunkReader::read(int unit, const std::string& kind, std::int64_t begin, std::int64_t count,
                       float* out) {
  for (const auto& piece : plan_reads(meta_, unit, kind, begin, count)) {
    // A whole chunk goes straight into place (a load at the world that saved).
    if (piece.chunk_skip == 0 && piece.count == meta_.files[piece.file].chunks[piece.chunk].numel) {
      read_chunk(piece.file, piece.chunk, out + piece.dest);
      continue;
    }
    const auto& data = chunk(piece.file, piece.chunk);
    std::memcpy(out + piece.dest, data.data() + piece.chunk_skip,
                static_cast<std::size_t>(piece.count) * sizeof(float));
  }
}

void ChunkReader::open_all() {
  for (std::size_t f = 0; f < meta_.files.size(); ++f) file(f);
}

void ChunkReader::verify_all() {
  for (std::size_t f = 0; f < meta_.files.size(); ++f)
    for (std::size_t c = 0; c < meta_.files[f].chunks.size(); ++c) verify_chunk(f, c);
}

// ------------------------------------------------------------ directories

bool is_step_dir_name(const std::string& name) {
  if (name.size() <= 5 || name.rfind("step-", 0) != 0) return false;
  return std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string verify_checkpoint(const fs::path& step_dir) {
  try {
    const fs::path meta_path = step_dir / "metadata.json";
    const CheckpointMeta meta =
        checkpoint_meta_from_json(read_text(meta_path), io::shown(meta_path));
    for (std::size_t u = 0; u < meta.units.size(); ++u)
      for (const std::string& kind : meta.unit_tensors)
        plan_reads(meta, static_cast<int>(u), kind, 0, meta.units[u].numel);
    ChunkReader reader(step_dir, meta);
    reader.verify_all();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::vector<fs::path> complete_checkpoints(const fs::path& dir) {
  std::vector<std::pair<std::string, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    std::error_code missing;
    if (is_step_dir_name(name) && fs::exists(it->path() / "metadata.json", missing))
      found.emplace_back(name, it->path());
  }
  std::sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

fs::path move_aside(const fs::path& step_dir) {
  fs::path to = step_dir.string() + ".corrupt";
  std::error_code ec;
  for (int i = 2; fs::exists(to, ec); ++i) to = step_dir.string() + ".corrupt-" + std::to_string(i);
  if (std::rename(step_dir.c_str(), to.c_str()) != 0)
    io::throw_errno(step_dir, "rename to " + io::shown(to));
  io::fsync_path(step_dir.parent_path());
  return to;
}

}  // namespace wireup::train
