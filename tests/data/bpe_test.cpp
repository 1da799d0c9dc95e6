// Byte-level BPE against Hugging Face `tokenizers`: tools/gen_tokenizer_goldens.py
// trains a GPT-2-style and a Llama-3-style tokenizer on TinyShakespeare,
// saves their tokenizer.json and the ids they give a varied text sample
// (Shakespeare, code, emoji, CJK, whitespace runs, special tokens); stride
// must give exactly those ids, and decode them back to the text.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "stride/data/bpe.h"
#include "stride/error.h"

namespace stride::data {
namespace {

const std::string kDir = std::string(STRIDE_GOLDEN_DIR) + "/tokenizers/";

const nlohmann::json& samples() {
  static const nlohmann::json j = nlohmann::json::parse(std::ifstream(kDir + "samples.json"));
  return j;
}

void expect_reference_ids(const std::string& name) {
  const BPETokenizer tok = BPETokenizer::from_file(kDir + name + ".json");
  const auto& texts = samples()["samples"];
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string text = texts[i].get<std::string>();
    const auto want = samples()[name][i].get<std::vector<int64_t>>();
    const std::vector<int64_t> got = tok.encode(text);
    EXPECT_EQ(got, want) << name << " on sample " << i << ": \"" << text << "\"";
    EXPECT_EQ(tok.decode(got), text) << name << " on sample " << i;
  }
}

TEST(BPETokenizer, Gpt2StyleGivesTheIdsOfTokenizers) {
  expect_reference_ids("gpt2_style");
}

TEST(BPETokenizer, Llama3StyleGivesTheIdsOfTokenizers) {
  expect_reference_ids("llama3_style");
}

TEST(BPETokenizer, DecodesAnyBytesBackExactly) {
  const BPETokenizer tok = BPETokenizer::from_file(kDir + "gpt2_style.json");
  std::string all;
  for (int b = 1; b < 128; ++b) all += char(b);  // every ASCII byte, controls included
  all += "\xF0\x9F\x98\x80 \xE2\x82\xAC \xC3\xA9";
  EXPECT_EQ(tok.decode(tok.encode(all)), all);
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), std::optional<int64_t>(0));
  EXPECT_THROW(tok.decode({tok.vocab_size()}), ValueError);
}

// Splitting once checked the whole text's UTF-8 at every regex match:
// quadratic, 93 s for TinyShakespeare's 1.1 MB. Linear, 2 MB take well under
// a second; the bound only catches the quadratic kind.
TEST(BPETokenizer, EncodingALongTextIsLinear) {
  const BPETokenizer tok = BPETokenizer::from_file(kDir + "llama3_style.json");
  std::string text;
  while (text.size() < (size_t(2) << 20))
    text += "First Citizen:\nBefore we proceed, 12345 \xE4\xB8\xAD!  ";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int64_t> ids = tok.encode(text);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20.0);
  EXPECT_EQ(tok.decode(ids), text);
}

// Llama 3's post-processor puts <|begin_of_text|> before a sequence: that is
// a prompt's prefix, while encode() adds nothing (what `tokenizers` gives
// with add_special_tokens=False). GPT-2's ByteLevel post-processor adds none.
TEST(BPETokenizer, TemplateProcessingGivesThePromptPrefix) {
  std::ifstream in(kDir + "llama3_style.json");
  nlohmann::json file = nlohmann::json::parse(in);
  const BPETokenizer plain = BPETokenizer::from_json(file.dump(), "llama3_style.json");
  EXPECT_TRUE(plain.prefix_ids().empty());
  file["post_processor"] = nlohmann::json::parse(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                  {"Sequence": {"id": "A", "type_id": 0}},
                  {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
       "pair": [],
       "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [0],
                                            "tokens": ["<|endoftext|>"]}}}]})");
  const BPETokenizer templated = BPETokenizer::from_json(file.dump(), "llama3_style.json");
  EXPECT_EQ(templated.prefix_ids(), std::vector<int64_t>{0});
  EXPECT_EQ(templated.encode("First Citizen"), plain.encode("First Citizen"));
  file["post_processor"] = {{"type", "RobertaProcessing"}};
  EXPECT_THROW(BPETokenizer::from_json(file.dump(), "x/tokenizer.json"), ValueError);
}

std::string error_of(const std::string& json_text) {
  try {
    BPETokenizer::from_json(json_text, "bad/tokenizer.json");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(BPETokenizer, MalformedFilesGiveErrorsNamingTheFileAndKey) {
  EXPECT_NE(error_of("{\"model\": ").find("bad/tokenizer.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("bad/tokenizer.json"), std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"type": "WordPiece", "vocab": {}}})").find("key \"model.type\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"normalizer": {"type": "NFC"}, "model": {"type": "BPE"}})")
                .find("key \"normalizer\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"type": "BPE", "vocab": {}, "merges": []},
                         "pre_tokenizer": {"type": "Metaspace"}})")
                .find("key \"pre_tokenizer\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"type": "BPE", "vocab": {}, "merges": []},
                         "pre_tokenizer": {"type": "Split", "behavior": "Isolated",
                                           "pattern": {"Regex": "(unclosed"}}})")
                .find("regex does not compile"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"type": "BPE", "vocab": {"a": "x"}, "merges": []}})")
                .find("malformed tokenizer.json"),
            std::string::npos);
}

}  // namespace
}  // namespace stride::data
