// The configuration of a run: which model (every dimension of it) and how to
// train it. Configs are JSON files (configs/*.json):
//
//   {"name": "llama-article-size",
//    "model": {"arch": "llama", "d_model": 128, "n_layers": 4, "n_heads": 8, "context": 16},
//    "train": {"steps": 5000, "optimizer": "adamw", "lr": 1e-3, "schedule": "cosine"}}
//
// A key left out takes the default below; an unknown key is an error that
// names it and lists the known ones (a typo must not silently train the
// default).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "stride/error.h"

namespace stride::lm {

// A configuration that cannot be used: unknown key, wrong type, bad value.
class ConfigError : public ValueError {
 public:
  using ValueError::ValueError;
};

// One config for every architecture (lm/registry.h): each reads the fields
// it uses and refuses, in its validation, settings it does not have.
struct ModelConfig {
  // The architecture's registered name: "llama" (the correct Llama),
  // "gpt2", or a stage of the article's ladder ("simple_broken", "simple",
  // "simple_rms", "rope_nomask", "rope_masked", "rope_swiglu",
  // "article_llama").
  std::string arch = "llama";
  int64_t vocab_size = 65;
  int64_t d_model = 128;
  int64_t n_layers = 4;
  int64_t n_heads = 8;
  // The correct Llama's key/value heads: n_heads / n_kv_heads query heads
  // share each (grouped-query attention, as Llama 2 70B and Llama 3); 0 means
  // n_heads (multi-head attention).
  int64_t n_kv_heads = 0;
  int64_t context = 16;  // the longest sequence the model takes (the article's context_window)
  // The correct Llama's SwiGLU hidden width; 0 derives it from d_model:
  // 8d/3 rounded up to a multiple of `multiple_of` (d 128 -> 352, d 384 -> 1024).
  int64_t ffn_hidden = 0;
  int64_t multiple_of = 32;
  double norm_eps = 1e-6;
  double rope_theta = 10000.0;
  // The correct Llama's RoPE frequency scaling, as Hugging Face's
  // rope_parameters name it: rope_type "default" (none), "linear" (every
  // frequency divided by rope_factor) or "llama3" (Llama 3.1's bands, with
  // rope_low_freq_factor, rope_high_freq_factor and rope_original_context,
  // its original_max_position_embeddings); nn::functional::RopeScaling says
  // what each computes.
  std::string rope_type = "default";
  double rope_factor = 1.0;
  double rope_low_freq_factor = 1.0;
  double rope_high_freq_factor = 4.0;
  int64_t rope_original_context = 8192;
  // The correct Llama's RoPE pairs: "interleaved" (x[2i], x[2i+1]) as Meta's
  // code, or "half" (x[i], x[i + head_dim/2]) as Hugging Face's rotate_half.
  std::string rope_style = "interleaved";
  // BERT's token types (segments): the rows of its token-type embedding;
  // 0 for the architectures without them.
  int64_t type_vocab_size = 0;
  bool tie_embeddings = false;  // output projection shares the embedding's weight
  double dropout = 0.1;         // the article's stages only (attention and projection)

  int64_t head_dim() const { return d_model / n_heads; }
  int64_t kv_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  // ffn_hidden, or the architecture's width for it.
  int64_t hidden_dim() const;
  // Throws ConfigError for an unknown arch or an inconsistent config
  // (non-positive sizes, ...; then the architecture's own checks: d_model
  // not divisible by n_heads, odd head_dim, ...).
  void validate() const;
};

// For the architectures' registrations (lm/registry.h):
// a ConfigError "invalid config: <what>" unless ok;
void require_config(bool ok, const std::string& what);
// 8 d_model / 3 rounded up to a multiple of multiple_of (d 128 -> 352), the
// SwiGLU width of the Llamas, saturating instead of overflowing;
int64_t swiglu_hidden_dim(const ModelConfig& config);
// 4 d_model, the MLP width of GPT-2 and BERT, saturating instead of
// overflowing;
int64_t four_times_width(const ModelConfig& config);
// refuses the correct Llama's settings (grouped-query attention, RoPE
// scaling and pairing) where an architecture has none of them.
void refuse_llama_only_settings(const ModelConfig& config);

struct TrainConfig {
  int64_t steps = 1000;
  int64_t batch_size = 32;
  std::string optimizer = "adam";  // "adam" (L2 weight decay) or "adamw" (decoupled)
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  std::string schedule = "constant";  // "constant" or "cosine" (linear warm-up, cosine decay)
  int64_t warmup_steps = 0;
  // The cosine schedule's length (0: steps). A run resumed with more steps
  // keeps the length it started with; past it the lr stays at its floor.
  int64_t decay_steps = 0;
  double min_lr_ratio = 0.1;  // cosine floor, as a fraction of lr
  double grad_clip = 0.0;     // max global gradient norm; 0 turns clipping off
  // "fp32", or "bf16": training steps and their loss estimates run under
  // stride::AutocastGuard (bfloat16 matmuls, float32 parameters and state).
  std::string precision = "fp32";
  int64_t eval_interval = 100;
  int64_t eval_batches = 10;  // random batches per split, as the article's evaluate_loss
  int64_t checkpoint_interval = 1000;
  uint64_t seed = 1337;
  // Data-parallel runs (mpirun): 0 averages the ranks' gradients with an
  // all-reduce (the same training at any world size within float32
  // rounding); K > 0 cuts each batch into K shards reduced in a fixed order,
  // the same bit for bit at every world size dividing K (Note
  // [Deterministic gradient reduction] in stride/distributed/ddp.h).
  int64_t deterministic_shards = 0;
  // 1: ZeRO stage 1, the optimizer state sharded across the processes of a
  // data-parallel run (stride/distributed/zero.h); 0: every process holds
  // all of it.
  int64_t zero_stage = 0;

  int64_t schedule_steps() const { return decay_steps > 0 ? decay_steps : steps; }
  void validate() const;
};

struct RunConfig {
  std::string name = "run";
  ModelConfig model;
  TrainConfig train;
};

// Parses a config; `source` names the file in messages.
RunConfig parse_config(std::string_view json_text, std::string_view source = "config");
// A config saved with a run (to_json): as parse_config, and every model key
// must be present, since the model is rebuilt from it (an empty or cut
// config would otherwise build a default model).
RunConfig parse_saved_config(std::string_view json_text, std::string_view source);
// Reads and parses a file; IOError when it cannot be read.
RunConfig load_config(const std::filesystem::path& path);
// A command-line override `section.key=value` (--set train.lr=1e-3): the
// value is read as JSON when it is JSON, else as a string, and the result is
// checked as a config file is (unknown keys, types, ranges). ConfigError
// naming the setting otherwise.
RunConfig with_setting(const RunConfig& config, std::string_view setting);
// Every field, so that a saved config reproduces the run exactly.
std::string to_json(const RunConfig& config, int indent = 2);

}  // namespace stride::lm
