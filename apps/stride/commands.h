// The subcommands of `stride`. Each returns the process exit code; user
// errors are thrown as stride::Error and reported by main() in one line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "run_dir.h"

namespace stride::app {

struct TrainArgs {
  std::string config;
  std::optional<std::string> data, out, resume;
  std::optional<int64_t> steps;
  std::optional<uint64_t> seed;
  std::optional<std::string> precision;
  std::vector<std::string> settings;   // --set SECTION.KEY=VALUE, in order
  std::optional<std::string> weights;  // start from these weights
  std::optional<std::string> hf;       // fine-tune this Hugging Face model, in its tokens
  int64_t profile_steps = 0;
  int64_t sample_tokens = 300;
  double checkpoint_minutes = 10;  // 0: only every train.checkpoint_interval steps
  bool force = false;              // overwrite a run already in --out
  int nproc = 1;                   // > 1: data-parallel over that many processes (mpirun)
};
int run_train(const TrainArgs& args);

// Replaces this process with `mpirun -np nproc` running the same command
// line without --nproc; returns only by throwing.
int launch_with_mpirun(int nproc, int argc, char** argv);

struct EvalArgs {
  ModelSource model;
  std::string split = "val";
  std::optional<std::string> data;
  std::optional<std::string> hf;    // a Hugging Face directory instead of --ckpt
  std::optional<std::string> gguf;  // a llama.cpp GGUF file instead of --ckpt
  int64_t context = 0;              // --hf: window length; 0: the model's context
  int64_t batch = 8;                // --hf: windows per forward
  int64_t max_windows = 0;          // --hf: evaluate the first windows only; 0: all
  // Also evaluate with the linear layers' weights in this format (lm::pack_weights).
  std::string weights_dtype = "float32";
};
int run_eval(const EvalArgs& args);

struct GenerateArgs {
  ModelSource model;
  std::string prompt = "\n";
  int64_t tokens = 300;
  double temperature = 1.0;
  int64_t top_k = 0;
  double top_p = 1.0;
  uint64_t seed = 0;
  std::string precision = "fp32";
  std::string weights_dtype = "float32";  // the linear layers' (lm::pack_weights)
  int64_t window = 0;                     // lm::GenerateOptions::slide; 0: a quarter of the context
  // A Hugging Face model directory (with its tokenizer.json) instead of model.
  std::optional<std::string> hf;
  std::optional<std::string> gguf;  // a llama.cpp GGUF file instead of model
  // Writes the new ids and the prefill and decode times there, as JSON.
  std::optional<std::string> stats_json;
};
int run_generate(const GenerateArgs& args);

struct AttentionArgs {
  ModelSource model;
  std::optional<std::string> hf, gguf;  // a pretrained model instead of model
  std::string prompt, out;
};
int run_attention(const AttentionArgs& args);

struct ExportArgs {
  std::string ckpt;
  std::optional<std::string> out;         // a safetensors file of stride's names
  std::optional<std::string> hf;          // a Hugging Face directory (GPT-2 and Llama runs)
  std::string weights_dtype = "float32";  // --out: the linear layers' (lm::pack_weights)
};
int run_export(const ExportArgs& args);

struct InitArgs {
  std::string config, out;
  std::optional<uint64_t> seed;
};
int run_init(const InitArgs& args);

struct InspectArgs {
  std::string config;
};
int run_inspect(const InspectArgs& args);

struct LadderArgs {
  double steps_scale = 1.0;
  std::string out = "runs/ladder";
  bool params_only = false;
  std::vector<int> stages;  // 1-7 the article's, 8 the correct Llama; empty: all
  std::optional<std::string> data;
};
int run_ladder(const LadderArgs& args);

struct DoctorArgs {
  std::optional<std::string> config, ckpt, weights, data;
  bool anomaly = false;
  bool verbose = false;
};
int run_doctor(const DoctorArgs& args);

}  // namespace stride::app
