// stride: train, evaluate, sample and inspect the Llama of "Llama from
// scratch" and the article's ladder. `stride --help` lists the commands.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "commands.h"
#include "stride/error.h"
#include "stride/parallel.h"

int main(int argc, char** argv) {
  using namespace stride::app;
  CLI::App app{"stride: Llama from scratch on TinyShakespeare, in C++"};
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "threads for the kernels (default: all cores)")
      ->check(CLI::NonNegativeNumber);

  TrainArgs train;
  auto* t = app.add_subcommand("train", "train a model from a config");
  auto* train_config =
      t->add_option("--config", train.config, "config file, e.g. configs/llama.json");
  t->add_option("--data", train.data, "TinyShakespeare path (else $STRIDE_DATA, data/, download)");
  t->add_option("--steps", train.steps,
                "override train.steps, the step the run ends at (with --resume too)")
      ->check(CLI::NonNegativeNumber);
  t->add_option("--out", train.out, "run directory (default runs/<config name>)");
  t->add_option("--seed", train.seed, "override train.seed");
  t->add_option("--precision", train.precision, "override train.precision (bf16: autocast)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  t->add_option("--resume", train.resume, "continue the run in this directory, with its config")
      ->excludes(train_config);
  t->add_flag("--force", train.force, "overwrite the run already in --out");
  t->add_option("--checkpoint-minutes", train.checkpoint_minutes,
                "also save a checkpoint every this many minutes (0: off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  t->add_option("--profile", train.profile_steps,
                "profile this many steps: DIR/trace.json and a table")
      ->check(CLI::NonNegativeNumber);
  t->add_option("--sample", train.sample_tokens, "characters to generate at the end")
      ->check(CLI::NonNegativeNumber);

  EvalArgs eval;
  auto* e = app.add_subcommand("eval", "loss of a trained model over a whole split");
  e->add_option("--ckpt", eval.ckpt, "run directory")->required();
  e->add_option("--split", eval.split, "val or test")->check(CLI::IsMember({"val", "test"}));
  e->add_option("--data", eval.data, "TinyShakespeare path");

  GenerateArgs gen;
  auto* g = app.add_subcommand("generate", "sample text from a trained model");
  g->add_option("--ckpt", gen.ckpt, "run directory")->required();
  g->add_option("--prompt", gen.prompt, "text to continue (default: a newline)");
  g->add_option("--tokens", gen.tokens, "characters to generate")->check(CLI::NonNegativeNumber);
  g->add_option("--temperature", gen.temperature, "0 = greedy")->check(CLI::NonNegativeNumber);
  g->add_option("--top-k", gen.top_k, "keep the k most likely (0 = all)")
      ->check(CLI::NonNegativeNumber);
  g->add_option("--top-p", gen.top_p, "nucleus mass (1 = all)")->check(CLI::Range(1e-9, 1.0));
  g->add_option("--seed", gen.seed, "sampling seed");
  g->add_option("--precision", gen.precision, "fp32, or bf16 (autocast: bfloat16 matmuls)")
      ->check(CLI::IsMember({"fp32", "bf16"}));

  AttentionArgs attn;
  auto* a = app.add_subcommand("attention", "attention maps of every layer and head as a PNG");
  a->add_option("--ckpt", attn.ckpt, "run directory")->required();
  a->add_option("--prompt", attn.prompt, "text (its last `context` characters)")->required();
  a->add_option("--out", attn.out, "PNG file")->required();

  InitArgs init;
  auto* i = app.add_subcommand("init", "write a freshly initialised model's weights");
  i->add_option("--config", init.config, "config file")->required();
  i->add_option("--out", init.out, "safetensors file")->required();
  i->add_option("--seed", init.seed, "override train.seed");

  InspectArgs inspect;
  auto* in = app.add_subcommand(
      "inspect", "a config's parameters and the memory a training step needs (on meta, instantly)");
  in->add_option("--config", inspect.config, "config file, e.g. configs/llama-7b.json")->required();

  LadderArgs ladder;
  auto* l = app.add_subcommand("ladder", "train every stage of the article's ladder");
  l->add_option("--steps-scale", ladder.steps_scale, "multiply the article's step counts")
      ->check(CLI::PositiveNumber);
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
  d->add_option("--ckpt", doc.ckpt, "run directory")->excludes(doc_config);
  d->add_option("--data", doc.data, "TinyShakespeare path");
  d->add_flag("--anomaly", doc.anomaly, "run the step under anomaly detection");
  d->add_flag("--verbose", doc.verbose, "print the gradient-flow table of every parameter");

  CLI11_PARSE(app, argc, argv);
  try {
    if (threads > 0) stride::set_num_threads(threads);
    if (*t) {
      if (train.config.empty() && !train.resume) {
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
