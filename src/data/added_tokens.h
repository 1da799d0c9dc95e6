// Cutting a text at a tokenizer's added tokens ([CLS], <|endoftext|>, ...),
// which map to their ids before any normalizing or pre-tokenizing: shared by
// the byte-level BPE and WordPiece tokenizers of src/data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stride::data::detail {

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

}  // namespace stride::data::detail
