// BERT's masked language model against Hugging Face transformers:
// tools/gen_bert_goldens.py saves tiny random BertForMaskedLMs with
// transformers 4.57 (bert_tiny) and 5 (bert5_tiny) and records their
// outputs on a padded batch with two token types; stride loads the
// directories (models/hf/hf.h) and must agree to float32 tolerance. Then
// what loading accepts and refuses, and the masked-token evaluation.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "bert/model.h"
#include "hf/hf.h"
#include "lm/generate.h"
#include "lm/masked_eval.h"
#include "lm/registry.h"
#include "stride/autograd.h"
#include "stride/io.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::bert {
namespace {

namespace fs = std::filesystem;

fs::path golden(const std::string& name) {
  return fs::path(STRIDE_GOLDEN_DIR) / "hf" / name;
}

const io::SafetensorsContents& outputs(const std::string& family) {
  static std::map<std::string, io::SafetensorsContents> files;
  auto it = files.find(family);
  if (it == files.end()) {
    const fs::path file = golden(family + "_outputs.safetensors");
    it = files.emplace(family, io::load_safetensors(file.string())).first;
  }
  return it->second;
}

const Tensor& output(const std::string& family, const std::string& what) {
  return outputs(family).at(what);
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
}

std::shared_ptr<BertForMaskedLM> load_bert(const fs::path& dir) {
  auto model = std::dynamic_pointer_cast<BertForMaskedLM>(hf::load(dir));
  EXPECT_NE(model, nullptr) << dir << " did not load as a BertForMaskedLM";
  return model;
}

Inputs golden_inputs(const std::string& family) {
  return {output(family, "token_type_ids"), output(family, "attention_mask")};
}

class BertGolden : public testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Transformers,
                         BertGolden,
                         testing::Values("bert_tiny", "bert5_tiny"),
                         [](const auto& name) { return name.param; });

// Logits, masked-LM loss, every layer's attention probabilities and the
// last hidden state, on a batch with padding and two token types.
TEST_P(BertGolden, MatchesTransformersWithPaddingAndTokenTypes) {
  const std::string& family = GetParam();
  auto model = load_bert(golden(family));
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(model->is_causal());
  EXPECT_EQ(model->config().type_vocab_size, 2);
  const Tensor& ids = output(family, "ids");
  NoGradGuard no_grad;
  model->record_attention(true);
  const Tensor hidden = model->encode(ids, golden_inputs(family));
  const Tensor logits = model->cls->predictions->call(hidden);
  EXPECT_LE(max_abs_diff(logits, output(family, "mlm/logits")), 1e-4);
  EXPECT_LE(max_abs_diff(hidden, output(family, "mlm/hidden.2")), 1e-5);
  const double loss = nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                                    output(family, "labels").reshape({-1}))
                          .item<double>();
  EXPECT_NEAR(loss, output(family, "mlm/loss").item<double>(), 1e-5);
  const auto& maps = model->attention_maps();
  ASSERT_EQ(maps.size(), 2u);
  for (size_t l = 0; l < maps.size(); ++l) {
    EXPECT_LE(max_abs_diff(maps[l], output(family, "mlm/attn." + std::to_string(l))), 1e-5)
        << "layer " << l;
  }
}

// The fused attention (no probabilities asked for) computes what the
// written-out one does.
TEST_P(BertGolden, FusedAttentionGivesTheRecordedLogits) {
  const std::string& family = GetParam();
  auto model = load_bert(golden(family));
  ASSERT_NE(model, nullptr);
  const Tensor ids = output(family, "ids").slice(0, 0, 1);  // row 0 has no padding
  const Inputs inputs{output(family, "token_type_ids").slice(0, 0, 1), Tensor()};
  NoGradGuard no_grad;
  const Tensor fused = model->forward(ids, inputs);
  EXPECT_LE(max_abs_diff(fused, output(family, "mlm/logits").slice(0, 0, 1)), 1e-4);
}

// Padding changes nothing at the real tokens: a padded row's logits there
// are the row's alone.
TEST(Bert, PaddedRowEqualsTheRowAlone) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  const Tensor& ids = output("bert_tiny", "ids");
  const Tensor types = output("bert_tiny", "token_type_ids");
  NoGradGuard no_grad;
  const Tensor padded = model->forward(ids, golden_inputs("bert_tiny"));
  // Row 1 holds 12 tokens, then padding.
  const Tensor alone =
      model->forward(ids.slice(0, 1, 2).slice(1, 0, 12).contiguous(),
                     Inputs{types.slice(0, 1, 2).slice(1, 0, 12).contiguous(), Tensor()});
  EXPECT_LE(max_abs_diff(padded.slice(0, 1, 2).slice(1, 0, 12), alone), 1e-5);
}

TEST(Bert, MissingTokenTypesAreTypeZero) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  const Tensor ids = output("bert_tiny", "ids");
  NoGradGuard no_grad;
  EXPECT_LE(max_abs_diff(model->forward(ids), model->forward(ids, {zeros_like(ids), Tensor()})),
            1e-6);
}

// The masked-token loss's logits: the head on the chosen rows alone.
TEST(Bert, LogitsAtRowsAreTheForwardsRows) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  const Tensor ids = output("bert_tiny", "ids");
  const Tensor rows = tensor<int64_t>({0, 5, 17, 31}, {4});
  NoGradGuard no_grad;
  const Tensor all = model->forward(ids).reshape({-1, model->config().vocab_size});
  EXPECT_LE(max_abs_diff(model->logits_at(ids, rows), all.index_select(0, rows)), 1e-5);
}

TEST(Bert, InputsOfAnotherShapeAreRefused) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  const Tensor ids = output("bert_tiny", "ids");
  try {
    model->forward(ids, {zeros({2, 15}, kInt64), Tensor()});
    FAIL() << "token types of another shape were accepted";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("token_type_ids must have the ids' shape"),
              std::string::npos)
        << e.what();
  }
}

// A directory with `tensors` as its weights, beside bert_tiny's config.json.
fs::path directory_with(const std::string& name, const io::NamedTensors& tensors) {
  const fs::path dir =
      fs::temp_directory_path() / ("stride_bert_" + name + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(golden("bert_tiny") / "config.json", dir / "config.json");
  io::save_safetensors((dir / "model.safetensors").string(), tensors, {{"format", "pt"}});
  return dir;
}

// bert-base-uncased's own model.safetensors: Google's names (LayerNorm
// gamma and beta), the pooler and the next-sentence head of
// BertForPreTraining, the position ids and the decoder's bias.
TEST(Bert, LoadsOriginalCheckpointNamesAndSkipsOtherHeads) {
  const io::SafetensorsContents original =
      io::load_safetensors((golden("bert_tiny") / "model.safetensors").string());
  io::NamedTensors renamed;
  for (const auto& [name, t] : original.tensors) {
    std::string old = name;
    if (old.ends_with("LayerNorm.weight")) old.replace(old.size() - 6, 6, "gamma");
    if (old.ends_with("LayerNorm.bias")) old.replace(old.size() - 4, 4, "beta");
    renamed.emplace_back(old, t);
    if (name == "cls.predictions.bias") renamed.emplace_back("cls.predictions.decoder.bias", t);
  }
  renamed.emplace_back("bert.pooler.dense.weight", zeros({32, 32}));
  renamed.emplace_back("bert.pooler.dense.bias", zeros({32}));
  renamed.emplace_back("cls.seq_relationship.weight", zeros({2, 32}));
  renamed.emplace_back("cls.seq_relationship.bias", zeros({2}));
  renamed.emplace_back("bert.embeddings.position_ids", arange(0, 64, 1, kInt64).view({1, 64}));
  const fs::path dir = directory_with("google_names", renamed);
  auto model = load_bert(dir);
  auto reference = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  const Tensor ids = output("bert_tiny", "ids");
  NoGradGuard no_grad;
  EXPECT_TRUE(equal(model->forward(ids), reference->forward(ids)));
  fs::remove_all(dir);
}

std::string load_error(const fs::path& dir) {
  try {
    hf::load(dir);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(Bert, ABertWithoutTheMaskedLMHeadIsRefusedWithASentence) {
  const std::string e = load_error(golden("bert_tiny_base"));
  EXPECT_NE(e.find("\"BertModel\" is a BERT without the masked-language-model head"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("stride.models.from_pretrained"), std::string::npos) << e;
}

TEST(Bert, SettingsStrideDoesNotComputeAreRefused) {
  for (const auto& [key, value] :
       {std::pair{"hidden_act", nlohmann::json("relu")},
        std::pair{"position_embedding_type", nlohmann::json("relative_key")},
        std::pair{"is_decoder", nlohmann::json(true)},
        std::pair{"add_cross_attention", nlohmann::json(true)}}) {
    const fs::path dir = fs::temp_directory_path() / ("stride_bert_cfg" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::copy(golden("bert_tiny"), dir);
    nlohmann::json config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    config[key] = value;
    std::ofstream(dir / "config.json") << config.dump(2);
    const std::string e = load_error(dir);
    EXPECT_NE(e.find(std::string("key \"") + key + "\""), std::string::npos) << e;
    fs::remove_all(dir);
  }
}

TEST(Bert, ExportRoundTripsToTheSameLogits) {
  auto model = load_bert(golden("bert5_tiny"));
  ASSERT_NE(model, nullptr);
  const fs::path dir =
      fs::temp_directory_path() / ("stride_bert_export" + std::to_string(getpid()));
  fs::remove_all(dir);
  hf::save(*model, dir);
  const nlohmann::json config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  EXPECT_EQ(config["architectures"][0], "BertForMaskedLM");
  EXPECT_EQ(config["type_vocab_size"], 2);
  // Tied, the decoder is the word embedding and is left out, as
  // save_pretrained leaves it.
  const io::SafetensorsContents saved = io::load_safetensors((dir / "model.safetensors").string());
  for (const auto& [name, t] : saved.tensors) EXPECT_NE(name, "cls.predictions.decoder.weight");
  auto reloaded = load_bert(dir);
  const Tensor ids = output("bert5_tiny", "ids");
  NoGradGuard no_grad;
  EXPECT_TRUE(equal(reloaded->forward(ids, golden_inputs("bert5_tiny")),
                    model->forward(ids, golden_inputs("bert5_tiny"))));
  fs::remove_all(dir);
}

TEST(Bert, GenerateAndTrainRefuseAnEncoder) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  try {
    lm::generate(*model, {101, 7592}, lm::GenerateOptions{});
    FAIL() << "generate ran an encoder";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("generate: arch bert is an encoder"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(lm::require_causal(model->config(), "train"), ValueError);
}

TEST(Bert, ConfigHasTokenTypesAndOtherArchitecturesRefuseThem) {
  lm::ModelConfig config = hf::read_config(golden("bert_tiny"));
  EXPECT_EQ(config.arch, "bert");
  EXPECT_EQ(config.hidden_dim(), 64);
  // A saved config keeps type_vocab_size; one from before it had the key
  // means 0.
  const lm::RunConfig run{.name = "bert", .model = config, .train = {}};
  EXPECT_EQ(lm::parse_saved_config(lm::to_json(run), "saved").model.type_vocab_size, 2);
  lm::ModelConfig llama;
  llama.type_vocab_size = 2;
  EXPECT_THROW(llama.validate(), lm::ConfigError);
  config.type_vocab_size = 0;
  EXPECT_THROW(config.validate(), lm::ConfigError);
}

// ---- the masked-token evaluation ----

lm::MaskedEvalOptions bert_options() {
  lm::MaskedEvalOptions o;
  o.mask_id = 103;
  o.prefix = {101};
  o.suffix = {102};
  o.seed = 5;
  o.context = 16;
  return o;
}

data::TokenDataset random_tokens(int64_t n) {
  Generator gen(3);
  return data::TokenDataset(randint(110, 1000, {n}, kInt64, &gen));
}

TEST(MaskedEval, MasksFifteenPercentOfEachWindowAndIsDeterministic) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  const data::TokenDataset data = random_tokens(2000);
  const int64_t n = data.bounds(data::Split::Val).size();
  const lm::MaskedLoss r =
      lm::evaluate_masked_split(*model, data, data::Split::Val, bert_options());
  // Windows of 14 text tokens: round(0.15 * 14) = 2 masked in each, and in
  // the shorter last window its own share (at least one).
  const int64_t full = n / 14, rest = n % 14;
  EXPECT_EQ(r.windows, full + (rest > 0 ? 1 : 0));
  EXPECT_EQ(r.masked,
            2 * full + (rest > 0 ? std::max<int64_t>(1, std::llround(0.15 * double(rest))) : 0));
  EXPECT_GT(r.loss, 0);
  EXPECT_GE(r.accuracy, 0);
  EXPECT_LE(r.accuracy, 1);
  const lm::MaskedLoss again =
      lm::evaluate_masked_split(*model, data, data::Split::Val, bert_options());
  EXPECT_EQ(again.loss, r.loss);
  lm::MaskedEvalOptions other = bert_options();
  other.seed = 6;
  EXPECT_NE(lm::evaluate_masked_split(*model, data, data::Split::Val, other).loss, r.loss);
}

TEST(MaskedEval, BatchingChangesNothing) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  const data::TokenDataset data = random_tokens(3000);
  lm::MaskedEvalOptions one = bert_options(), many = bert_options();
  one.batch_size = 1;
  many.batch_size = 7;
  const lm::MaskedLoss a = lm::evaluate_masked_split(*model, data, data::Split::Val, one);
  const lm::MaskedLoss b = lm::evaluate_masked_split(*model, data, data::Split::Val, many);
  EXPECT_EQ(a.masked, b.masked);
  EXPECT_NEAR(a.loss, b.loss, 1e-5);
  EXPECT_EQ(a.accuracy, b.accuracy);
}

// With every text token masked the positions are known: the loss is the
// cross entropy of the text at them, computed here by hand.
TEST(MaskedEval, LossIsTheCrossEntropyAtTheMaskedTokens) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  const data::TokenDataset data = random_tokens(200);
  const Tensor text = data.split(data::Split::Val).slice(0, 0, 14);
  lm::MaskedEvalOptions o = bert_options();
  o.fraction = 1.0;
  o.max_windows = 1;
  const lm::MaskedLoss r = lm::evaluate_masked_split(*model, data, data::Split::Val, o);
  EXPECT_EQ(r.masked, 14);
  std::vector<int64_t> ids = {101};
  ids.insert(ids.end(), 14, 103);
  ids.push_back(102);
  NoGradGuard no_grad;
  const Tensor logits = model->forward(tensor<int64_t>(ids, {1, 16})).select(0, 0).slice(0, 1, 15);
  EXPECT_NEAR(r.loss, nn::functional::cross_entropy(logits, text).item<double>(), 1e-5);
}

TEST(MaskedEval, AContextWithoutRoomForTextOrANullFractionIsRefused) {
  auto model = load_bert(golden("bert_tiny"));
  ASSERT_NE(model, nullptr);
  lm::MaskedEvalOptions o = bert_options();
  o.context = 2;
  EXPECT_THROW(lm::evaluate_masked_split(*model, random_tokens(100), data::Split::Val, o),
               ValueError);
  o = bert_options();
  o.fraction = 0;
  EXPECT_THROW(lm::evaluate_masked_split(*model, random_tokens(100), data::Split::Val, o),
               ValueError);
}

}  // namespace
}  // namespace stride::bert
