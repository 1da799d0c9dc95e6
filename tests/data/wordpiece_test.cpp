// WordPiece against Hugging Face `tokenizers` and transformers:
// tools/gen_tokenizer_goldens.py trains BERT-style tokenizers (lowercased
// with accents stripped, and cased) on TinyShakespeare and records, for
// texts with BERT's edge cases (added tokens in the text, controls,
// Chinese characters, Unicode punctuation, combining marks, over-long
// words), the ids with [CLS] and [SEP], the decoded texts and a pair's
// token types, as BertTokenizerFast and BertTokenizer give them.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "stride/data/wordpiece.h"
#include "stride/error.h"

namespace stride::data {
namespace {

const std::string kDir = std::string(STRIDE_GOLDEN_DIR) + "/tokenizers/";

const nlohmann::json& samples() {
  static const nlohmann::json j = nlohmann::json::parse(std::ifstream(kDir + "samples.json"));
  return j;
}

std::vector<int64_t> with_special_tokens(const Tokenizer& tok, const std::string& text) {
  const std::vector<int64_t> ids = tok.encode(text);
  return tok.with_special_tokens(ids, nullptr).ids;
}

void expect_reference(const Tokenizer& tok, const std::string& name) {
  const auto& texts = samples()["bert_samples"];
  const auto& golden = samples()[name];
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string text = texts[i].get<std::string>();
    const auto want = golden["ids"][i].get<std::vector<int64_t>>();
    EXPECT_EQ(with_special_tokens(tok, text), want) << name << " on sample " << i << ": " << text;
    EXPECT_EQ(tok.decode(want), golden["decoded"][i].get<std::string>()) << name << " " << i;
  }
  const std::vector<int64_t> first = tok.encode("To be, or not to be:");
  const std::vector<int64_t> second = tok.encode("that is the question.");
  const Tokenizer::WithSpecialTokens pair = tok.with_special_tokens(first, &second);
  EXPECT_EQ(pair.ids, golden["pair"]["ids"].get<std::vector<int64_t>>());
  EXPECT_EQ(pair.type_ids, golden["pair"]["type_ids"].get<std::vector<int64_t>>());
}

TEST(WordPieceTokenizer, UncasedGivesTheIdsOfTransformers) {
  expect_reference(WordPieceTokenizer::from_file(kDir + "bert_uncased.json"), "bert_uncased");
}

TEST(WordPieceTokenizer, CasedGivesTheIdsOfTransformers) {
  expect_reference(WordPieceTokenizer::from_file(kDir + "bert_cased.json"), "bert_cased");
}

// A directory with only a vocab.txt, as older BERT checkpoints have:
// transformers' BertTokenizer gives the same ids as the tokenizer.json.
TEST(WordPieceTokenizer, AVocabTxtGivesTheIdsOfItsTokenizerJson) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "wordpiece_vocab";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kDir + "bert_uncased.vocab.txt", dir / "vocab.txt",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "tokenizer_config.json") << R"({"do_lower_case": true})";
  const std::unique_ptr<Tokenizer> tok = load_tokenizer(dir.string());
  expect_reference(*tok, "bert_uncased");
  EXPECT_EQ(tok->prefix_ids(), std::vector<int64_t>{2});
  EXPECT_EQ(tok->special_ids().size(), 5u);
  // Cased: the configuration's do_lower_case is read.
  std::ofstream(dir / "tokenizer_config.json") << R"({"do_lower_case": false})";
  EXPECT_NE(load_tokenizer(dir.string())->encode("HELLO"), tok->encode("HELLO"));
}

// The dispatch by the tokenizer.json's model type.
TEST(WordPieceTokenizer, LoadTokenizerReadsAWordPieceTokenizerJson) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "wordpiece_json";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kDir + "bert_cased.json", dir / "tokenizer.json",
                             std::filesystem::copy_options::overwrite_existing);
  const std::unique_ptr<Tokenizer> tok = load_tokenizer(dir.string());
  EXPECT_NE(dynamic_cast<const WordPieceTokenizer*>(tok.get()), nullptr);
  EXPECT_EQ(tok->encode("[MASK]"), std::vector<int64_t>{4});
}

std::string error_of(const std::string& json_text) {
  try {
    WordPieceTokenizer::from_json(json_text, "bad/tokenizer.json");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(WordPieceTokenizer, MalformedFilesGiveErrorsNamingTheFileAndKey) {
  const std::string model = R"("model": {"type": "WordPiece", "unk_token": "[UNK]",
                                         "vocab": {"[UNK]": 0, "a": 1}})";
  const std::string bert = R"("pre_tokenizer": {"type": "BertPreTokenizer"})";
  EXPECT_EQ(error_of("{" + model + ", " + bert + "}"), "no error");
  EXPECT_NE(error_of("{\"model\": ").find("bad/tokenizer.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"type": "BPE"}})").find("key \"model.type\""),
            std::string::npos);
  EXPECT_NE(error_of("{" + model + "}").find("key \"pre_tokenizer\""), std::string::npos);
  EXPECT_NE(error_of("{" + model + ", " + bert + R"(, "normalizer": {"type": "NFC"}})")
                .find("key \"normalizer\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}, )" + bert + "}")
                .find("key \"model.unk_token\""),
            std::string::npos);
  EXPECT_NE(error_of("{" + model + ", " + bert + R"(, "post_processor": {"type": "BertProcessing",
                     "cls": ["[CLS]", 7], "sep": ["[SEP]", 1]}})")
                .find("special token id 7"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"type": "WordPiece", "vocab": {"a": "x"}}, )" + bert + "}")
                .find("malformed tokenizer.json"),
            std::string::npos);
  EXPECT_THROW(WordPieceTokenizer::from_file(kDir + "bert_cased.json").decode({100000}),
               ValueError);
}

// Ill-formed UTF-8 reads as U+FFFD, which BERT's normalizer drops.
TEST(WordPieceTokenizer, IllFormedBytesAreDropped) {
  const WordPieceTokenizer tok = WordPieceTokenizer::from_file(kDir + "bert_uncased.json");
  EXPECT_EQ(tok.encode("the\xff\xfe king"), tok.encode("the king"));
}

// A file may allow words of any length (max_input_chars_per_word): a word
// of a million characters takes time in proportion to its length, as a
// piece is never longer than the vocabulary's longest token. Quadratic, it
// took minutes; the bound only catches that kind.
TEST(WordPieceTokenizer, ALongWordIsLinear) {
  std::ifstream in(kDir + "bert_uncased.json");
  nlohmann::json file = nlohmann::json::parse(in);
  file["model"]["max_input_chars_per_word"] = 10'000'000;
  const WordPieceTokenizer tok = WordPieceTokenizer::from_json(file.dump(), "long.json");
  std::string word;
  while (word.size() < 1'000'000) word += "unaffable";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int64_t> ids = tok.encode(word);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20.0);
  EXPECT_GT(ids.size(), 100'000u);  // pieces, not one [UNK]
}

}  // namespace
}  // namespace stride::data
