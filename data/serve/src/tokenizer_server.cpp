#include "wireup/serve/tokenizer_server.hpp"

#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <stdexcept>

#include "wireup/serve/tokenizer_wire.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

namespace wireup::serve {
namespace {

// Reads exactly n bytes; false at the end of the input before the first byte.
bool read_exact(int fd, char* p, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (got == 0) return false;
      throw std::runtime_error("request cut short");
    }
    got += static_cast<std::size_t>(r);
  }
  return true;
}

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw std::runtime_error("cannot write the answer");
    done += static_cast<std::size_t>(w);
  }
}

std::string answer(const tokenizer::Tokenizer& tok, const Frame& req) {
  switch (req.tag) {
    case 'I':
      return ids_payload({static_cast<int>(tok.vocab_size()), tok.bos_id(), tok.eos_id()});
    case 'E': {
      std::vector<int> ids;
      tok.encode(req.payload, ids);
      return ids_payload(ids);
    }
    case 'D':
      return tok.decode(ids_from_payload(req.payload));
    case 'S':
      return ids_payload({tok.special_id(req.payload)});
    default:
      throw std::invalid_argument(std::string("unknown request '") + req.tag + "'");
  }
}

}  // namespace

int serve_tokenizer(const std::string& tokenizer_path, int in_fd, int out_fd) {
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(tokenizer_path);
  char header[kHeaderBytes];
  try {
    while (read_exact(in_fd, header, kHeaderBytes)) {
      const auto n = payload_length(header);
      if (!n) throw std::runtime_error("a request over the size limit");
      Frame req{header[0], std::string(*n, '\0')};
      if (*n > 0 && !read_exact(in_fd, req.payload.data(), *n))
        throw std::runtime_error("request cut short");
      std::string reply;
      try {
        reply = frame('O', answer(tok, req));
      } catch (const std::exception& e) {  // a bad request: named, and the next one served
        reply = frame('X', e.what());
      }
      write_all(out_fd, reply);
    }
  } catch (const std::exception& e) {
    std::cerr << "wireup-prep serve-tokenizer: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace wireup::serve
