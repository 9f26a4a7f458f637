#include "wireup/inspect/inspect.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <ostream>
#include <string>
#include <vector>

#include "wireup/data/manifest.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/data/shard_set.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/inspect/inspect_format.hpp"
#include "wireup/sha256.hpp"
#include "wireup/text.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

namespace wireup::prep {
namespace fs = std::filesystem;
using tokenizer::Tokenizer;
namespace {

// The tokenizer that decodes, and a line saying which it is.
Tokenizer load_decoder(const InspectOptions& o, const data::Manifest& m, const fs::path& dir,
                       std::string& described) {
  const auto& want = m.tokenizer;
  fs::path path;
  if (o.tokenizer) {
    path = *o.tokenizer;
  } else {
    path = dir / want.file;
    std::error_code ec;
    if (!fs::exists(path, ec))
      throw InputError(path.string() + ": the data set's tokenizer (manifest tokenizer.file " +
                       wireup::quoted(want.file) +
                       ") is missing; give the one it was prepared with: " + "--tokenizer FILE");
  }
  // Read once, bounded and regular files only (Tokenizer::load's rules): the
  // bytes checked are the bytes loaded.
  std::string bytes = io::read_text(path, Tokenizer::kMaxTokenizerBytes);
  const bool manifests = sha256_hex(bytes) == want.sha256;
  if (!o.tokenizer && !manifests)
    throw InputError(path.string() + ": SHA-256 does not match the manifest's tokenizer.sha256 " +
                     "(replaced or damaged?); give the one the data set was prepared with: " +
                     "--tokenizer FILE");
  auto tok = Tokenizer::from_bytes(std::move(bytes), "tokenizer " + wireup::quoted(path.string()));
  const auto refuse = [&](const std::string& has, const std::string& manifest) {
    throw InputError("tokenizer " + wireup::quoted(path.string()) + " has " + has +
                     " but the data set's manifest records " + manifest +
                     ": give the tokenizer the data set was prepared with");
  };
  if (tok.vocab_size() != want.vocab_size)
    refuse("a vocabulary of " + std::to_string(tok.vocab_size()) + " pieces",
           "tokenizer.vocab_size " + std::to_string(want.vocab_size));
  if (tok.bos_id() != want.bos_id)
    refuse("bos id " + std::to_string(tok.bos_id()),
           "tokenizer.bos_id " + std::to_string(want.bos_id));
  if (tok.eos_id() != want.eos_id)
    refuse("eos id " + std::to_string(tok.eos_id()),
           "tokenizer.eos_id " + std::to_string(want.eos_id));
  described = path.string();
  if (o.tokenizer)
    described += manifests
                     ? " (--tokenizer, the same bytes as the manifest's)"
                     : " (--tokenizer; not the manifest's bytes: the text shown may be wrong)";
  return tok;
}

DatasetFacts dataset_facts(const fs::path& file, const data::Manifest& m) {
  DatasetFacts facts;
  facts.manifest = file.string();
  facts.created_by = m.created_by;
  facts.vocab_size = m.tokenizer.vocab_size;
  facts.bos_id = m.tokenizer.bos_id;
  facts.eos_id = m.tokenizer.eos_id;
  facts.add_bos = m.add_bos;
  facts.add_eos = m.add_eos;
  facts.token_bytes = m.token_bytes;
  facts.tokenizer_type = m.tokenizer.type;
  facts.tokenizer_file = m.tokenizer.file;
  facts.tokenizer_sha256 = m.tokenizer.sha256;
  facts.tokenizer_source = m.tokenizer.source;
  for (const auto& [name, split] : {std::pair{"train", &m.train}, {"validation", &m.validation}})
    facts.splits.push_back({name, split->shards.size(), split->documents(), split->tokens()});
  if (m.chat)
    facts.chat = ChatFacts{m.chat->chat_template,
                           m.chat->date_string,
                           m.chat->train_on,
                           m.train.documents() + m.validation.documents(),
                           m.train.tokens() + m.validation.tokens(),
                           m.train.trained_tokens() + m.validation.trained_tokens(),
                           m.chat->skipped_rows};
  if (m.preference)
    facts.preference = PreferenceFacts{m.preference->format,
                                       m.preference->chat_template,
                                       (m.train.documents() + m.validation.documents()) / 2,
                                       m.train.tokens() + m.validation.tokens(),
                                       m.train.trained_tokens() + m.validation.trained_tokens(),
                                       m.preference->skipped_rows};
  return facts;
}

// Document `ref` of `shard` (whose document offsets are `offsets`): its
// first max_tokens ids, checked against the vocabulary, and their text.
DocView read_document(const InspectOptions& o, const data::Manifest& m, const DocRef& ref,
                      const std::string& shard_file, const data::ShardFile& shard,
                      const std::vector<std::uint64_t>& offsets, const Tokenizer& tok,
                      const std::string& decoder) {
  DocView v;
  v.split = o.split;
  v.ref = ref;
  v.shard_file = shard_file;
  v.first_token = offsets[ref.doc];
  v.tokens = offsets[ref.doc + 1] - offsets[ref.doc];
  v.ids.resize(std::min(v.tokens, o.max_tokens));
  if (m.preference)
    v.pair_label =
        "pair " + std::to_string(ref.index / 2) + (ref.index % 2 == 0 ? " chosen" : " rejected");
  shard.read_tokens(v.first_token, v.ids.size(), v.ids.data());
  for (std::size_t i = 0; i < v.ids.size(); ++i)
    if (v.ids[i] >= m.tokenizer.vocab_size)
      throw InputError(shard.path().string() + ": token " + std::to_string(v.first_token + i) +
                       " has id " + std::to_string(v.ids[i]) + ", outside the vocabulary of " +
                       std::to_string(m.tokenizer.vocab_size) + " (corrupt shard)");
  try {
    v.text = tok.decode(text_ids(v.ids, m.tokenizer.bos_id, m.tokenizer.eos_id));
    if (shard.header().has_mask()) {
      v.mask.resize(v.ids.size());
      shard.read_mask(v.first_token, v.mask.size(), v.mask.data());
      for (const auto& [b, e] : trained_spans(v.mask))
        v.trained_runs.push_back(
            tok.decode(std::vector<int>(v.ids.begin() + b, v.ids.begin() + e)));
    }
  } catch (const std::exception& e) {  // an id the model does not define
    throw InputError(shard.path().string() + ": document " + std::to_string(ref.doc) +
                     " cannot be decoded by " + decoder + ": " + e.what());
  }
  return v;
}

}  // namespace

void inspect_dataset(const InspectOptions& o, std::ostream& out) {
  if (o.split != "train" && o.split != "validation")
    throw InputError("--split " + wireup::quoted(o.split) + ": expected train or validation");
  if (o.docs < 1) throw InputError("--docs must be at least 1");
  if (o.max_tokens < 1) throw InputError("--max-tokens must be at least 1");
  const auto file = data::manifest_path(o.dataset);
  const auto m = data::load_manifest(file);
  auto dir = file.parent_path();
  if (dir.empty()) dir = ".";
  std::string decoder;
  const auto tok = load_decoder(o, m, dir, decoder);
  DatasetFacts facts = dataset_facts(file, m);
  facts.decoder = decoder;

  // The header goes out with the first document, so an error up to there
  // prints nothing; one in a later document ends the listing where it is.
  std::string pending = format_header(facts);
  const auto& split = o.split == "train" ? m.train : m.validation;
  if (split.shards.empty()) {
    out << pending << "\n" << o.split << ": no documents\n";
    return;
  }
  const data::ShardSet set(dir, m, split, o.split, data::ReadMode::Pread, data::Verify::SizesOnly);
  std::vector<std::uint64_t> docs_per_shard;
  for (const auto& s : split.shards) docs_per_shard.push_back(s.documents);
  std::vector<std::uint64_t> offsets;
  std::size_t offsets_of = SIZE_MAX;
  std::uint64_t shown = 0;
  for (auto ref = first_document(docs_per_shard); ref && shown < o.docs;
       ref = next_document(docs_per_shard, *ref), ++shown) {
    const auto& shard = set.shards()[ref->shard];
    if (offsets_of != ref->shard) {
      offsets = shard.doc_offsets();
      offsets_of = ref->shard;
    }
    const DocView doc =
        read_document(o, m, *ref, split.shards[ref->shard].file, shard, offsets, tok, decoder);
    out << pending << format_document(doc);
    pending.clear();
  }
  if (shown < o.docs)
    out << "\n(" << o.split << " holds " << shown << " document" << (shown == 1 ? "" : "s")
        << ")\n";
}

}  // namespace wireup::prep
