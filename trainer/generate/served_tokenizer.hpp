#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// A tokenizer served by a child process, `wireup-prep serve-tokenizer FILE`
// (data/serve/): what generate uses for a SentencePiece model, which it
// cannot load itself (Debian's libsentencepiece bundles a protobuf runtime
// that clashes with LibTorch's in one process). One request at a time, over
// a socket pair; the child ends when this object does.
namespace wireup::train::generate {

class ServedTokenizer {
 public:
  // Starts `prep` serving `path` and asks its vocabulary and BOS/EOS ids.
  // InputError naming `what` (the flag and the file) when the child cannot
  // start or load the file (its own message is on stderr).
  ServedTokenizer(const std::string& prep, const std::string& path, const std::string& what);
  ~ServedTokenizer();
  ServedTokenizer(const ServedTokenizer&) = delete;
  ServedTokenizer& operator=(const ServedTokenizer&) = delete;

  std::vector<int> encode(const std::string& text) const;
  // std::runtime_error naming the child's reason for ids it does not know.
  std::string decode(const std::vector<int>& ids) const;
  std::uint32_t vocab_size() const { return vocab_; }
  int bos_id() const { return bos_; }
  int eos_id() const { return eos_; }
  int special_id(std::string_view text) const;

 private:
  std::string ask(char op, const std::string& payload) const;

  std::string what_;
  int fd_ = -1;
  pid_t pid_ = -1;
  std::uint32_t vocab_ = 0;
  int bos_ = -1, eos_ = -1;
};

// The wireup-prep to run: $WIREUP_PREP, else the one beside this executable,
// else the first on PATH.
std::string find_wireup_prep();

}  // namespace wireup::train::generate
