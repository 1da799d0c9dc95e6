// stride: train, evaluate, sample and inspect the Llama of "Llama from
// scratch" and the article's ladder. `stride --help` lists the commands.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "commands.h"
#include "stride/cpu_capability.h"
#include "stride/distributed.h"
#include "stride/error.h"
#include "stride/parallel.h"

namespace {

// Option checks whose messages read as sentences, where CLI11's own print
// the whole range of a double; an integer that overflows is an error, not
// INT64_MAX.
template <class Int>
CLI::Validator whole_number(Int min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        Int v{};
        const char* end = text.data() + text.size();
        const auto [stop, err] = std::from_chars(text.data(), end, v);
        if (err == std::errc::result_out_of_range) {
          return "is too large (at most " + std::to_string(std::numeric_limits<Int>::max()) +
                 "); got " + text;
        }
        if (err != std::errc() || stop != end) return "must be a whole number; got " + text;
        if (v < min) return "must be " + std::to_string(min) + " or more; got " + text;
        return "";
      },
      ">= " + std::to_string(min));
}
const CLI::Validator kCount = whole_number<int64_t>(0);
const CLI::Validator kSeed = whole_number<uint64_t>(0);
const std::vector<std::string> kWeightFormats = {"float32", "bf16", "int8", "int4"};
// Comma-separated names of kWeightFormats, or "all".
const CLI::Validator kWeightFormatList(
    [](const std::string& text) -> std::string {
      if (text == "all") return "";
      size_t start = 0;
      while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const std::string name = text.substr(start, comma - start);
        if (std::find(kWeightFormats.begin(), kWeightFormats.end(), name) == kWeightFormats.end())
          return "\"" + name + "\" is not one of float32, bf16, int8, int4 (or all)";
        start = comma + 1;
      }
      return "";
    },
    "FORMAT[,FORMAT...]|all");

// A finite number in [min, max] (or (min, max] when min_open).
CLI::Validator number_in(double min, double max, bool min_open = false) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* stop = nullptr;
        const double v = std::strtod(text.c_str(), &stop);
        if (text.empty() || *stop != '\0' || !std::isfinite(v)) {
          return "must be a number; got " + text;
        }
        const std::string range = std::string(min_open ? "(" : "[") + CLI::detail::to_string(min) +
                                  ", " + (std::isinf(max) ? "inf" : CLI::detail::to_string(max)) +
                                  (std::isinf(max) ? ")" : "]");
        if (v < min || (min_open && v == min) || v > max) {
          return "must be in " + range + "; got " + text;
        }
        return "";
      },
      "number");
}
const CLI::Validator kNonNegative = number_in(0, std::numeric_limits<double>::infinity());

// Levenshtein distance, for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The first word that is not an option or an option's value, when it names
// no command: an error that suggests the closest command.
bool reject_unknown_command(const CLI::App& app, int argc, char** argv) {
  for (int k = 1; k < argc; ++k) {
    const std::string word = argv[k];
    if (word == "--threads") {
      ++k;
      continue;
    }
    if (word.empty() || word[0] == '-') continue;
    std::string best;
    size_t best_distance = std::numeric_limits<size_t>::max();
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == word) return false;
      const size_t d = edit_distance(word, sub->get_name());
      if (d < best_distance) best = sub->get_name(), best_distance = d;
    }
    std::fprintf(stderr, "stride: unknown command \"%s\".%s Run stride --help for the list.\n",
                 word.c_str(),
                 best_distance <= 2 ? (" Did you mean \"" + best + "\"?").c_str() : "");
    return true;
  }
  return false;
}

// --ckpt DIR or --weights FILE (with --config when the file carries none).
void add_model_source(CLI::App* command, stride::app::ModelSource& source) {
  auto* ckpt = command->add_option("--ckpt", source.ckpt, "run directory");
  auto* weights = command->add_option("--weights", source.weights,
                                      "a safetensors file of weights (stride export, or PyTorch)");
  weights->excludes(ckpt);
  command->add_option("--config", source.config, "the model's config, for --weights without one")
      ->needs(weights);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stride::app;
  CLI::App app{"stride: Llama from scratch on TinyShakespeare, in C++"};
  // The CPU kernels' level too: which compiled path this machine runs (Note
  // [CPU capabilities]).
  app.set_version_flag("--version", std::string("stride " STRIDE_VERSION "\nCPU capability: ") +
                                        stride::cpu_capability_summary());
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "threads for the kernels (0: all cores)")->check(kCount);

  TrainArgs train;
  auto* t = app.add_subcommand("train", "train a model from a config");
  auto* train_config =
      t->add_option("--config", train.config, "config file, e.g. configs/llama.json");
  t->add_option("--data", train.data, "TinyShakespeare path (else $STRIDE_DATA, data/, download)");
  t->add_option("--steps", train.steps,
                "override train.steps, the step the run ends at (with --resume too)")
      ->check(kCount);
  t->add_option("--out", train.out, "run directory (default runs/<config name>)");
  t->add_option("--seed", train.seed, "override train.seed")->check(kSeed);
  t->add_option("--precision", train.precision, "override train.precision (bf16: autocast)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  t->add_option("--resume", train.resume, "continue the run in this directory, with its config")
      ->excludes(train_config);
  t->add_flag("--force", train.force, "overwrite the run already in --out");
  t->add_option("--nproc", train.nproc,
                "train data-parallel on this many processes (starts mpirun; the config's batch "
                "is the global batch)")
      ->check(CLI::Range(1, 4096));
  t->add_option("--weights", train.weights,
                "start from these weights (a safetensors file of the config's model)")
      ->excludes("--resume");
  t->add_option("--hf", train.hf,
                "fine-tune a Hugging Face model directory (its config.json and weights, the text "
                "in its tokenizer's ids); --config then gives the train section only")
      ->excludes("--resume")
      ->excludes("--weights");
  t->add_option("--set", train.settings,
                "override any config key, e.g. --set train.lr=1e-3 (repeatable; with --resume, "
                "train keys only)");
  t->add_option("--checkpoint-minutes", train.checkpoint_minutes,
                "also save a checkpoint every this many minutes (0: off)")
      ->check(kNonNegative);
  t->add_option("--profile", train.profile_steps,
                "profile this many steps: DIR/trace.json and a table")
      ->check(kCount);
  t->add_option("--sample", train.sample_tokens, "characters to generate at the end")
      ->check(kCount);

  EvalArgs eval;
  auto* e = app.add_subcommand("eval", "loss of a trained model over a whole split");
  add_model_source(e, eval.model);
  e->add_option("--split", eval.split, "val, test or train")
      ->check(CLI::IsMember({"val", "test", "train"}));
  e->add_option("--data", eval.data, "TinyShakespeare path");
  e->add_option("--hf", eval.hf,
                "a Hugging Face model directory (config.json, safetensors, tokenizer) instead of "
                "--ckpt or --weights; the text is tokenized with its tokenizer (a BERT masked "
                "LM: the loss at 15% of the tokens, masked)")
      ->excludes("--ckpt")
      ->excludes("--weights");
  e->add_option("--gguf", eval.gguf,
                "a llama.cpp GGUF file (a Llama, with its tokenizer) instead of --ckpt, "
                "--weights or --hf")
      ->excludes("--ckpt")
      ->excludes("--weights")
      ->excludes("--hf");
  e->add_option("--context", eval.context,
                "--hf, --gguf: tokens per window (default: the model's context)")
      ->check(kCount);
  e->add_option("--batch", eval.batch, "--hf, --gguf: windows per forward pass")
      ->check(CLI::PositiveNumber);
  e->add_option("--max-windows", eval.max_windows,
                "--hf, --gguf: the first windows only (0: the whole split)")
      ->check(kCount);
  e->add_option("--weights-dtype", eval.weights_dtype,
                "also evaluate with the linear layers' weights stored as bf16, int8 or int4 "
                "(blocks of 32 as GGUF's Q8_0 and Q4_0), beside float32: one, a comma-separated "
                "list, or all")
      ->check(kWeightFormatList);

  GenerateArgs gen;
  auto* g = app.add_subcommand("generate", "sample text from a trained model");
  add_model_source(g, gen.model);
  g->add_option("--prompt", gen.prompt, "text to continue (default: a newline)");
  g->add_option("--tokens", gen.tokens, "characters to generate")->check(kCount);
  g->add_option("--temperature", gen.temperature, "0 = greedy")->check(kNonNegative);
  g->add_option("--top-k", gen.top_k, "keep the k most likely (0 = all)")->check(kCount);
  g->add_option("--top-p", gen.top_p, "nucleus mass (1 = all)")
      ->check(number_in(0, 1, /*min_open=*/true));
  g->add_option("--seed", gen.seed, "sampling seed")->check(kSeed);
  g->add_option("--window", gen.window,
                "once the context is full, slide it by this many tokens (1: always the last "
                "context tokens, as a plain sliding window, at a prefill per token; 0: a "
                "quarter of the context)")
      ->check(kCount);
  g->add_option("--hf", gen.hf,
                "a Hugging Face model directory (config.json, safetensors, tokenizer) instead of "
                "--ckpt or --weights")
      ->excludes("--ckpt")
      ->excludes("--weights");
  g->add_option("--gguf", gen.gguf,
                "a llama.cpp GGUF file (a Llama, with its tokenizer) instead of --ckpt, "
                "--weights or --hf")
      ->excludes("--ckpt")
      ->excludes("--weights")
      ->excludes("--hf");
  g->add_option("--precision", gen.precision, "fp32, or bf16 (autocast: bfloat16 matmuls)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  g->add_option("--stats-json", gen.stats_json,
                "write the new token ids and the prefill and decode times (tokens/s) to this file "
                "as JSON, for benchmarks");
  g->add_option("--weights-dtype", gen.weights_dtype,
                "the linear layers' weights: float32, bf16, int8 or int4 (blocks of 32 as "
                "GGUF's Q8_0 and Q4_0); fewer bytes per token decode faster")
      ->check(CLI::IsMember(kWeightFormats));

  AttentionArgs attn;
  auto* a = app.add_subcommand("attention", "attention maps of every layer and head as a PNG");
  add_model_source(a, attn.model);
  a->add_option("--hf", attn.hf,
                "a Hugging Face model directory (config.json, safetensors, tokenizer) instead of "
                "--ckpt or --weights; the axes show its tokens")
      ->excludes("--ckpt")
      ->excludes("--weights");
  a->add_option("--gguf", attn.gguf,
                "a llama.cpp GGUF file (a Llama, with its tokenizer) instead of --ckpt, "
                "--weights or --hf")
      ->excludes("--ckpt")
      ->excludes("--weights")
      ->excludes("--hf");
  a->add_option("--prompt", attn.prompt, "text (its last `context` tokens)")->required();
  a->add_option("--out", attn.out, "the grid, labelled with the prompt: a PNG file, or .svg")
      ->required();

  ExportArgs exp;
  auto* x = app.add_subcommand(
      "export", "write a run's weights for PyTorch and Hugging Face tools (safetensors)");
  x->add_option("--ckpt", exp.ckpt, "run directory")->required();
  auto* export_out = x->add_option("--out", exp.out, "safetensors file");
  auto* export_hf = x->add_option(
      "--hf", exp.hf, "a Hugging Face directory transformers loads (GPT-2 and Llama runs)");
  x->add_option("--weights-dtype", exp.weights_dtype,
                "--out: store the linear layers' weights as bf16, int8 or int4 (blocks of 32 as "
                "GGUF's Q8_0 and Q4_0); --weights reads them back")
      ->check(CLI::IsMember(kWeightFormats));
  export_out->excludes(export_hf);
  x->require_option(1, 3);  // --ckpt, one of --out and --hf (run_export checks), --weights-dtype

  InitArgs init;
  auto* i = app.add_subcommand("init", "write a freshly initialised model's weights");
  i->add_option("--config", init.config, "config file")->required();
  i->add_option("--out", init.out, "safetensors file")->required();
  i->add_option("--seed", init.seed, "override train.seed")->check(kSeed);

  InspectArgs inspect;
  auto* in = app.add_subcommand(
      "inspect", "a config's parameters and the memory a training step needs (on meta, instantly)");
  in->add_option("--config", inspect.config, "config file, e.g. configs/llama-7b.json")->required();

  LadderArgs ladder;
  auto* l = app.add_subcommand("ladder", "train every stage of the article's ladder");
  l->add_option("--steps-scale", ladder.steps_scale, "multiply the article's step counts")
      ->check(number_in(0, std::numeric_limits<double>::infinity(), /*min_open=*/true));
  l->add_option("--out", ladder.out, "where ladder.md and ladder.json go");
  l->add_flag("--params", ladder.params_only, "print only the parameter table");
  l->add_option("--stages", ladder.stages,
                "run only these stages (1-7 the article's, 8 the correct Llama), e.g. 7,8")
      ->delimiter(',')
      ->check(CLI::Range(1, 8));
  l->add_option("--data", ladder.data, "TinyShakespeare path");

  DoctorArgs doc;
  auto* d = app.add_subcommand("doctor", "check a model for silent training bugs");
  auto* doc_config = d->add_option("--config", doc.config, "config file");
  auto* doc_ckpt = d->add_option("--ckpt", doc.ckpt, "run directory")->excludes(doc_config);
  d->add_option("--weights", doc.weights, "a safetensors file of weights, with --config")
      ->excludes(doc_ckpt);
  d->add_option("--data", doc.data, "TinyShakespeare path");
  d->add_flag("--anomaly", doc.anomaly, "run the step under anomaly detection");
  d->add_flag("--verbose", doc.verbose, "print the gradient-flow table of every parameter");

  if (reject_unknown_command(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& err) {
    // --help and --version exit 0; every mistake in the arguments is a user
    // error, exit 2 as the commands' own.
    return app.exit(err) == 0 ? 0 : 2;
  }
  try {
    if (threads > 0) stride::set_num_threads(threads);
    if (*t && train.nproc > 1) return launch_with_mpirun(train.nproc, argc, argv);
    // Under mpirun, train is data-parallel; every other command runs on
    // rank 0 alone.
    if (stride::distributed::launched_world_size() > 0) {
      if (!*t) {
        if (stride::distributed::launched_rank() != 0) return 0;
      } else {
        stride::distributed::init();
        if (stride::distributed::rank() != 0) std::cout.rdbuf(nullptr);  // rank 0 reports
      }
    }
    if (*t) {
      if (train.config.empty() && !train.resume && !train.hf) {
        throw stride::ValueError(
            "train needs --config FILE (or --resume DIR). Hint: configs/llama.json trains the "
            "correct Llama at the article's size.");
      }
      return run_train(train);
    }
    if (*e) return run_eval(eval);
    if (*g) return run_generate(gen);
    if (*a) return run_attention(attn);
    if (*i) return run_init(init);
    if (*x) return run_export(exp);
    if (*l) return run_ladder(ladder);
    if (*in) return run_inspect(inspect);
    if (*d) {
      if (!doc.config && !doc.ckpt)
        throw stride::ValueError("doctor needs --config FILE or --ckpt DIR.");
      return run_doctor(doc);
    }
  } catch (const stride::Error& err) {
    std::fprintf(stderr, "stride: %s\n", err.what());
    return 2;
  } catch (const std::exception& err) {
    std::fprintf(stderr, "stride: unexpected error: %s\n", err.what());
    return 3;
  }
  return 0;
}
