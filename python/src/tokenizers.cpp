// stride._stride._tokenizers: the tokenizers of Hugging Face model
// directories (include/stride/data/tokenizer.h: SentencePiece's
// tokenizer.model, byte-level BPE's tokenizer.json), under
// python/stride/tokenizers.py, which gives them transformers' calls.
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "stride/data/tokenizer.h"

namespace stride::python {

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
           "The special tokens a sequence starts with (transformers' add_special_tokens).");
  t.def(
      "load",
      [](const std::string& dir) {
        nb::gil_scoped_release no_gil;
        return data::load_tokenizer(dir);
      },
      nb::arg("dir"),
      "The tokenizer of a model directory: its tokenizer.model, else its tokenizer.json; "
      "OSError when it has neither.");
}

}  // namespace stride::python
