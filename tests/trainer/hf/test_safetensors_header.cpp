// The safetensors header and index checks (no Torch): what the reference
// implementation refuses is refused here, with the file named.
#include <catch2/catch.hpp>
#include <string>

#include "hf/safetensors_header.hpp"
#include "wireup/error.hpp"

using namespace wireup::train::safetensors;
using Catch::Matchers::Contains;
using wireup::InputError;

namespace {

const std::string kName = "/m/model.safetensors";

// Two F32 tensors: a [2, 2] at [0, 16) and b [3] at [16, 28).
std::string tensor(const std::string& name, const std::string& shape, const std::string& offsets,
                   const std::string& dtype = "F32") {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}
const std::string kA = tensor("a", "[2,2]", "[0,16]");
const std::string kB = tensor("b", "[3]", "[16,28]");

void refused(const std::string& text, const std::string& needle, std::uint64_t data = 28) {
  CAPTURE(text);
  CHECK_THROWS_WITH(parse_header(text, data, kName), Contains(kName + ": ") && Contains(needle));
}

}  // namespace

TEST_CASE("a valid header parses, tensors in data order, metadata kept") {
  const Header h =
      parse_header("{\"__metadata__\":{\"format\":\"pt\"}," + kB + "," + kA + "}  ", 28, kName);
  REQUIRE(h.tensors.size() == 2);
  CHECK(h.tensors[0].name == "a");
  CHECK(h.tensors[0].shape == std::vector<std::int64_t>{2, 2});
  CHECK(h.tensors[1].begin == 16);
  CHECK(h.metadata.at("format") == "pt");
  CHECK(parse_header("{}", 0, kName).tensors.empty());
  CHECK(parse_header("{" + tensor("s", "[]", "[0,2]", "BF16") + "}", 2, kName).tensors.size() == 1);
}

TEST_CASE("the reference implementation's refusals") {
  refused("{" + kA + "," + tensor("b", "[3.5]", "[16,28]") + "}", "not a non-negative integer");
  refused("{" + kA + "," + tensor("b", "[-3]", "[16,28]") + "}", "not a non-negative integer");
  refused("{" + kA + "," + kB + "," + tensor("a", "[2,2]", "[0,16]") + "}", "'a' is named twice");
  refused("{" + kA + "," + tensor("b", "[2,2]", "[0,16]") + "}", "overlaps the tensor before");
  refused("{" + kA + "," + tensor("b", "[2]", "[20,28]") + "}", "a gap before it");
  refused("{" + kA + "," + kB + "}", "bytes after the last tensor", 4096);
  refused("{" + kA + "," + kB + "}",
          "tensor b: data [16, 28) lies outside the file's 20 data bytes (truncated?)", 20);
  refused("{" + kA + "," + tensor("b", "[3]", "[16,24]") + "}", "for 3 F32 elements");
  refused("{" + kA + "," + kB + "," + tensor("w", "[4294967296,4294967296]", "[28,28]") + "}",
          "element count passes 2^64");
  refused("{" + kA + "," + kB + "," + tensor("w", "[4611686018427387904]", "[28,28]") + "}",
          "byte count passes 2^64");
  refused("{" + kA + "," + tensor("b", "[3]", "[16,28]", "Q4") + "}", "unknown dtype Q4");
  refused("{\"__metadata__\":{\"n\":1}," + kA + "," + kB + "}",
          "__metadata__ value of n is not a string");
  refused("{" + kA + ",\"b\":[1,2]}", "tensor b: is [1,2], not a tensor object");
  refused("{" + kA + ",\"b\":{\"dtype\":\"F32\",\"shape\":[3]}}", "tensor b: has no data_offsets");
  refused("[1]", "not a JSON object");
  refused("{\"a\":", "not JSON");
}

TEST_CASE("nesting is refused before it is parsed deeper") {
  refused("{\"a\":{\"shape\":[[1]]}}", "nested deeper than 3 levels");
  refused(std::string(100000, '['), "nested deeper than 3 levels");
  std::string dims = "[";
  for (int i = 0; i < 65; ++i) dims += (i ? ",1" : "1");
  refused("{" + tensor("a", dims + "]", "[0,4]") + "}", "at most 64 sizes", 4);
}

TEST_CASE("the header length is checked against the file") {
  CHECK_NOTHROW(check_header_length(2, 10, kName));
  CHECK_THROWS_WITH(check_header_length(0, 4, kName), Contains("shorter than its 8-byte"));
  CHECK_THROWS_WITH(check_header_length(100, 50, kName), Contains("header length 100"));
  CHECK_THROWS_WITH(check_header_length(kMaxHeaderBytes + 1, 1ull << 40, kName),
                    Contains("at most 104857600 expected"));
}

TEST_CASE("an index maps each tensor to one file of the directory") {
  const std::string idx = "/m/model.safetensors.index.json";
  const auto map = parse_index(
      R"({"metadata":{"total_size":28},"weight_map":{"a":"model-1.safetensors","b":"model-2.safetensors"}})",
      idx);
  CHECK(map.at("b") == "model-2.safetensors");
  auto bad = [&](const std::string& text, const std::string& needle) {
    CAPTURE(text);
    CHECK_THROWS_WITH(parse_index(text, idx), Contains(idx + ": ") && Contains(needle));
  };
  bad(R"({"weight_map":{"a":"x.safetensors","a":"y.safetensors"}})", "'a' is named twice");
  bad(R"({"weight_map":{"a":7}})", "maps a to 7 (the name of a file");
  bad(R"({"weight_map":{"a":"../x"}})", "maps a to \"../x\"");
  bad(R"({"weight_map":{"a":".."}})", "maps a to \"..\"");
  bad(R"({"metadata":{}})", "no weight_map");
  bad("[]", "no weight_map");
  bad("{", "not JSON");
  bad(std::string(1000, '['), "nested deeper than 8");
}
