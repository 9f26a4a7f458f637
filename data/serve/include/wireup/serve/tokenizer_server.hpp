#pragma once
#include <string>

// `wireup-prep serve-tokenizer TOKENIZER`: answers tokenizer_wire.hpp's
// requests read from `in_fd` on `out_fd` until `in_fd` ends (exit status 0),
// with the tokenizer file TOKENIZER (any kind wireup-prep reads). A bad
// request (an unknown op, ids outside the vocabulary) gets an 'X' frame
// naming it and the server goes on; a frame over the size limit or cut short
// ends it (exit 2).
namespace wireup::serve {

int serve_tokenizer(const std::string& tokenizer_path, int in_fd, int out_fd);

}  // namespace wireup::serve
