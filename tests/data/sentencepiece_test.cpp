// SentencePiece against its Python reference: tools/gen_tokenizer_goldens.py
// trains a model with Llama 2's trainer settings on TinyShakespeare
// (tests/golden/tokenizers/llama2_style.model) and records the ids that the
// `sentencepiece` package, and transformers' LlamaTokenizer with it, give a
// varied text sample (Shakespeare, code, emoji and CJK through byte
// fallback, whitespace runs); stride must give exactly those ids, and decode
// them back to the text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "stride/data/bpe.h"
#include "stride/data/sentencepiece.h"
#include "stride/error.h"

namespace stride::data {
namespace {

const std::string kDir = std::string(STRIDE_GOLDEN_DIR) + "/tokenizers/";

const nlohmann::json& samples() {
  static const nlohmann::json j = nlohmann::json::parse(std::ifstream(kDir + "samples.json"));
  return j;
}

TEST(SentencePieceTokenizer, GivesTheIdsOfTheReference) {
  const auto tok = SentencePieceTokenizer::from_file(kDir + "llama2_style.model");
  const auto& texts = samples()["samples"];
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string text = texts[i].get<std::string>();
    const auto want = samples()["llama2_style"][i].get<std::vector<int64_t>>();
    const std::vector<int64_t> got = tok.encode(text);
    EXPECT_EQ(got, want) << "sample " << i << ": \"" << text << "\"";
    EXPECT_EQ(tok.decode(got), text) << "sample " << i;
  }
}

TEST(SentencePieceTokenizer, SpecialIdsAndVocabulary) {
  const auto tok = SentencePieceTokenizer::from_file(kDir + "llama2_style.model");
  EXPECT_EQ(tok.vocab_size(), 1000);
  EXPECT_EQ(tok.bos_id(), std::optional<int64_t>(1));
  EXPECT_EQ(tok.eos_id(), std::optional<int64_t>(2));
  EXPECT_EQ(tok.token_to_id("<s>"), std::optional<int64_t>(1));
  EXPECT_EQ(tok.prefix_ids(), std::vector<int64_t>{1});                    // LlamaTokenizer's BOS
  EXPECT_EQ(tok.token_to_id("<0x41>"), std::optional<int64_t>(3 + 0x41));  // byte fallback
  EXPECT_EQ(tok.token_to_id("no such piece"), std::nullopt);
  EXPECT_THROW(tok.decode({tok.vocab_size()}), ValueError);
  EXPECT_THROW(tok.decode({-1}), ValueError);
}

std::string error_of(std::string_view bytes) {
  try {
    SentencePieceTokenizer::from_bytes(bytes, "bad/tokenizer.model");
  } catch (const IOError& e) {
    return e.what();
  }
  return "no IOError";
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Malformed model files are refused naming the file, never crash: empty,
// text, a truncated model, fuzz findings (a piece of zero length, on which
// the library throws from its trie), and the model with bytes flipped
// throughout.
TEST(SentencePieceTokenizer, MalformedModelsAreRefusedNamingTheFile) {
  const std::string model = file_bytes(kDir + "llama2_style.model");
  const std::string zero_length_piece = file_bytes(
      std::string(STRIDE_SOURCE_DIR) + "/fuzz/regressions/sentencepiece/zero_length_piece");
  ASSERT_FALSE(zero_length_piece.empty());
  for (const std::string& bytes :
       {std::string(), std::string("{\"model\": {}}"), model.substr(0, model.size() / 2),
        model.substr(0, 7), zero_length_piece}) {
    const std::string e = error_of(bytes);
    EXPECT_NE(e.find("bad/tokenizer.model: "), std::string::npos) << e;
  }
  // Flipped bytes may still parse as some model; each must load or be refused.
  for (size_t i = 0; i < model.size(); i += 97) {
    std::string bytes = model;
    bytes[i] = char(bytes[i] ^ 0x5a);
    try {
      const auto tok = SentencePieceTokenizer::from_bytes(bytes, "bad/tokenizer.model");
      tok.decode(tok.encode("To be, or not to be"));
    } catch (const Error&) {
    }
  }
  EXPECT_THROW(SentencePieceTokenizer::from_file(kDir + "no_such.model"), IOError);
}

// A model directory's tokenizer: tokenizer.model where there is one (the
// reference a tokenizer.json was converted from), else tokenizer.json.
TEST(LoadTokenizer, PrefersTheSentencePieceModel) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("stride_tok_" + std::to_string(getpid()));
  fs::create_directories(dir);
  EXPECT_THROW(load_tokenizer(dir.string()), IOError);
  fs::copy_file(kDir + "gpt2_style.json", dir / "tokenizer.json");
  EXPECT_NE(dynamic_cast<BPETokenizer*>(load_tokenizer(dir.string()).get()), nullptr);
  fs::copy_file(kDir + "llama2_style.model", dir / "tokenizer.model");
  const auto tok = load_tokenizer(dir.string());
  EXPECT_NE(dynamic_cast<SentencePieceTokenizer*>(tok.get()), nullptr);
  EXPECT_EQ(
      tok->encode("First Citizen:"),
      SentencePieceTokenizer::from_file(kDir + "llama2_style.model").encode("First Citizen:"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace stride::data
