// What the tokenizer.json readers of src/data (byte-level BPE, WordPiece)
// share: parsing the file with errors that name it, the table of tokens by
// id, and cutting a text at the added tokens ([CLS], <|endoftext|>, ...),
// which map to their ids before any normalizing or pre-tokenizing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "stride/error.h"

namespace stride::data::detail {

// Parses json_text and hands the root to read(root); ValueError naming
// `source` for text that is not JSON or a file whose keys have the wrong
// types.
template <typename Read>
void read_tokenizer_json(std::string_view json_text, const std::string& source, Read&& read) {
  const nlohmann::json root = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) throw ValueError(source + ": not valid JSON");
  try {
    read(root);
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(source + ": malformed tokenizer.json: " + e.what());
  }
}

// The tokens by id, "" for an id no token has. Ids index the table, so
// they are bounded (2^24) that a file cannot ask for terabytes: ValueError
// naming `source` for one outside.
template <typename Vocab>
std::vector<std::string> tokens_by_id(const Vocab& vocab, const std::string& source) {
  constexpr int64_t kMaxId = int64_t(1) << 24;
  int64_t size = 0;
  for (const auto& [token, id] : vocab) {
    if (id < 0 || id >= kMaxId) {
      throw ValueError(source + ": key \"model.vocab\": id " + std::to_string(id) + " of \"" +
                       token + "\" is outside [0, 2^24)");
    }
    size = std::max(size, id + 1);
  }
  std::vector<std::string> tokens(static_cast<size_t>(size));
  for (const auto& [token, id] : vocab) tokens[size_t(id)] = token;
  return tokens;
}

struct AddedToken {
  std::string content;
  int64_t id;
};

// Sorted so that, of tokens found at one place, the longest wins.
inline void sort_longest_first(std::vector<AddedToken>& added) {
  std::stable_sort(added.begin(), added.end(), [](const AddedToken& a, const AddedToken& b) {
    return a.content.size() > b.content.size();
  });
}

// Calls stretch(view) for each stretch of `text` between added tokens
// (possibly empty) and token(id) for each added token, in order. Each
// token's next occurrence is found again only once the cut passes it, so
// the text is scanned once per token.
template <typename Stretch, typename Token>
void split_at_added_tokens(std::string_view text,
                           const std::vector<AddedToken>& added,
                           Stretch&& stretch,
                           Token&& token) {
  std::vector<size_t> next(added.size());
  for (size_t a = 0; a < added.size(); ++a) next[a] = text.find(added[a].content);
  size_t start = 0;
  while (start < text.size()) {
    // The earliest added token (the longest at a tie: they are sorted so).
    size_t hit = added.size();
    for (size_t a = 0; a < added.size(); ++a) {
      if (next[a] < start) next[a] = text.find(added[a].content, start);
      if (next[a] != std::string_view::npos && (hit == added.size() || next[a] < next[hit]))
        hit = a;
    }
    const size_t end = hit < added.size() ? next[hit] : text.size();
    stretch(text.substr(start, end - start));
    if (hit == added.size()) break;
    token(added[hit].id);
    start = end + added[hit].content.size();
  }
}

// The ids of `text`: encode_stretch(view, out) appends those of each stretch
// between added tokens, and each added token gives its own id.
template <typename EncodeStretch>
std::vector<int64_t> encode_with_added_tokens(std::string_view text,
                                              const std::vector<AddedToken>& added,
                                              EncodeStretch&& encode_stretch) {
  std::vector<int64_t> out;
  split_at_added_tokens(
      text, added, [&](std::string_view stretch) { encode_stretch(stretch, out); },
      [&](int64_t id) { out.push_back(id); });
  return out;
}

}  // namespace stride::data::detail
