// Writes the seed corpus of the data fuzz targets: one small valid file of
// each kind, made with the writers wireup-prep uses, so the seeds follow the
// formats as they are now. Usage: make_seeds CORPUS_ROOT (which holds one
// directory per target).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "wireup/data/manifest.hpp"
#include "wireup/data/shard_format.hpp"
#include "wireup/tokenizer/byte_level.hpp"
#include "wireup/tokenizer/known_vocabularies.hpp"

namespace fs = std::filesystem;
using namespace wireup;

namespace {

void put(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string byte_token(int b) { return std::string(1, static_cast<char>(b)); }

std::string tokenizer_json() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[tokenizer::bytes_to_unicode(byte_token(b))] = b;
  vocab[tokenizer::bytes_to_unicode(" h")] = 256;
  vocab[tokenizer::bytes_to_unicode(" hi")] = 257;
  const nlohmann::json j = {
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern", {{"Regex", std::string(tokenizer::kLlama3Pattern)}}},
           {"behavior", "Isolated"}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"added_tokens",
       {{{"id", 258}, {"content", "<s>"}, {"special", true}},
        {{"id", 259}, {"content", "</s>"}, {"special", true}}}},
      {"model",
       {{"type", "BPE"},
        {"vocab", vocab},
        {"merges", {"\xC4\xA0 h", "\xC4\xA0h i"}},
        {"ignore_merges", true}}}};
  return j.dump();
}

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    unsigned n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out += k[n >> 18 & 63];
    out += k[n >> 12 & 63];
    out += i + 1 < in.size() ? k[n >> 6 & 63] : '=';
    out += i + 2 < in.size() ? k[n & 63] : '=';
  }
  return out;
}

std::string tiktoken() {
  std::string out;
  int rank = 0;
  for (int b = 0; b < 256; ++b) out += base64(byte_token(b)) + " " + std::to_string(rank++) + "\n";
  for (const char* t : {"ab", "abc", " the"})
    out += base64(t) + " " + std::to_string(rank++) + "\n";
  return out;
}

std::string manifest() {
  data::Manifest m;
  m.token_bytes = 2;
  m.tokenizer = {
      "huggingface", "tokenizer.json", std::string(64, 'a'), "hub/tokenizer.json", 260, 258, 259};
  m.train.shards.push_back({"train-00000.bin", 4096 + 16 + 24, 8, 2, std::string(64, 'b')});
  m.validation.shards.push_back(
      {"validation-00000.bin", 4096 + 8 + 16, 4, 1, std::string(64, 'c')});
  m.validation_fraction = 0.25;
  m.split_seed = 7;
  m.inputs.push_back({"corpus.jsonl", 1234, 3});
  m.created_by = "wireup-prep";
  return data::manifest_to_json(m);
}

// The same as a chat data set's (version 2: trained tokens, the chat block).
std::string chat_manifest() {
  auto m = data::parse_manifest(manifest(), "seed");
  m.chat = data::ChatEntry{"llama3.1", "26 Jul 2024", "assistant", 1};
  m.train.shards[0].trained_tokens = 3;
  m.validation.shards[0].trained_tokens = 1;
  return data::manifest_to_json(m);
}

// Three documents of 3, 2 and 3 tokens (2-byte ids below 260); `masked`:
// version 2, with a loss mask training 3 of them.
std::string shard(bool masked) {
  const auto h = data::make_header(260, 258, 259, 8, 3, masked, 3);
  const auto head = data::encode_header(h);
  std::string out(head.begin(), head.end());
  for (std::uint16_t t : {258, 72, 259, 258, 259, 258, 105, 259}) {
    out += static_cast<char>(t & 0xFF);
    out += static_cast<char>(t >> 8);
  }
  out.resize(h.doc_index_offset, '\0');
  for (std::uint64_t at : {0, 3, 5, 8})
    for (int i = 0; i < 8; ++i) out += static_cast<char>(at >> (8 * i) & 0xFF);
  if (masked) out += static_cast<char>(0b01000110);  // tokens 1, 2 and 6
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_ROOT\n");
    return 2;
  }
  const fs::path root = argv[1];
  put(root / "fuzz_tokenizer_json", "seed-tokenizer.json", tokenizer_json());
  put(root / "fuzz_tiktoken", "seed-tokenizer.model", tiktoken());
  put(root / "fuzz_manifest", "seed-manifest.json", manifest());
  put(root / "fuzz_manifest", "seed-chat-manifest.json", chat_manifest());
  put(root / "fuzz_shard", "seed-train.bin", shard(false));
  put(root / "fuzz_shard", "seed-chat-train.bin", shard(true));
  return 0;
}
