// The tokenizer of a GGUF file (include/stride/data/gguf_tokenizer.h):
// the file's vocabulary handed to the implementations stride already runs,
// in the forms they read: a SentencePiece model (its protobuf, written
// here field by field) or a tokenizer.json.
#include "stride/data/gguf_tokenizer.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "stride/data/bpe.h"
#include "stride/data/sentencepiece.h"
#include "stride/error.h"

namespace stride::data {

namespace {

using json = nlohmann::json;

// The GGUF token types, which are SentencePiece's piece types.
constexpr int64_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6;

class Vocabulary {
 public:
  Vocabulary(const io::GgufHeader& header, std::string file)
      : header_(header), file_(std::move(file)) {}

  [[noreturn]] void refuse(const std::string& key, const std::string& why) const {
    throw ValueError(file_ + ": metadata \"" + key + "\": " + why);
  }

  const std::vector<io::GgufValue>& array(const std::string& key,
                                          io::GgufValueType element,
                                          bool required = true) const {
    static const std::vector<io::GgufValue> kNone;
    const io::GgufValue* v = header_.find(key);
    if (v == nullptr) {
      if (required) refuse(key, "missing; the file carries no tokenizer stride can run");
      return kNone;
    }
    if (v->type != io::GgufValueType::Array || v->element_type != element) {
      refuse(key, "expected an array of " + std::string(io::gguf_value_type_name(element)));
    }
    return std::get<std::vector<io::GgufValue>>(v->value);
  }

  // The strings of an array; each must be valid UTF-8 (a vocabulary's
  // tokens and merges are text).
  std::vector<std::string> strings(const std::string& key, bool required = true) const {
    std::vector<std::string> out;
    for (const io::GgufValue& v : array(key, io::GgufValueType::String, required)) {
      const auto& text = std::get<std::string>(v.value);
      if (valid_utf8(text) != text) {
        refuse(key, "entry " + std::to_string(out.size()) + " is not valid UTF-8");
      }
      out.push_back(text);
    }
    return out;
  }

  // Token types (any integer array), each 1..6; kNormal for every token
  // when the file has none.
  std::vector<int64_t> types(size_t tokens) const {
    const io::GgufValue* v = header_.find("tokenizer.ggml.token_type");
    std::vector<int64_t> out(tokens, kNormal);
    if (v == nullptr) return out;
    if (v->type != io::GgufValueType::Array)
      refuse("tokenizer.ggml.token_type", "expected an array");
    const auto& items = std::get<std::vector<io::GgufValue>>(v->value);
    if (items.size() != tokens) {
      refuse("tokenizer.ggml.token_type",
             std::to_string(items.size()) + " types for " + std::to_string(tokens) + " tokens");
    }
    for (size_t i = 0; i < tokens; ++i) {
      const int64_t* t = std::get_if<int64_t>(&items[i].value);
      const uint64_t* u = std::get_if<uint64_t>(&items[i].value);
      const int64_t type = t ? *t : (u && *u < 64 ? int64_t(*u) : -1);
      if (type < 1 || type > 6) refuse("tokenizer.ggml.token_type", "a type outside 1..6");
      out[i] = type;
    }
    return out;
  }

  std::vector<float> scores(size_t tokens) const {
    std::vector<float> out(tokens, 0.0f);
    const auto& items = array("tokenizer.ggml.scores", io::GgufValueType::Float32, false);
    if (items.empty()) return out;
    if (items.size() != tokens) {
      refuse("tokenizer.ggml.scores",
             std::to_string(items.size()) + " scores for " + std::to_string(tokens) + " tokens");
    }
    for (size_t i = 0; i < tokens; ++i) out[i] = float(std::get<double>(items[i].value));
    return out;
  }

  // A token id (an unsigned or signed integer inside the vocabulary).
  std::optional<int64_t> id(const std::string& key, size_t tokens) const {
    const io::GgufValue* v = header_.find(key);
    if (v == nullptr) return std::nullopt;
    const int64_t* s = std::get_if<int64_t>(&v->value);
    const uint64_t* u = std::get_if<uint64_t>(&v->value);
    const int64_t value = s ? *s : (u && *u < tokens ? int64_t(*u) : -1);
    if (value < 0 || value >= int64_t(tokens))
      refuse(key, "not the id of one of the " + std::to_string(tokens) + " tokens");
    return value;
  }

  std::optional<bool> flag(const std::string& key) const {
    const io::GgufValue* v = header_.find(key);
    if (v == nullptr) return std::nullopt;
    if (const bool* b = std::get_if<bool>(&v->value)) return *b;
    refuse(key, "expected a bool");
  }

  std::string text(const std::string& key, const std::string& fallback) const {
    const io::GgufValue* v = header_.find(key);
    if (v == nullptr) return fallback;
    if (const auto* s = std::get_if<std::string>(&v->value)) return *s;
    refuse(key, "expected a string");
  }

  const std::string& file() const { return file_; }

 private:
  const io::GgufHeader& header_;
  std::string file_;
};

// ---- a SentencePiece model, serialized (sentencepiece_model.proto) ----

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += char((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += char(v);
}

void put_tag(std::string& out, uint32_t field, uint32_t wire) {
  put_varint(out, (uint64_t(field) << 3) | wire);
}

void put_int(std::string& out, uint32_t field, int64_t v) {
  put_tag(out, field, 0);
  put_varint(out, uint64_t(v));  // a negative int32 is ten bytes, as protobuf writes it
}

void put_bytes(std::string& out, uint32_t field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

void put_float(std::string& out, uint32_t field, float v) {
  put_tag(out, field, 5);
  char bytes[4];
  std::memcpy(bytes, &v, 4);
  out.append(bytes, 4);
}

// Llama's SentencePiece model as the file describes it: BPE over its
// pieces with their scores and types, byte fallback where it has byte
// pieces, the identity normalizer, a dummy prefix unless
// tokenizer.ggml.add_space_prefix is false.
std::string sentencepiece_model(const Vocabulary& vocab) {
  const std::vector<std::string> tokens = vocab.strings("tokenizer.ggml.tokens");
  std::vector<int64_t> types = vocab.types(tokens.size());
  const std::vector<float> scores = vocab.scores(tokens.size());
  // SentencePiece needs one unknown piece. llama.cpp's converter may mark
  // <unk> a control token; llama.cpp takes tokenizer.ggml.unknown_token_id,
  // else a piece typed unknown, else id 0, and so does this.
  const std::optional<int64_t> unk_key = vocab.id("tokenizer.ggml.unknown_token_id", tokens.size());
  int64_t unk = 0;
  if (unk_key) {
    unk = *unk_key;
  } else {
    const auto typed = std::find(types.begin(), types.end(), kUnknown);
    unk = typed != types.end() ? int64_t(typed - types.begin()) : 0;
  }
  if (tokens.empty()) vocab.refuse("tokenizer.ggml.tokens", "the vocabulary is empty");
  for (int64_t& type : types) {
    if (type == kUnknown) type = kControl;
  }
  types[size_t(unk)] = kUnknown;
  std::string model;
  bool bytes = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string piece;
    put_bytes(piece, 1, tokens[i]);
    put_float(piece, 2, scores[i]);
    put_int(piece, 3, types[i]);
    put_bytes(model, 1, piece);
    bytes = bytes || types[i] == kByte;
  }
  auto piece_of = [&](const char* key) {
    std::optional<int64_t> id = vocab.id(key, tokens.size());
    if (std::string_view(key) == "tokenizer.ggml.unknown_token_id") id = unk;
    return std::make_pair(id.value_or(-1), id ? tokens[size_t(*id)] : std::string());
  };
  std::string trainer;
  put_int(trainer, 3, 2);  // model_type: BPE
  put_int(trainer, 4, int64_t(tokens.size()));
  put_int(trainer, 35, bytes ? 1 : 0);  // byte_fallback
  const std::pair<const char*, std::pair<uint32_t, uint32_t>> specials[] = {
      {"tokenizer.ggml.unknown_token_id", {40, 45}},
      {"tokenizer.ggml.bos_token_id", {41, 46}},
      {"tokenizer.ggml.eos_token_id", {42, 47}},
      {"tokenizer.ggml.padding_token_id", {43, 48}},
  };
  for (const auto& [key, fields] : specials) {
    const auto [id, piece] = piece_of(key);
    put_int(trainer, fields.first, id);
    if (id >= 0) put_bytes(trainer, fields.second, piece);
  }
  put_bytes(model, 2, trainer);
  std::string normalizer;
  put_bytes(normalizer, 1, "identity");
  put_int(normalizer, 3, vocab.flag("tokenizer.ggml.add_space_prefix").value_or(true) ? 1 : 0);
  put_int(normalizer, 4, 0);  // remove_extra_whitespaces
  put_bytes(model, 3, normalizer);
  return model;
}

// ---- byte-level BPE, as a tokenizer.json ----

json pre_tokenizer(const Vocabulary& vocab) {
  const std::string pre = vocab.text("tokenizer.ggml.pre", "default");
  if (pre == "gpt2" || pre == "default") {
    return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  }
  if (pre == "llama-bpe" || pre == "llama3") {
    const std::string regex =
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
        "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    return {{"type", "Sequence"},
            {"pretokenizers",
             json::array(
                 {{{"type", "Split"},
                   {"pattern", {{"Regex", regex}}},
                   {"behavior", "Isolated"},
                   {"invert", false}},
                  {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}};
  }
  vocab.refuse("tokenizer.ggml.pre", "the pre-tokenizer \"" + pre +
                                         "\" is not implemented (stride runs \"gpt2\" and "
                                         "\"llama-bpe\")");
}

std::string bpe_json(const Vocabulary& vocab) {
  const std::vector<std::string> tokens = vocab.strings("tokenizer.ggml.tokens");
  const std::vector<int64_t> types = vocab.types(tokens.size());
  json model = {{"type", "BPE"}, {"vocab", json::object()}, {"merges", json::array()}};
  json added = json::array();
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (types[i] == kControl || types[i] == kUserDefined) {
      added.push_back({{"id", int64_t(i)}, {"content", tokens[i]}, {"special", true}});
    } else {
      model["vocab"][tokens[i]] = int64_t(i);
    }
  }
  for (const std::string& m : vocab.strings("tokenizer.ggml.merges")) model["merges"].push_back(m);
  model["ignore_merges"] = vocab.text("tokenizer.ggml.pre", "default") == "llama-bpe";
  json root = {{"model", model},
               {"added_tokens", added},
               {"pre_tokenizer", pre_tokenizer(vocab)},
               {"decoder", {{"type", "ByteLevel"}}}};
  return root.dump();
}

// A tokenizer with the prefix the file asks for (tokenizer.ggml.add_bos_token),
// whatever the implementation's own default.
class WithPrefix final : public Tokenizer {
 public:
  WithPrefix(std::unique_ptr<Tokenizer> inner, std::vector<int64_t> prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix)) {}
  std::vector<int64_t> encode(std::string_view text) const override { return inner_->encode(text); }
  std::string decode(const std::vector<int64_t>& ids) const override { return inner_->decode(ids); }
  int64_t vocab_size() const override { return inner_->vocab_size(); }
  std::vector<int64_t> prefix_ids() const override { return prefix_; }
  std::vector<int64_t> special_ids() const override { return inner_->special_ids(); }
  std::optional<int64_t> token_to_id(std::string_view token) const override {
    return inner_->token_to_id(token);
  }

 private:
  std::unique_ptr<Tokenizer> inner_;
  std::vector<int64_t> prefix_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const io::GgufHeader& header,
                                               const std::string& file) {
  const Vocabulary vocab(header, file);
  const std::string kind = vocab.text("tokenizer.ggml.model", "");
  const size_t tokens = vocab.strings("tokenizer.ggml.tokens").size();
  const std::optional<int64_t> bos = vocab.id("tokenizer.ggml.bos_token_id", tokens);
  std::unique_ptr<Tokenizer> inner;
  bool add_bos = false;
  if (kind == "llama") {
    inner = std::make_unique<SentencePieceTokenizer>(
        SentencePieceTokenizer::from_bytes(sentencepiece_model(vocab), file));
    add_bos = vocab.flag("tokenizer.ggml.add_bos_token").value_or(true);
  } else if (kind == "gpt2") {
    inner = std::make_unique<BPETokenizer>(BPETokenizer::from_json(bpe_json(vocab), file));
    add_bos = vocab.flag("tokenizer.ggml.add_bos_token").value_or(false);
  } else {
    vocab.refuse("tokenizer.ggml.model",
                 "the tokenizer \"" + kind +
                     "\" is not implemented (stride runs \"llama\", SentencePiece, and \"gpt2\", "
                     "byte-level BPE)");
  }
  std::vector<int64_t> prefix;
  if (add_bos && bos) prefix.push_back(*bos);
  return std::make_unique<WithPrefix>(std::move(inner), std::move(prefix));
}

}  // namespace stride::data
