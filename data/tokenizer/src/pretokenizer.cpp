#include "wireup/tokenizer/pretokenizer.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <new>
#include <stdexcept>

#include "wireup/error.hpp"

namespace wireup::tokenizer {
namespace {

// Per thread: match data (one pair of offsets) and a JIT stack, made once.
struct Scratch {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  Scratch() {
    if (data == nullptr || context == nullptr) throw std::bad_alloc();
    if (stack != nullptr) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~Scratch() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0)
    return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char*>(buf);
}

}  // namespace

struct Pretokenizer::Impl {
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }
};

Pretokenizer::Pretokenizer(const std::string& pattern, const std::string& name)
    : impl_(std::make_unique<Impl>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (impl_->code == nullptr)
    throw InputError(name + ": pre-tokenizer pattern does not compile at offset " +
                     std::to_string(offset) + ": " + pcre2_message(error));
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);  // interpreted where no JIT
}

Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;
Pretokenizer::~Pretokenizer() = default;

bool Pretokenizer::find(std::string_view text, std::size_t from, bool check_utf, std::size_t& begin,
                        std::size_t& end) const {
  auto& s = scratch();
  const int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(),
                             from, check_utf ? 0 : PCRE2_NO_UTF_CHECK, s.data, s.context);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21)
    throw InputError("not valid UTF-8 at byte " + std::to_string(pcre2_get_startchar(s.data) + 1) +
                     " of the text (" + pcre2_message(rc) + ")");
  if (rc < 0) throw std::runtime_error("pre-tokenizer: " + pcre2_message(rc));
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s.data);
  begin = ov[0];
  end = ov[1];
  return true;
}

Pretokenizer::Cursor::Cursor(const Pretokenizer& p, std::string_view text, bool keep_gaps)
    : p_(p), text_(text), keep_gaps_(keep_gaps) {}

bool Pretokenizer::Cursor::next(std::string_view& piece) {
  for (;;) {
    if (pending_) {  // a match found after a gap that was returned first
      pending_ = false;
      piece = text_.substr(match_begin_, match_end_ - match_begin_);
      at_ = match_end_;
      return true;
    }
    if (at_ >= text_.size()) return false;
    std::size_t begin = 0, end = 0;
    const bool found = p_.find(text_, at_, !checked_, begin, end);
    checked_ = true;
    if (!found) begin = end = text_.size();
    if (begin == end && found) {  // an empty match: step one character
      std::size_t step = at_ + 1;
      while (step < text_.size() && (static_cast<unsigned char>(text_[step]) & 0xC0) == 0x80)
        ++step;
      if (keep_gaps_) {
        piece = text_.substr(at_, step - at_);
        at_ = step;
        return true;
      }
      at_ = step;
      continue;
    }
    if (keep_gaps_ && begin > at_) {
      piece = text_.substr(at_, begin - at_);
      match_begin_ = begin;
      match_end_ = end;
      pending_ = found;
      at_ = found ? begin : text_.size();
      return true;
    }
    if (!found) return false;
    piece = text_.substr(begin, end - begin);
    at_ = end;
    return true;
  }
}

}  // namespace wireup::tokenizer
