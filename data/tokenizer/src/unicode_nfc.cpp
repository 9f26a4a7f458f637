#include "wireup/tokenizer/unicode_nfc.hpp"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "wireup/error.hpp"

namespace wireup::tokenizer {
namespace {

const icu::Normalizer2& nfc() {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = icu::Normalizer2::getNFCInstance(status);
  if (U_FAILURE(status) || n == nullptr)
    throw std::runtime_error(std::string("ICU: no NFC normalizer (") + u_errorName(status) + ")");
  return *n;
}

}  // namespace

std::string_view to_nfc(std::string_view text, std::string& storage) {
  constexpr auto kMax = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
  if (text.size() > kMax)
    throw InputError("a text of " + std::to_string(text.size()) +
                     " bytes to normalize (NFC); at most " + std::to_string(kMax));
  const icu::Normalizer2& n = nfc();
  const icu::StringPiece piece(text.data(), static_cast<std::int32_t>(text.size()));
  UErrorCode status = U_ZERO_ERROR;
  if (n.isNormalizedUTF8(piece, status) && U_SUCCESS(status)) return text;
  if (U_FAILURE(status))
    throw std::runtime_error(std::string("ICU: NFC check failed (") + u_errorName(status) + ")");
  storage.clear();
  storage.reserve(text.size());
  icu::StringByteSink<std::string> sink(&storage);
  n.normalizeUTF8(0, piece, sink, nullptr, status);
  if (U_FAILURE(status))
    throw std::runtime_error(std::string("ICU: NFC normalization failed (") + u_errorName(status) +
                             ")");
  return storage;
}

}  // namespace wireup::tokenizer
