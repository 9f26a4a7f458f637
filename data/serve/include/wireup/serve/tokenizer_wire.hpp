#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// The frames of a tokenizer served through a pipe (`wireup-prep
// serve-tokenizer`, for a process that cannot load the tokenizer itself:
// wireup-train generate with a SentencePiece model, whose protobuf runtime
// clashes with LibTorch's). Plain data, no I/O: both ends build and parse
// frames with these.
//
//   request   op (1 byte) | payload length (u32 LE) | payload
//   response  'O' or 'X'  | payload length (u32 LE) | payload ('X': an error message)
//
//   op 'I'  no payload        -> vocab_size, bos_id, eos_id (i32 LE each; -1: none)
//   op 'E'  text (bytes)      -> ids (i32 LE each)
//   op 'D'  ids (i32 LE each) -> text (bytes)
//   op 'S'  a token's text    -> its id (i32 LE; -1: none)
namespace wireup::serve {

// A frame's payload may not exceed this (a prompt, a completion's ids).
constexpr std::uint32_t kMaxPayload = 64u << 20;
constexpr std::size_t kHeaderBytes = 5;

struct Frame {
  char tag = 0;  // the op of a request, 'O' or 'X' of a response
  std::string payload;
};

std::string frame(char tag, const std::string& payload);
// The payload length a 5-byte header announces; std::nullopt when it is
// over kMaxPayload (the stream is then unusable).
std::optional<std::uint32_t> payload_length(const char* header);

std::string ids_payload(const std::vector<int>& ids);
// std::invalid_argument when the length is not a multiple of 4.
std::vector<int> ids_from_payload(const std::string& payload);

}  // namespace wireup::serve
