#include "wireup/tokenizer/hf_tokenizer_json.hpp"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/tokenizer/byte_level.hpp"
#include "wireup/tokenizer/known_vocabularies.hpp"

namespace wireup::tokenizer {
namespace {

using nlohmann::json;

// Ids above this are refused (memory is sized by the largest id; the
// largest vocabularies in use have some 260,000 tokens).
constexpr std::uint64_t kMaxId = std::uint64_t{1} << 24;

// The JSON shape accepted, checked before the parse (io::check_json_shape):
// Llama 3's tokenizer.json is 7 levels deep with some 1.1 million values,
// Gemma's some 2 million; the parse tree of a hostile file within these
// limits stays under 1 GB (some 100 bytes a value).
constexpr std::size_t kMaxDepth = 32;
constexpr std::uint64_t kMaxValues = std::uint64_t{8} << 20;

// The ids a file may use, decided before any table is sized: below twice
// its entries (model.vocab and added_tokens together) plus 1024, so the
// tables sized by the largest id stay within a small multiple of the file's
// own size, whatever ids it claims. Real files number their ids 0..N-1, with
// at most a few reserved gaps.
constexpr std::uint64_t kIdSlack = 1024;
std::uint64_t id_bound(const json& vocab, const json& added) {
  const std::uint64_t n =
      (vocab.is_object() ? vocab.size() : 0) + (added.is_array() ? added.size() : 0);
  return std::min(2 * n + kIdSlack, kMaxId);
}

std::string past_bound(std::uint64_t id, std::uint64_t bound) {
  return "id " + std::to_string(id) + ", not below " + std::to_string(bound) +
         " (twice the entries of model.vocab and added_tokens, plus " + std::to_string(kIdSlack) +
         ": ids are expected to run from 0 with few gaps)";
}

// Refuses the file: an error naming it, what is wrong, and what was expected.
class Refusal {
 public:
  explicit Refusal(const std::string& name) : name_(name) {}
  [[noreturn]] void operator()(const std::string& what) const {
    throw InputError(name_ + ": " + what + kExpected);
  }
  static constexpr const char* kExpected =
      "; expected a Hugging Face tokenizer.json with a byte-level BPE model (as Llama 3's)";

 private:
  const std::string& name_;
};

const json& field(const json& j, const char* key) {
  static const json null;
  if (!j.is_object()) return null;
  const auto it = j.find(key);
  return it == j.end() ? null : *it;
}

std::string type_of(const json& j) {
  const auto& t = field(j, "type");
  return t.is_string() ? t.get<std::string>() : "";
}

// The pre-tokenizer's steps: a Sequence's list, or the one.
std::vector<json> steps(const json& pre) {
  if (pre.is_null()) return {};
  if (type_of(pre) == "Sequence") {
    const auto& list = field(pre, "pretokenizers");
    return list.is_array() ? std::vector<json>(list.begin(), list.end()) : std::vector<json>{};
  }
  return {pre};
}

// The special token of a TemplateProcessing "single" template before (or
// after) the sequence $A, if any.
std::string template_special(const json& post, bool before) {
  const json* proc = &post;
  if (type_of(post) == "Sequence") {  // a Sequence of processors: its TemplateProcessing
    proc = nullptr;
    for (const auto& p : field(post, "processors"))
      if (type_of(p) == "TemplateProcessing") proc = &p;
    if (proc == nullptr) return "";
  }
  if (type_of(*proc) != "TemplateProcessing") return "";
  const auto& single = field(*proc, "single");
  if (!single.is_array()) return "";
  std::string last_before, first_after;
  bool seen_sequence = false;
  for (const auto& item : single) {
    if (item.contains("Sequence")) {
      seen_sequence = true;
    } else if (const auto& sp = field(field(item, "SpecialToken"), "id"); sp.is_string()) {
      if (!seen_sequence)
        last_before = sp.get<std::string>();
      else if (first_after.empty())
        first_after = sp.get<std::string>();
    }
  }
  return before ? last_before : first_after;
}

// The model is byte-level BPE with nothing wireup-prep would not reproduce.
void check_model(const json& model, const Refusal& fail) {
  if (!model.is_object()) fail("no \"model\" object");
  if (const auto t = type_of(model); !t.empty() && t != "BPE") fail("its model is " + t);
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const auto& v = field(model, key); v.is_string() && !v.get<std::string>().empty())
      fail(std::string("its model has a ") + key);
  if (const auto& d = field(model, "dropout"); d.is_number() && d.get<double>() > 0.0)
    fail("its model has BPE dropout");
}

// The normalizer: none, or NFC (Qwen2, 2.5 and 3), alone or as the one
// step of a Sequence.
Normalization read_normalizer(const json& root, const Refusal& fail) {
  const auto& normalizer = field(root, "normalizer");
  if (normalizer.is_null()) return Normalization::None;
  const json* step = &normalizer;
  if (type_of(normalizer) == "Sequence") {
    const auto& list = field(normalizer, "normalizers");
    if (!list.is_array() || list.size() != 1)
      fail("its normalizer is a Sequence of other than one step; wireup-prep applies only NFC");
    step = &list[0];
  }
  const auto t = type_of(*step);
  if (t != "NFC")
    fail("its normalizer is " + (t.empty() ? std::string("untyped") : t) +
         ", which wireup-prep does not apply (it applies only NFC, as Qwen's)");
  return Normalization::Nfc;
}

std::string unknown_pattern(const std::string& regex) {
  std::string names;
  for (const auto& k : known_patterns())
    names += (names.empty() ? "" : ", ") + std::string(k.name) + "'s";
  return "its pre_tokenizer's Split regex " + regex +
         " is not one wireup-prep reproduces (it knows " + names + ")";
}

// The pre-tokenizer's pattern: one Split by a Regex (Isolated, not
// inverted) and a ByteLevel step, or a ByteLevel step with use_regex (GPT-2's).
void read_pre_tokenizer(const json& root, BpeSpec& spec, const Refusal& fail) {
  bool byte_level = false;
  for (const auto& step : steps(field(root, "pre_tokenizer"))) {
    const auto t = type_of(step);
    if (t == "Split") {
      const auto& regex = field(field(step, "pattern"), "Regex");
      if (!regex.is_string() || !spec.pattern.empty())
        fail("its pre_tokenizer is not one Split by a Regex pattern");
      if (const auto& b = field(step, "behavior");
          b.is_string() && b.get<std::string>() != "Isolated")
        fail("its Split behavior is " + b.get<std::string>() + ", not Isolated");
      if (field(step, "invert").is_boolean() && field(step, "invert").get<bool>())
        fail("its Split is inverted");
      spec.pattern = regex.get<std::string>();
      if (find_known_pattern(spec.pattern) == nullptr) fail(unknown_pattern(spec.pattern));
    } else if (t == "ByteLevel") {
      byte_level = true;
      if (field(step, "add_prefix_space").is_boolean() &&
          field(step, "add_prefix_space").get<bool>())
        fail("its ByteLevel pre-tokenizer adds a prefix space");
      const auto& use_regex = field(step, "use_regex");
      if (!use_regex.is_boolean() || use_regex.get<bool>()) {
        if (!spec.pattern.empty()) fail("it has both a Split and a ByteLevel regex");
        spec.pattern = std::string(kGpt2Pattern);
      }
    } else {
      fail("its pre_tokenizer has a " + (t.empty() ? std::string("untyped") : t) + " step");
    }
  }
  if (!byte_level) fail("its pre_tokenizer is not ByteLevel");
}

// model.vocab: each token's bytes (spelled in GPT-2's byte alphabet) by id.
void read_vocab(const json& model, std::uint64_t bound, BpeSpec& spec, const Refusal& fail) {
  const auto& vocab = field(model, "vocab");
  if (!vocab.is_object() || vocab.empty()) fail("no model.vocab object");
  for (const auto& [text, id] : vocab.items()) {
    if (!id.is_number_unsigned()) fail("vocab entry '" + text + "' has no non-negative id");
    if (id.get<std::uint64_t>() >= bound)
      fail("vocab entry '" + text + "' has " + past_bound(id.get<std::uint64_t>(), bound));
    const auto i = id.get<std::size_t>();
    auto bytes = unicode_to_bytes(text);
    if (!bytes || bytes->empty())
      fail("vocab entry '" + text + "' is not in GPT-2's byte alphabet");
    if (i >= spec.tokens.size()) spec.tokens.resize(i + 1);
    if (!spec.tokens[i].empty()) fail("two vocab entries have id " + std::to_string(i));
    spec.tokens[i] = std::move(*bytes);
  }
}

// model.merges, in priority order: "a b" strings or ["a", "b"] pairs.
void read_merges(const json& model, BpeSpec& spec, const Refusal& fail) {
  const auto& merges = field(model, "merges");
  if (!merges.is_array()) fail("no model.merges list");
  spec.merges.reserve(merges.size());
  for (const auto& m : merges) {
    std::string a, b;
    if (m.is_string()) {  // "a b"
      const auto s = m.get<std::string>();
      const auto space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        fail("merge '" + s + "' is not two tokens");
      a = s.substr(0, space), b = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>(), b = m[1].get<std::string>();
    } else {
      fail("a merge is neither \"a b\" nor [\"a\", \"b\"]");
    }
    auto ba = unicode_to_bytes(a), bb = unicode_to_bytes(b);
    if (!ba || !bb) fail("merge '" + a + " " + b + "' is not in GPT-2's byte alphabet");
    spec.merges.emplace_back(std::move(*ba), std::move(*bb));
  }
}

bool flag(const json& j, const char* key) {
  const auto& v = field(j, key);
  return v.is_boolean() && v.get<bool>();
}

// One added_tokens entry. One that is not special is matched in text as
// Hugging Face does (anywhere, before the normalizer): one asking for more
// (single_word, lstrip, rstrip, or matching in normalized text) is refused.
SpecialToken read_added_token(const json& t, std::uint64_t bound, bool normalizer,
                              const Refusal& fail) {
  const auto& content = field(t, "content");
  const auto& id = field(t, "id");
  if (!content.is_string() || !id.is_number_unsigned())
    fail("an added_tokens entry lacks a string content or a non-negative id");
  const auto text = content.get<std::string>();
  if (id.get<std::uint64_t>() >= bound)
    fail("added token '" + text + "' has " + past_bound(id.get<std::uint64_t>(), bound));
  // Without a "special" flag: special (never matched in text).
  const bool special = !field(t, "special").is_boolean() || field(t, "special").get<bool>();
  if (!special) {
    if (text.empty()) fail("added token " + std::to_string(id.get<int>()) + " is empty");
    for (const char* key : {"single_word", "lstrip", "rstrip"})
      if (flag(t, key))
        fail("added token '" + text + "' (not special) has " + key +
             ", which wireup-prep does not reproduce");
    if (normalizer && flag(t, "normalized"))
      fail("added token '" + text +
           "' (not special) is matched in normalized text, which wireup-prep does not reproduce");
  }
  return {text, id.get<int>(), special};
}

// added_tokens, and which of them are BOS and EOS: the post_processor's
// template's, else the first of the usual names.
void read_specials(const json& root, std::uint64_t bound, BpeSpec& spec, const Refusal& fail) {
  const auto& added = field(root, "added_tokens");
  const bool normalizer = spec.normalization != Normalization::None;
  for (const auto& t : added.is_array() ? added : json::array())
    spec.specials.push_back(read_added_token(t, bound, normalizer, fail));
  const auto id_of = [&](const std::string& text) {
    for (const auto& s : spec.specials)
      if (s.text == text) return s.id;
    return -1;
  };
  const auto pick = [&](bool before, std::initializer_list<const char*> names) {
    if (const auto t = template_special(field(root, "post_processor"), before); !t.empty())
      if (const int id = id_of(t); id >= 0) return id;
    for (const char* n : names)
      if (const int id = id_of(n); id >= 0) return id;
    return -1;
  };
  spec.bos = pick(true, {"<|begin_of_text|>", "<s>", "<|startoftext|>", "<bos>"});
  spec.eos = pick(false, {"<|end_of_text|>", "</s>", "<|endoftext|>", "<eos>"});
}

}  // namespace

bool looks_like_json(std::string_view content) {
  const auto at = content.find_first_not_of(" \t\r\n");
  return at != std::string_view::npos && content[at] == '{';
}

BpeSpec parse_hf_tokenizer_json(std::string_view content, const std::string& name) {
  const Refusal fail(name);
  io::check_json_shape(content, name, kMaxDepth, kMaxValues);
  json root;
  try {
    root = json::parse(content);
  } catch (const json::exception& e) {
    throw InputError(name + ": not valid JSON (" + e.what() + ")" + Refusal::kExpected);
  }
  const auto& model = field(root, "model");
  check_model(model, fail);
  BpeSpec spec;
  spec.keep_gaps = true;  // HF's Split (behavior Isolated) keeps unmatched text
  spec.ignore_merges =
      field(model, "ignore_merges").is_boolean() && field(model, "ignore_merges").get<bool>();
  spec.normalization = read_normalizer(root, fail);
  read_pre_tokenizer(root, spec, fail);
  const auto bound = id_bound(field(model, "vocab"), field(root, "added_tokens"));
  read_vocab(model, bound, spec, fail);
  read_merges(model, spec, fail);
  read_specials(root, bound, spec, fail);
  return spec;
}

}  // namespace wireup::tokenizer
