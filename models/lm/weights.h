// Weights in and out: a model's state dict as a plain safetensors file that
// PyTorch and Hugging Face tooling read (what `stride export` writes), and a
// model built to hold a weights file's tensors (what `--weights` reads,
// whether stride or PyTorch wrote it).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "lm/config.h"
#include "lm/language_model.h"
#include "stride/io.h"
#include "stride/nn/module.h"
#include "stride/weight_format.h"

namespace stride::lm {

// Writes `model`'s state dict under its own names (Meta's for the Llama, the
// article's for its ladder) with "format": "pt" and the config as
// "stride.config" metadata, plus `extra_metadata`; atomically, as every
// safetensors file stride writes.
void save_weights(const std::string& path,
                  const nn::Module& model,
                  const RunConfig& config,
                  const std::map<std::string, std::string>& extra_metadata = {});

// A safetensors file's tensors as a state dict, under their stored names.
nn::StateDict state_dict_from(io::SafetensorsContents file);

// The model of `config` holding `weights` (read from `path`, named in
// errors). The config is checked against the tensors before anything is
// built (a config implying more tensors or bytes than the file holds is an
// IOError); a name or shape mismatch is a ValueError listing every missing,
// unexpected and mis-shaped key, as load_state_dict(strict) does.
// With `format` other than float32, the file holds the linear layers'
// weights in that format (an `export --weights-dtype` file, whose
// "stride.weights_dtype" metadata names it): the model is built with its
// linear layers packed so, then loaded.
std::shared_ptr<LanguageModel> build_with_weights(const RunConfig& config,
                                                  const nn::StateDict& weights,
                                                  const std::string& path,
                                                  WeightFormat format = WeightFormat::Float32);

// The metadata key that names the format of an exported file's linear
// weights ("bf16", "int8", "int4"; absent for float32).
inline constexpr const char* kWeightsDtypeKey = "stride.weights_dtype";

// The model of `config` with uninitialised weights, for a loader that fills
// them: built on meta, so that no initialiser runs, then given CPU memory
// that nothing touches (and so holds no pages) until a tensor is copied
// into it or replaces it.
std::shared_ptr<LanguageModel> build_uninitialised(const ModelConfig& config);

// What pack_weights did: the linear layers it packed and those it left as
// they were (stored packed already, or of an in_features that a blocked
// format's 32 does not divide), and
// the bytes of the model's parameters and buffers before and after.
struct PackedWeights {
  int64_t packed_layers = 0, kept_layers = 0;
  int64_t bytes_before = 0, bytes_after = 0;
};

// Stores the weight of every nn::Linear of `model` in `format` (Note
// [Weight formats]; embeddings and norms stay as they are), for decoding
// and evaluation.
PackedWeights pack_weights(nn::Module& model, WeightFormat format);

}  // namespace stride::lm
