#include "wireup/tokenizer/bpe_tokenizer.hpp"

#include <algorithm>
#include <stdexcept>

#include "wireup/error.hpp"
#include "wireup/tokenizer/utf8.hpp"

namespace wireup::tokenizer {
namespace {

BpeModel make_model(const BpeSpec& spec, const std::string& name) {
  try {
    return spec.merges.empty()
               ? BpeModel::from_ranks(spec.tokens, spec.ignore_merges)
               : BpeModel::from_merges(spec.tokens, spec.merges, spec.ignore_merges);
  } catch (const std::invalid_argument& e) {
    throw InputError(name + ": " + e.what());
  }
}

// The added tokens matched in text: those not special.
std::vector<SpecialToken> matched_in_text(const BpeSpec& spec, const std::string& name) {
  std::vector<SpecialToken> out;
  for (const auto& s : spec.specials) {
    if (s.special) continue;
    if (s.text.empty())
      throw InputError(name + ": an added token with id " + std::to_string(s.id) + " is empty");
    out.push_back(s);
  }
  return out;
}

}  // namespace

BpeTokenizer::BpeTokenizer(const BpeSpec& spec, const std::string& name)
    : specials_(spec.specials),
      added_(matched_in_text(spec, name)),
      normalization_(spec.normalization),
      pre_(spec.pattern, name),
      model_(make_model(spec, name)),
      keep_gaps_(spec.keep_gaps),
      bos_(spec.bos),
      eos_(spec.eos) {
  std::size_t size = spec.tokens.size();
  for (const auto& s : spec.specials) {
    if (s.id < 0) throw InputError(name + ": special token '" + s.text + "' has a negative id");
    size = std::max(size, static_cast<std::size_t>(s.id) + 1);
  }
  if (size > (std::size_t{1} << 24))
    throw InputError(name + ": vocabulary of " + std::to_string(size) + " ids; at most 2^24");
  std::vector<std::string_view> bytes(size);
  used_.assign(size, false);
  for (std::size_t id = 0; id < spec.tokens.size(); ++id) {
    bytes[id] = spec.tokens[id];
    used_[id] = !spec.tokens[id].empty();
  }
  for (const auto& s : spec.specials) {
    const auto id = static_cast<std::size_t>(s.id);
    if (used_[id] && bytes[id] != s.text)
      throw InputError(name + ": special token '" + s.text + "' has id " + std::to_string(id) +
                       ", which is already another token");
    bytes[id] = s.text;
    used_[id] = true;
  }
  for (const int id : {bos_, eos_})
    if (id >= 0 && (static_cast<std::size_t>(id) >= size || !used_[id]))
      throw InputError(name + ": BOS/EOS id " + std::to_string(id) + " is not a token");
  decode_offsets_.reserve(size + 1);
  for (const auto b : bytes) {
    decode_offsets_.push_back(static_cast<std::uint32_t>(decode_arena_.size()));
    decode_arena_ += b;
  }
  decode_offsets_.push_back(static_cast<std::uint32_t>(decode_arena_.size()));
}

int BpeTokenizer::special_id(std::string_view text) const {
  for (const auto& s : specials_)
    if (s.text == text) return s.id;
  return -1;
}

void BpeTokenizer::encode(std::string_view text, std::vector<int>& ids) const {
  for_each_piece(text, [&](std::string_view piece, int added) {
    if (added >= 0)
      ids.push_back(added);
    else
      model_.encode(piece, ids);
  });
}

void BpeTokenizer::check_utf8(std::string_view text) {
  if (const auto at = invalid_utf8_at(text))
    throw InputError("not valid UTF-8 at byte " + std::to_string(*at + 1) + " of the text");
}

std::string BpeTokenizer::decode(const std::vector<int>& ids) const {
  std::string out;
  for (const int id : ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= used_.size() || !used_[id])
      throw std::out_of_range("token id " + std::to_string(id) + " is not in the vocabulary (" +
                              std::to_string(vocab_size()) + " ids)");
    out.append(decode_arena_, decode_offsets_[id], decode_offsets_[id + 1] - decode_offsets_[id]);
  }
  return out;
}

}  // namespace wireup::tokenizer
