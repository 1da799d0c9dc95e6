#include "support/text_streamer.h"

#include <string>
#include <utility>

namespace stride::app {

TextStreamer::TextStreamer(const data::Tokenizer& tokenizer,
                           std::vector<int64_t> prompt,
                           std::ostream& out)
    : tokenizer_(tokenizer),
      ids_(std::move(prompt)),
      out_(out),
      printed_(tokenizer.decode(ids_).size()) {}

void TextStreamer::push(int64_t id) {
  ids_.push_back(id);
  emit(/*final=*/false);
}

void TextStreamer::finish() {
  emit(/*final=*/true);
}

void TextStreamer::emit(bool final) {
  const std::string text = tokenizer_.decode(ids_);
  if (text.size() <= printed_) return;
  size_t used = 0;
  const std::string valid = data::valid_utf8(std::string_view(text).substr(printed_), final, &used);
  if (!final && valid.ends_with("\xEF\xBF\xBD")) return;
  out_ << valid << std::flush;
  printed_ += used;
}

}  // namespace stride::app
