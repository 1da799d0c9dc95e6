// GGUF files as models (models/gguf/gguf.h): a tiny Llama that llama.cpp's
// own converter wrote in F32, BF16 and Q8_0 (and gguf-py in Q4_0) computes
// transformers' logits for the weights each file stores, with its linear
// layers' weights used as stored; its tokenizer gives transformers' ids.
// tests/golden/gguf/ comes from tools/gen_gguf_model_goldens.py.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "lm/generate.h"
#include "stride/autograd.h"
#include "stride/data/gguf_tokenizer.h"
#include "stride/io.h"
#include "stride/nn/layers.h"
#include "stride/ops.h"

#include "support/error_message.h"

namespace stride::gguf {
namespace {

namespace fs = std::filesystem;

fs::path golden(const std::string& name) {
  return fs::path(STRIDE_GOLDEN_DIR) / "gguf" / name;
}

const io::SafetensorsContents& outputs() {
  static const io::SafetensorsContents contents =
      io::load_safetensors(golden("outputs.safetensors").string());
  return contents;
}

struct StoredAs {
  const char* name;     // the file's weight type
  WeightFormat linear;  // how its linear layers are held
};

constexpr StoredAs kFiles[] = {{"f32", WeightFormat::Float32},
                               {"bf16", WeightFormat::BFloat16},
                               {"q8_0", WeightFormat::Int8},
                               {"q4_0", WeightFormat::Int4}};

// The largest |a - b| over the largest |b|.
double relative_error(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>() /
         b.abs().max().item<double>();
}

TEST(Gguf, ReadsTheLlamaConfigFromTheMetadata) {
  const io::GgufContents contents = io::map_gguf(golden("tiny_f32.gguf").string());
  const lm::ModelConfig m = read_config(contents, "tiny_f32.gguf");
  EXPECT_EQ(m.arch, "llama");
  EXPECT_EQ(m.vocab_size, 1000);
  EXPECT_EQ(m.d_model, 64);
  EXPECT_EQ(m.n_layers, 2);
  EXPECT_EQ(m.n_heads, 4);
  EXPECT_EQ(m.n_kv_heads, 2);
  EXPECT_EQ(m.hidden_dim(), 128);
  EXPECT_EQ(m.context, 128);
  EXPECT_EQ(m.norm_eps, double(1e-5f));  // stored as a float32
  EXPECT_DOUBLE_EQ(m.rope_theta, 10000.0);
  // llama.cpp's converter permutes q and k back to Meta's pairs.
  EXPECT_EQ(m.rope_style, "interleaved");
  EXPECT_FALSE(m.tie_embeddings);
}

// Each file computes transformers' logits for the weights it stores, its
// linear layers holding those weights as stored (Note [Weight formats]).
TEST(Gguf, ComputesTransformersLogitsForEachWeightType) {
  const Tensor ids = outputs().at("ids");
  for (const StoredAs& file : kFiles) {
    SCOPED_TRACE(file.name);
    const auto model = load(golden(std::string("tiny_") + file.name + ".gguf"));
    for (const auto& [name, module] : model->named_modules()) {
      if (const auto* linear = dynamic_cast<const nn::Linear*>(module.get())) {
        EXPECT_EQ(linear->weight_format(), file.linear) << name;
      }
    }
    NoGradGuard no_grad;
    const Tensor logits = model->forward(ids);
    const Tensor want = outputs().at(std::string("logits.") + file.name);
    ASSERT_EQ(logits.sizes(), want.sizes());
    EXPECT_LT(relative_error(logits, want), 2e-5);
  }
}

// Decoding with the KV cache gives the full forward's last logits, for the
// packed layers' dot products as for the float32 GEMM; within x's rounding
// where decoding quantizes it (int8 and int4 weights, Note [Quantized
// activations]: about 1/254 of each block's largest |x|, 0.6% here).
TEST(Gguf, DecodingWithTheCacheMatchesTheFullForward) {
  const Tensor ids = outputs().at("ids");
  const int64_t T = ids.size(1);
  for (const StoredAs& file : kFiles) {
    SCOPED_TRACE(file.name);
    const auto model = load(golden(std::string("tiny_") + file.name + ".gguf"));
    NoGradGuard no_grad;
    lm::KVCache cache = model->make_cache(1);
    model->forward(ids.narrow(1, 0, T - 1), cache);
    const Tensor last = model->forward(ids.narrow(1, T - 1, 1), cache);
    const Tensor full = model->forward(ids).narrow(1, T - 1, 1);
    EXPECT_LT(relative_error(last, full), is_blocked(file.linear) ? 1.5e-2 : 2e-5);
  }
}

TEST(Gguf, TokenizerGivesTransformersIds) {
  const io::GgufContents contents = io::map_gguf(golden("tiny_q8_0.gguf").string());
  const auto tokenizer = data::load_gguf_tokenizer(contents.header, "tiny_q8_0.gguf");
  EXPECT_EQ(tokenizer->vocab_size(), 1000);
  const std::vector<std::string> samples = {"Hello world", "  two  spaces",
                                            "First Citizen:\nBefore we proceed",
                                            "na\xC3\xAFve caf\xC3\xA9 \xE2\x98\x83"};
  for (size_t i = 0; i < samples.size(); ++i) {
    SCOPED_TRACE(samples[i]);
    const std::vector<int64_t> ids = tokenizer->encode(samples[i]);
    EXPECT_EQ(ids, outputs().at("encode." + std::to_string(i)).to_vector<int64_t>());
    EXPECT_EQ(tokenizer->decode(ids), samples[i]);
  }
  // A prompt starts with BOS (tokenizer.ggml.add_bos_token), as the golden ids do.
  EXPECT_EQ(tokenizer->prefix_ids(), std::vector<int64_t>{1});
  EXPECT_EQ(outputs().at("ids").to_vector<int64_t>().front(), 1);
}

// Both kinds of tokenizer metadata, from fuzz/make_corpus.py's seeds: a
// byte-level BPE ("gpt2": tokens, merges, a control token) and a
// SentencePiece one whose unknown piece is typed so.
TEST(Gguf, TokenizersOfBothKindsFromMetadata) {
  const fs::path corpus =
      fs::path(STRIDE_GOLDEN_DIR) / ".." / ".." / "fuzz" / "corpus" / "gguf_model";
  const io::GgufContents gpt2 = io::map_gguf((corpus / "gpt2_tokenizer.gguf").string());
  const auto bpe = data::load_gguf_tokenizer(gpt2.header, "gpt2_tokenizer.gguf");
  EXPECT_EQ(bpe->vocab_size(), 5);
  // "ab" merges; " a" is the space's byte (U+0120) and a; the control token
  // is matched whole.
  EXPECT_EQ(bpe->encode("ab a<|end|>"), (std::vector<int64_t>{2, 3, 0, 4}));
  EXPECT_EQ(bpe->decode({2, 3, 0, 4}), "ab a<|end|>");
  EXPECT_TRUE(bpe->prefix_ids().empty());  // add_bos_token defaults to false for gpt2
  const io::GgufContents llama = io::map_gguf((corpus / "llama_tokenizer.gguf").string());
  const auto sp = data::load_gguf_tokenizer(llama.header, "llama_tokenizer.gguf");
  EXPECT_EQ(sp->vocab_size(), 261);
  EXPECT_EQ(sp->prefix_ids(), std::vector<int64_t>{1});
  // Pieces where the vocabulary has them, bytes (byte fallback) elsewhere.
  const std::vector<int64_t> ids = sp->encode("ab\xE2\x98\x83");
  EXPECT_EQ(ids.front(), 259);  // U+2581 and a: the dummy prefix and a
  EXPECT_EQ(sp->decode(ids), "ab\xE2\x98\x83");
}

// A merge (or token) that is not UTF-8 (fuzz/regressions/gguf_model/, found
// by fuzz_gguf_model: it once escaped as a JSON library's exception) is
// refused with the key named.
TEST(Gguf, TokenizerRefusesTextThatIsNotUtf8) {
  const fs::path file = fs::path(STRIDE_GOLDEN_DIR) / ".." / ".." / "fuzz" / "regressions" /
                        "gguf_model" / "bpe_token_not_utf8.gguf";
  const io::GgufContents contents = io::map_gguf(file.string());
  const std::string message = testing::message_of<ValueError>(
      [&] { data::load_gguf_tokenizer(contents.header, "bpe_token_not_utf8.gguf"); });
  EXPECT_NE(message.find("tokenizer.ggml.merges\": entry 0 is not valid UTF-8"), std::string::npos)
      << message;
}

// ---- files that are not such a Llama ----

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// tiny_f32.gguf with `from` replaced by `to` (the same length, so that
// every offset stays valid), written to a temporary file.
fs::path patched(const std::string& from, const std::string& to) {
  std::string bytes = read_bytes(golden("tiny_f32.gguf"));
  const size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(from.size(), to.size());
  bytes.replace(at, from.size(), to);
  const fs::path out =
      fs::temp_directory_path() / ("stride_gguf_" + std::to_string(::getpid()) + "_" +
                                   std::to_string(std::hash<std::string>()(to)) + ".gguf");
  std::ofstream(out, std::ios::binary) << bytes;
  return out;
}

std::string load_error(const fs::path& path) {
  const std::string message = testing::message_of([&] { load(path); });
  fs::remove(path);
  return message;
}

TEST(Gguf, RefusesWhatIsNotALlamaWithTheKeyOrTensorNamed) {
  // general.architecture: a string (type 8) of 5 bytes.
  const std::string architecture("general.architecture\x08\0\0\0\x05\0\0\0\0\0\0\0", 32);
  const std::string other = load_error(patched(architecture + "llama", architecture + "qwen2"));
  EXPECT_NE(other.find("general.architecture"), std::string::npos) << other;
  EXPECT_NE(other.find("qwen2"), std::string::npos) << other;
  const std::string unexpected = load_error(patched("blk.1.attn_q.weight", "blk.1.attn_x.weight"));
  EXPECT_NE(unexpected.find("blk.1.attn_x.weight"), std::string::npos) << unexpected;
  EXPECT_NE(unexpected.find("not part of a Llama"), std::string::npos) << unexpected;
  const std::string extra = load_error(patched("blk.1.ffn_up.weight", "blk.7.ffn_up.weight"));
  EXPECT_NE(extra.find("blk.7.ffn_up.weight"), std::string::npos) << extra;
  // A file claiming 2^31 - 1 layers is refused by its tensor count, before
  // any module is built.
  const std::string block_count("llama.block_count\x04\0\0\0", 21);
  const std::string layers = load_error(patched(block_count + std::string("\x02\0\0\0", 4),
                                                block_count + std::string("\xff\xff\xff\x7f", 4)));
  EXPECT_NE(layers.find("2147483647 layers"), std::string::npos) << layers;
  EXPECT_THROW(load(golden("no_such_file.gguf")), IOError);
}

}  // namespace
}  // namespace stride::gguf
