// stride._stride._tokenizers: the tokenizers of Hugging Face model
// directories (include/stride/data/tokenizer.h: SentencePiece's
// tokenizer.model, byte-level BPE's or WordPiece's tokenizer.json, BERT's
// vocab.txt), under python/stride/tokenizers.py, which gives them
// transformers' calls.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "stride/data/bpe.h"
#include "stride/data/sentencepiece.h"
#include "stride/data/tokenizer.h"
#include "stride/data/wordpiece.h"

namespace stride::python {

namespace {

// Which tokenizer a directory gave: the Python side returns BERT's token
// type ids only for WordPiece, as transformers' BertTokenizer does.
std::string kind_of(const data::Tokenizer& tokenizer) {
  if (dynamic_cast<const data::WordPieceTokenizer*>(&tokenizer)) return "wordpiece";
  if (dynamic_cast<const data::SentencePieceTokenizer*>(&tokenizer)) return "sentencepiece";
  return "bpe";
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> with_special_tokens(
    const data::Tokenizer& self,
    const std::vector<int64_t>& first,
    const std::optional<std::vector<int64_t>>& second) {
  data::Tokenizer::WithSpecialTokens out =
      self.with_special_tokens(first, second ? &*second : nullptr);
  return {std::move(out.ids), std::move(out.type_ids)};
}

}  // namespace

void bind_tokenizers(nb::module_& m) {
  nb::module_ t = m.def_submodule("_tokenizers", "Hugging Face directories' tokenizers.");
  nb::class_<data::Tokenizer>(t, "Tokenizer", "A subword tokenizer: text to ids and back.")
      .def(
          "encode",
          [](const data::Tokenizer& self, const std::string& text) {
            nb::gil_scoped_release no_gil;
            return self.encode(text);
          },
          nb::arg("text"), "The ids of text, without special tokens.")
      .def(
          "decode",
          [](const data::Tokenizer& self, const std::vector<int64_t>& ids) {
            return data::valid_utf8(self.decode(ids));
          },
          nb::arg("ids"),
          "The text of ids, ill-formed UTF-8 replaced as Python's bytes.decode('utf-8', "
          "'replace') does; ValueError for an id outside the vocabulary.")
      .def_prop_ro("vocab_size", &data::Tokenizer::vocab_size)
      .def("prefix_ids", &data::Tokenizer::prefix_ids,
           "The special tokens a sequence starts with (transformers' add_special_tokens).")
      .def("with_special_tokens", &with_special_tokens, nb::arg("first"),
           nb::arg("second") = nb::none(),
           "(ids, token type ids) of one sequence or a pair with the special tokens the "
           "tokenizer's post-processor adds (BERT's [CLS] a [SEP] b [SEP]).")
      .def("special_ids", &data::Tokenizer::special_ids,
           "The ids decode(skip_special_tokens=True) leaves out.")
      .def("token_to_id", &data::Tokenizer::token_to_id, nb::arg("token"),
           "The id of a token of the vocabulary, None where it has none.")
      .def_prop_ro("kind", &kind_of, "'bpe', 'sentencepiece' or 'wordpiece'.");
  t.def(
      "load",
      [](const std::string& dir) {
        nb::gil_scoped_release no_gil;
        return data::load_tokenizer(dir);
      },
      nb::arg("dir"),
      "The tokenizer of a model directory: its tokenizer.model, else its tokenizer.json, else "
      "its vocab.txt; OSError when it has none of them.");
}

}  // namespace stride::python
