// SentencePiece models (include/stride/data/sentencepiece.h), through
// libsentencepiece.
#include "stride/data/sentencepiece.h"

#include <sentencepiece_processor.h>

#include <exception>

#include "stride/data/text.h"
#include "stride/error.h"

namespace stride::data {

struct SentencePieceTokenizer::Impl {
  sentencepiece::SentencePieceProcessor processor;
  std::string source;
};

SentencePieceTokenizer::SentencePieceTokenizer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
SentencePieceTokenizer::~SentencePieceTokenizer() = default;
SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer& SentencePieceTokenizer::operator=(SentencePieceTokenizer&&) noexcept =
    default;

SentencePieceTokenizer SentencePieceTokenizer::from_file(const std::string& path) {
  return from_bytes(read_text_file(path), path);
}

SentencePieceTokenizer SentencePieceTokenizer::from_bytes(std::string_view bytes,
                                                          const std::string& source) {
  auto impl = std::make_unique<Impl>();
  impl->source = source;
  // The library reports most malformed models in its status, but some (a
  // piece of zero length, found by fuzz/sentencepiece_fuzz.cpp) throw from
  // the trie it builds.
  std::string error;
  try {
    const auto status = impl->processor.LoadFromSerializedProto(bytes);
    if (!status.ok()) error = status.ToString();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty()) throw IOError(source + ": not a SentencePiece model (" + error + ")");
  if (impl->processor.GetPieceSize() <= 0) {
    throw IOError(source + ": a SentencePiece model without pieces");
  }
  return SentencePieceTokenizer(std::move(impl));
}

std::vector<int64_t> SentencePieceTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  const auto status = impl_->processor.Encode(text, &ids);
  if (!status.ok()) {
    throw ValueError("[" + impl_->source + "] cannot encode the text: " + status.ToString());
  }
  return {ids.begin(), ids.end()};
}

std::string SentencePieceTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::vector<int> narrow;
  narrow.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      throw ValueError("[" + impl_->source + "] id " + std::to_string(id) +
                       " is outside the vocabulary [0, " + std::to_string(vocab_size()) + ")");
    }
    narrow.push_back(int(id));
  }
  std::string text;
  const auto status = impl_->processor.Decode(narrow, &text);
  if (!status.ok()) {
    throw ValueError("[" + impl_->source + "] cannot decode the ids: " + status.ToString());
  }
  return text;
}

int64_t SentencePieceTokenizer::vocab_size() const {
  return impl_->processor.GetPieceSize();
}

std::vector<int64_t> SentencePieceTokenizer::prefix_ids() const {
  const std::optional<int64_t> bos = bos_id();
  return bos ? std::vector<int64_t>{*bos} : std::vector<int64_t>{};
}

std::optional<int64_t> SentencePieceTokenizer::token_to_id(std::string_view piece) const {
  const int id = impl_->processor.PieceToId(piece);
  // PieceToId answers unk_id for a piece it does not have.
  if (impl_->processor.IsUnknown(id) && impl_->processor.IdToPiece(id) != piece) {
    return std::nullopt;
  }
  return id;
}

std::optional<int64_t> SentencePieceTokenizer::bos_id() const {
  const int id = impl_->processor.bos_id();
  return id >= 0 ? std::optional<int64_t>(id) : std::nullopt;
}

std::optional<int64_t> SentencePieceTokenizer::eos_id() const {
  const int id = impl_->processor.eos_id();
  return id >= 0 ? std::optional<int64_t>(id) : std::nullopt;
}

}  // namespace stride::data
