#include "wireup/data/manifest.hpp"

#include <nlohmann/json.hpp>

#include "wireup/data/shard_format.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/sha256.hpp"

namespace wireup::data {
namespace {

using nlohmann::json;

json shard_json(const ShardEntry& s, bool chat) {
  json j = {{"file", s.file},
            {"bytes", s.bytes},
            {"tokens", s.tokens},
            {"documents", s.documents},
            {"sha256", s.sha256}};
  if (chat) j["trained_tokens"] = s.trained_tokens;
  return j;
}

json split_json(const SplitEntry& s, bool chat) {
  json shards = json::array();
  for (const auto& e : s.shards) shards.push_back(shard_json(e, chat));
  json j = {{"tokens", s.tokens()}, {"documents", s.documents()}, {"shards", shards}};
  if (chat) j["trained_tokens"] = s.trained_tokens();
  return j;
}

// Field access with messages that name the file and the JSON path.
class Reader {
 public:
  explicit Reader(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& expected) const {
    throw InputError(name_ + ": field '" + path + "': expected " + expected);
  }

  const json& field(const json& obj, const std::string& path, const char* key, json::value_t type,
                    const char* expected) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string(expected) + " (missing)");
    const bool unsigned_ok =
        type == json::value_t::number_unsigned && it->type() == json::value_t::number_unsigned;
    const bool float_ok = type == json::value_t::number_float && it->is_number();
    const bool int_ok = type == json::value_t::number_integer && it->is_number_integer();
    if (!(it->type() == type || unsigned_ok || float_ok || int_ok)) fail(path, expected);
    return *it;
  }
  std::uint64_t u64(const json& o, const std::string& p, const char* k) const {
    return field(o, p, k, json::value_t::number_unsigned, "a non-negative integer")
        .get<std::uint64_t>();
  }
  std::int64_t i64(const json& o, const std::string& p, const char* k) const {
    return field(o, p, k, json::value_t::number_integer, "an integer").get<std::int64_t>();
  }
  std::string str(const json& o, const std::string& p, const char* k) const {
    return field(o, p, k, json::value_t::string, "a string").get<std::string>();
  }
  bool boolean(const json& o, const std::string& p, const char* k) const {
    return field(o, p, k, json::value_t::boolean, "true or false").get<bool>();
  }
  const json& object(const json& o, const std::string& p, const char* k) const {
    return field(o, p, k, json::value_t::object, "an object");
  }
  const json& array(const json& o, const std::string& p, const char* k) const {
    return field(o, p, k, json::value_t::array, "an array");
  }

  std::string file_name(const json& o, const std::string& p) const {
    auto f = str(o, p + ".file", "file");
    if (f.empty() || f == "." || f == ".." || f.find('/') != std::string::npos ||
        f.find('\0') != std::string::npos)
      fail(p + ".file", "a plain file name in the manifest's directory");
    return f;
  }

  std::string checksum(const json& o, const std::string& p) const {
    auto s = str(o, p + ".sha256", "sha256");
    if (!is_sha256_hex(s)) fail(p + ".sha256", "64 lowercase hex digits");
    return s;
  }

  SplitEntry split(const json& root, const char* key, bool chat) const {
    const std::string base = std::string("splits.") + key;
    const auto& s = object(object(root, "splits", "splits"), base, key);
    SplitEntry out;
    const auto& shards = array(s, base + ".shards", "shards");
    for (std::size_t i = 0; i < shards.size(); ++i) {
      const std::string p = base + ".shards[" + std::to_string(i) + "]";
      if (!shards[i].is_object()) fail(p, "an object");
      ShardEntry e;
      e.file = file_name(shards[i], p);
      e.bytes = u64(shards[i], p + ".bytes", "bytes");
      e.tokens = u64(shards[i], p + ".tokens", "tokens");
      e.documents = u64(shards[i], p + ".documents", "documents");
      e.sha256 = checksum(shards[i], p);
      if (chat) e.trained_tokens = u64(shards[i], p + ".trained_tokens", "trained_tokens");
      out.shards.push_back(std::move(e));
    }
    if (u64(s, base + ".tokens", "tokens") != out.tokens())
      fail(base + ".tokens",
           "the sum of its shards' tokens (" + std::to_string(out.tokens()) + ")");
    if (u64(s, base + ".documents", "documents") != out.documents())
      fail(base + ".documents",
           "the sum of its shards' documents (" + std::to_string(out.documents()) + ")");
    if (chat && u64(s, base + ".trained_tokens", "trained_tokens") != out.trained_tokens())
      fail(base + ".trained_tokens",
           "the sum of its shards' trained_tokens (" + std::to_string(out.trained_tokens()) + ")");
    return out;
  }

 private:
  std::string name_;
};

}  // namespace

std::uint64_t SplitEntry::tokens() const {
  std::uint64_t n = 0;
  for (const auto& s : shards) n += s.tokens;
  return n;
}

std::uint64_t SplitEntry::documents() const {
  std::uint64_t n = 0;
  for (const auto& s : shards) n += s.documents;
  return n;
}

std::uint64_t SplitEntry::trained_tokens() const {
  std::uint64_t n = 0;
  for (const auto& s : shards) n += s.trained_tokens;
  return n;
}

namespace {

json chat_json(const Manifest& m) {
  const auto& c = *m.chat;
  return {{"template", c.chat_template},
          {"date_string", c.date_string},
          {"train_on", c.train_on},
          {"skipped_rows", c.skipped_rows},
          {"conversations", m.train.documents() + m.validation.documents()},
          {"tokens", m.train.tokens() + m.validation.tokens()},
          {"trained_tokens", m.train.trained_tokens() + m.validation.trained_tokens()}};
}

ChatEntry parse_chat(const Reader& r, const json& root, const SplitEntry& train,
                     const SplitEntry& validation) {
  const auto& c = r.object(root, "chat", "chat");
  ChatEntry e;
  e.chat_template = r.str(c, "chat.template", "template");
  if (e.chat_template != "llama3" && e.chat_template != "llama3.1" &&
      e.chat_template != "qwen2.5" && e.chat_template != "qwen3")
    r.fail("chat.template", "\"llama3\", \"llama3.1\", \"qwen2.5\" or \"qwen3\"");
  e.date_string = r.str(c, "chat.date_string", "date_string");
  e.train_on = r.str(c, "chat.train_on", "train_on");
  if (e.train_on != "all" && e.train_on != "assistant" && e.train_on != "last-assistant")
    r.fail("chat.train_on", "\"all\", \"assistant\" or \"last-assistant\"");
  e.skipped_rows = r.u64(c, "chat.skipped_rows", "skipped_rows");
  const auto check = [&](const char* key, std::uint64_t want, const char* what) {
    if (r.u64(c, std::string("chat.") + key, key) != want)
      r.fail(std::string("chat.") + key,
             std::string("the ") + what + " of both splits (" + std::to_string(want) + ")");
  };
  check("conversations", train.documents() + validation.documents(), "documents");
  check("tokens", train.tokens() + validation.tokens(), "tokens");
  check("trained_tokens", train.trained_tokens() + validation.trained_tokens(), "trained_tokens");
  return e;
}

// The counts a preference entry repeats: pairs (two documents each) over both splits.
std::uint64_t pair_count(const Manifest& m) {
  return (m.train.documents() + m.validation.documents()) / 2;
}

json preference_json(const Manifest& m) {
  const auto& p = *m.preference;
  return {{"format", p.format},
          {"template", p.chat_template},
          {"date_string", p.date_string},
          {"skipped_rows", p.skipped_rows},
          {"skipped_by_reason", p.skipped_by_reason},
          {"pairs", pair_count(m)},
          {"trained_tokens", m.train.trained_tokens() + m.validation.trained_tokens()}};
}

PreferenceEntry parse_preference(const Reader& r, const json& root, const Manifest& m) {
  const auto& c = r.object(root, "preference", "preference");
  PreferenceEntry e;
  e.format = r.str(c, "preference.format", "format");
  if (e.format != "conversational" && e.format != "text")
    r.fail("preference.format", "\"conversational\" or \"text\"");
  e.chat_template = r.str(c, "preference.template", "template");
  if ((e.format == "text") != e.chat_template.empty())
    r.fail("preference.template", "a chat template for conversational pairs, \"\" for text");
  e.date_string = r.str(c, "preference.date_string", "date_string");
  e.skipped_rows = r.u64(c, "preference.skipped_rows", "skipped_rows");
  const auto& reasons = r.object(c, "preference.skipped_by_reason", "skipped_by_reason");
  std::uint64_t sum = 0;
  for (const auto& [reason, count] : reasons.items()) {
    const auto n = r.u64(reasons, "preference.skipped_by_reason." + reason, reason.c_str());
    e.skipped_by_reason[reason] = n;
    sum += n;
  }
  if (sum != e.skipped_rows)
    r.fail("preference.skipped_by_reason",
           "counts that sum to skipped_rows (" + std::to_string(e.skipped_rows) + ")");
  for (const auto* s : {&m.train, &m.validation})
    for (std::size_t i = 0; i < s->shards.size(); ++i)
      if (s->shards[i].documents % 2 != 0)
        r.fail(std::string("splits.") + (s == &m.train ? "train" : "validation") + ".shards[" +
                   std::to_string(i) + "].documents",
               "an even count: a pair is two documents in one shard");
  const auto trained = m.train.trained_tokens() + m.validation.trained_tokens();
  if (r.u64(c, "preference.trained_tokens", "trained_tokens") != trained)
    r.fail("preference.trained_tokens",
           "the trained_tokens of both splits (" + std::to_string(trained) + ")");
  if (r.u64(c, "preference.pairs", "pairs") != pair_count(m))
    r.fail("preference.pairs",
           "half the documents of both splits (" + std::to_string(pair_count(m)) + ")");
  return e;
}

std::uint64_t manifest_version(const Manifest& m) {
  if (m.preference) return kManifestVersionPreference;
  return m.chat ? kManifestVersionChat : kManifestVersion;
}

}  // namespace

std::string manifest_to_json(const Manifest& m) {
  json inputs = json::array();
  for (const auto& i : m.inputs)
    inputs.push_back({{"path", i.path}, {"bytes", i.bytes}, {"documents", i.documents}});
  const bool chat = m.masked();
  json j = {
      {"format", kManifestFormat},
      {"version", manifest_version(m)},
      {"created_by", m.created_by},
      {"token_bytes", m.token_bytes},
      {"tokenizer",
       {{"type", m.tokenizer.type},
        {"file", m.tokenizer.file},
        {"sha256", m.tokenizer.sha256},
        {"source", m.tokenizer.source},
        {"vocab_size", m.tokenizer.vocab_size},
        {"bos_id", m.tokenizer.bos_id},
        {"eos_id", m.tokenizer.eos_id}}},
      {"documents", {{"add_bos", m.add_bos}, {"add_eos", m.add_eos}}},
      {"split", {{"validation_fraction", m.validation_fraction}, {"seed", m.split_seed}}},
      {"splits",
       {{"train", split_json(m.train, chat)}, {"validation", split_json(m.validation, chat)}}},
      {"inputs", inputs},
  };
  if (m.chat) j["chat"] = chat_json(m);
  if (m.preference) j["preference"] = preference_json(m);
  return j.dump(2) + "\n";
}

Manifest parse_manifest(std::string_view text, const std::string& name) {
  io::check_json_shape(text, name, kMaxManifestDepth, kMaxManifestValues);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number past double's range
    throw InputError(name + ": not valid JSON (" + e.what() + ")");
  }
  const Reader r(name);
  if (!root.is_object()) r.fail("", "a JSON object at the top level");
  if (r.str(root, "format", "format") != kManifestFormat)
    r.fail("format", "\"wireup-tokens\" (is this a wireup-prep manifest?)");
  const auto version = r.u64(root, "version", "version");
  if (version < kManifestVersion || version > kManifestVersionPreference)
    r.fail("version", std::to_string(kManifestVersion) + ", " +
                          std::to_string(kManifestVersionChat) + " or " +
                          std::to_string(kManifestVersionPreference) +
                          " (written by a different wireup-prep)");
  const bool chat = version != kManifestVersion;  // version 2 shards, trained_tokens
  Manifest m;
  m.created_by = r.str(root, "created_by", "created_by");
  const auto width = r.u64(root, "token_bytes", "token_bytes");
  if (width != 2 && width != 4) r.fail("token_bytes", "2 or 4");
  m.token_bytes = static_cast<std::uint32_t>(width);

  const auto& tok = r.object(root, "tokenizer", "tokenizer");
  m.tokenizer.type = r.str(tok, "tokenizer.type", "type");
  m.tokenizer.file = r.file_name(tok, "tokenizer");
  m.tokenizer.sha256 = r.checksum(tok, "tokenizer");
  m.tokenizer.source = r.str(tok, "tokenizer.source", "source");
  const auto vocab = r.u64(tok, "tokenizer.vocab_size", "vocab_size");
  if (vocab == 0 || vocab > 0xFFFFFFFEu) r.fail("tokenizer.vocab_size", "1 .. 4294967294");
  m.tokenizer.vocab_size = static_cast<std::uint32_t>(vocab);
  if (token_bytes_for_vocab(vocab) != m.token_bytes)
    r.fail("token_bytes", std::to_string(token_bytes_for_vocab(vocab)) + " for vocab_size " +
                              std::to_string(vocab));
  m.tokenizer.bos_id = r.i64(tok, "tokenizer.bos_id", "bos_id");
  m.tokenizer.eos_id = r.i64(tok, "tokenizer.eos_id", "eos_id");
  for (const auto& [id, key] : {std::pair{m.tokenizer.bos_id, "tokenizer.bos_id"},
                                std::pair{m.tokenizer.eos_id, "tokenizer.eos_id"}})
    if (id < -1 || id >= static_cast<std::int64_t>(vocab))
      r.fail(key, "-1 or an id below vocab_size");

  const auto& docs = r.object(root, "documents", "documents");
  m.add_bos = r.boolean(docs, "documents.add_bos", "add_bos");
  m.add_eos = r.boolean(docs, "documents.add_eos", "add_eos");

  const auto& split = r.object(root, "split", "split");
  m.validation_fraction = r.field(split, "split.validation_fraction", "validation_fraction",
                                  json::value_t::number_float, "a number in [0, 1)")
                              .get<double>();
  if (!(m.validation_fraction >= 0.0 && m.validation_fraction < 1.0))
    r.fail("split.validation_fraction", "a number in [0, 1)");
  m.split_seed = r.u64(split, "split.seed", "seed");

  m.train = r.split(root, "train", chat);
  m.validation = r.split(root, "validation", chat);
  if (version == kManifestVersionChat) m.chat = parse_chat(r, root, m.train, m.validation);
  if (version == kManifestVersionPreference) m.preference = parse_preference(r, root, m);

  const auto& inputs = r.array(root, "inputs", "inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string p = "inputs[" + std::to_string(i) + "]";
    if (!inputs[i].is_object()) r.fail(p, "an object");
    m.inputs.push_back({r.str(inputs[i], p + ".path", "path"),
                        r.u64(inputs[i], p + ".bytes", "bytes"),
                        r.u64(inputs[i], p + ".documents", "documents")});
  }
  return m;
}

std::filesystem::path manifest_path(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return path / kManifestName;
  return path;
}

Manifest load_manifest(const std::filesystem::path& path) {
  const auto file = manifest_path(path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw InputError(file.string() +
                     ": cannot read manifest (expected the manifest.json "
                     "that wireup-prep writes, or its directory)");
  return parse_manifest(io::read_text(file, kMaxManifestBytes), file.string());
}

}  // namespace wireup::data
