#include "run_dir.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "hf/hf.h"
#include "lm/inspect.h"
#include "lm/registry.h"
#include "lm/weights.h"
#include "stride/allocator.h"
#include "stride/cpu_capability.h"
#include "stride/data/tiny_shakespeare.h"
#include "stride/io.h"
#include "stride/ops.h"
#include "support/text.h"

namespace stride::app {

namespace {

constexpr const char* kSentencePieceFile = "tokenizer.model";

// Whether a tokenizer.json is stride's character vocabulary (not a Hugging
// Face file).
bool is_char_tokenizer_file(const fs::path& file) {
  const std::string text = data::read_text_file(file);
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return json.is_object() && json.value("format", "") == "stride.CharTokenizer";
}

}  // namespace

TokenizerPtr load_run_tokenizer(const fs::path& dir) {
  if (fs::exists(dir / kSentencePieceFile) || !is_char_tokenizer_file(tokenizer_path(dir))) {
    return data::load_tokenizer(dir.string());
  }
  return std::make_shared<data::CharTokenizer>(data::CharTokenizer::load(tokenizer_path(dir)));
}

void save_run_tokenizer(const data::Tokenizer& tokenizer,
                        const std::optional<fs::path>& source,
                        const fs::path& dir) {
  if (const data::CharTokenizer* chars = as_chars(tokenizer)) {
    chars->save(tokenizer_path(dir));
    return;
  }
  std::error_code ec;
  if (!source || fs::equivalent(*source, dir, ec)) return;
  for (const char* name : {kSentencePieceFile, "tokenizer.json"}) {
    if (!fs::exists(*source / name)) continue;
    io::write_file_atomically((dir / name).string(), data::read_text_file(*source / name), "train");
  }
}

LoadedRun load_run(const fs::path& dir) {
  if (!fs::exists(checkpoint_path(dir)) ||
      (!fs::exists(tokenizer_path(dir)) && !fs::exists(dir / kSentencePieceFile))) {
    throw IOError("no trained run in " + dir.string() + " (expected " +
                  checkpoint_path(dir).filename().string() + " and " +
                  tokenizer_path(dir).filename().string() +
                  "). Hint: pass the --out directory of `stride train`, e.g. --ckpt runs/demo.");
  }
  CheckpointState state = load_checkpoint(checkpoint_path(dir).string());
  lm::RunConfig config = lm::parse_saved_config(state.config, checkpoint_path(dir).string());
  lm::check_config_fits_checkpoint(config, state, checkpoint_path(dir).string());
  TokenizerPtr tokenizer = load_run_tokenizer(dir);
  // A character run's model has exactly its vocabulary; a Hugging Face
  // model's may have more ids than its tokenizer (padded).
  const int64_t have = tokenizer->vocab_size(), want = config.model.vocab_size;
  if (as_chars(*tokenizer) ? have != want : have > want) {
    throw ValueError("the tokenizer in " + dir.string() + " has " + std::to_string(have) +
                     " symbols but the model was built for " + std::to_string(want) +
                     ". Hint: the directory mixes files of two runs.");
  }
  auto model = lm::build_model(config.model);
  try {
    restore_checkpoint(state, *model, nullptr, nullptr);
  } catch (const Error& e) {
    throw ValueError("the checkpoint in " + dir.string() +
                     " does not fit the model of its config (" + config.model.arch +
                     "): " + e.what());
  }
  return {std::move(config), std::move(tokenizer), std::move(model), std::move(state)};
}

namespace {

// The run of a weights file: its tensors as the checkpoint's model state.
LoadedRun load_weights(const ModelSource& source, const std::optional<std::string>& data) {
  const std::string& path = *source.weights;
  io::SafetensorsContents file = io::load_safetensors(path);
  const auto meta = [&](const char* key) -> const std::string* {
    const auto it = file.metadata.find(key);
    return it == file.metadata.end() ? nullptr : &it->second;
  };
  lm::RunConfig config;
  if (source.config) {
    config = lm::load_config(*source.config);
  } else if (const std::string* saved = meta("stride.config")) {
    config = lm::parse_saved_config(*saved, path);
  } else {
    throw ValueError(path +
                     " carries no config (\"stride.config\" metadata). Hint: pass "
                     "--config FILE describing its model.");
  }
  TokenizerPtr tokenizer;
  if (const std::string* saved = meta("stride.tokenizer")) {
    tokenizer = std::make_shared<data::CharTokenizer>(data::CharTokenizer::from_json(*saved));
  } else {
    tokenizer = load_corpus(data).tokenizer;
  }
  config.model.vocab_size = tokenizer->vocab_size();
  WeightFormat format = WeightFormat::Float32;
  if (const std::string* saved = meta(lm::kWeightsDtypeKey)) {
    const std::optional<WeightFormat> parsed = parse_weight_format(*saved);
    if (!parsed) {
      throw ValueError(path + ": metadata \"" + lm::kWeightsDtypeKey + "\" is \"" + *saved +
                       "\"; stride writes bf16, int8 or int4 there");
    }
    format = *parsed;
  }
  CheckpointState state;
  state.model = lm::state_dict_from(std::move(file));
  auto model = lm::build_with_weights(config, state.model, path, format);
  return {std::move(config), std::move(tokenizer), std::move(model), std::move(state)};
}

// What a workload is, and what its memory is spent on, for the refusal's
// sentence.
std::pair<std::string, std::string> workload_text(const lm::RunConfig& config,
                                                  const lm::Workload& w) {
  const int64_t batch = w.batch_of(config), length = w.length_of(config);
  const std::string shape =
      std::to_string(batch) + " sequence(s) of " + std::to_string(length) + " tokens";
  switch (w.kind) {
    case lm::Workload::Kind::Model:
      break;
    case lm::Workload::Kind::Training:
      return {"a training step of this config",
              " (parameters, gradients, Adam state and activations at batch_size " +
                  std::to_string(batch) + " and context " + std::to_string(length) + ")"};
    case lm::Workload::Kind::Evaluation:
      return {"evaluating this config's model", " (its forward pass over " + shape + ")"};
    case lm::Workload::Kind::Generation:
      return {"generating with this config's model",
              " (its KV cache and forward pass over " + shape + ")"};
  }
  return {"the model of this config", ""};
}

}  // namespace

void check_fits_in_memory(const lm::RunConfig& config, const lm::Workload& workload) {
  const lm::MemoryEstimate need = lm::estimate_memory(config, workload);
  const size_t available = available_cpu_memory();
  if (need.peak_bytes <= available) return;
  const auto [what, detail] = workload_text(config, workload);
  throw ValueError(what + " needs " + bytes_text(need.peak_bytes) + detail + ", but " +
                   bytes_text(available) +
                   " is available. Hint: lower train.batch_size, model.context or the model's "
                   "size; `stride inspect --config FILE` shows where the memory goes.");
}

void check_fits_on_meta(const lm::RunConfig& config) {
  constexpr uint64_t kMaxTensors = 1'000'000;
  const lm::MemoryEstimate need = lm::estimate_memory(config);
  if (need.state_tensors > kMaxTensors) {
    throw ValueError("this config's model has " + std::to_string(need.state_tensors) +
                     " tensors (" + std::to_string(config.model.n_layers) +
                     " layers), more than the " + std::to_string(kMaxTensors) +
                     " stride lists. Hint: check model.n_layers.");
  }
}

LoadedRun load_model(const ModelSource& source, const std::optional<std::string>& data) {
  if (source.weights) return load_weights(source, data);
  if (source.ckpt) return load_run(*source.ckpt);
  throw ValueError(
      "this command needs a model: --ckpt DIR (a run of stride train) or "
      "--weights FILE (a safetensors file of weights).");
}

void note_bf16_autocast() {
  static bool said = false;
  if (said || cpu_has_bf16_dot_product()) return;
  said = true;
  std::cerr << "note: the CPU kernels in use have no bf16 dot-product instructions "
               "(AVX512-BF16): bf16 autocast computes its products in float32 on the "
               "bf16-rounded operands (the same numbers), decoding with the bf16 weights widened "
               "inside its kernel\n";
}

void export_weights(const LoadedRun& run, const std::string& path, WeightFormat format) {
  // A subword tokenizer stays in its files (the run directory's).
  const data::CharTokenizer* chars = as_chars(*run.tokenizer);
  io::Metadata metadata;
  if (chars) metadata["stride.tokenizer"] = chars->to_json();
  if (format != WeightFormat::Float32) {
    lm::pack_weights(*run.model, format);
    metadata[lm::kWeightsDtypeKey] = std::string(to_string(format));
  }
  lm::save_weights(path, *run.model, run.config, metadata);
}

void check_tokenizer_fits(const data::Tokenizer& tokenizer,
                          int64_t vocab_size,
                          const std::string& where) {
  if (tokenizer.vocab_size() > vocab_size) {
    throw ValueError(where + ": the tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                     " ids but the model's vocabulary " + std::to_string(vocab_size));
  }
}

Corpus load_corpus(const std::optional<std::string>& data_path, TokenizerPtr tokenizer) {
  const fs::path path = data::find_tinyshakespeare(data_path);
  if (!tokenizer || as_chars(*tokenizer)) {
    data::CharCorpus corpus =
        data::load_char_corpus(path, tokenizer ? as_chars(*tokenizer) : nullptr);
    return {std::make_shared<data::CharTokenizer>(std::move(corpus.tokenizer)),
            std::move(corpus.data)};
  }
  const std::vector<int64_t> ids = tokenizer->encode(data::read_text_file(path));
  if (ids.size() < 2) throw ValueError(path.string() + ": too short to train or evaluate on");
  return {std::move(tokenizer), data::TokenDataset(tensor<int64_t>(ids))};
}

std::vector<int64_t> encode_prompt(const data::Tokenizer& tokenizer, const std::string& prompt) {
  const data::CharTokenizer* chars = as_chars(tokenizer);
  if (const auto unknown = chars ? chars->first_unknown(prompt) : std::nullopt) {
    throw ValueError("the prompt contains " + data::escape_char(unknown->first) + " at byte " +
                     std::to_string(unknown->second) +
                     ", which is not in the model's vocabulary of " +
                     std::to_string(chars->vocab_size()) +
                     " characters. Hint: use only characters of the training text.");
  }
  std::vector<int64_t> ids = tokenizer.prefix_ids();
  const std::vector<int64_t> text = tokenizer.encode(prompt);
  ids.insert(ids.end(), text.begin(), text.end());
  return ids;
}

RunStart load_run_start(const TrainArgs& args) {
  RunStart start;
  if (args.resume) {
    LoadedRun run = load_run(*args.resume);
    start.cfg = run.config;
    start.tokenizer = run.tokenizer;
    start.resume_state = std::move(run.state);
  } else if (args.hf) {
    // Fine-tuning: the model is the directory's; a config gives the rest.
    if (!args.config.empty()) {
      start.cfg = lm::load_config(args.config);
      std::cout << "note: the model is " << *args.hf << "'s; " << args.config
                << " gives the train section only\n";
    } else {
      start.cfg.name = fs::path(*args.hf).filename().string();
    }
    start.cfg.model = hf::read_config(*args.hf);
    start.tokenizer = data::load_tokenizer(*args.hf);
    start.tokenizer_dir = fs::path(*args.hf);
  } else {
    start.cfg = lm::load_config(args.config);
  }
  return start;
}

void apply_overrides(const TrainArgs& args, const RunStart& run, lm::RunConfig& cfg) {
  for (const std::string& setting : args.settings) {
    if (run.resume_state && setting.rfind("train.", 0) != 0) {
      throw ValueError("--set " + setting +
                       ": a resumed run keeps its model and name; only "
                       "train.* keys can change.");
    }
    cfg = lm::with_setting(cfg, setting);
  }
  if (args.steps) {
    if (run.resume_state) {
      const int64_t done = run.resume_state->step;
      if (*args.steps <= done) {
        throw ValueError("the run in " + *args.resume + " is already at step " +
                         std::to_string(done) + "; --steps is the step to end at, not a count " +
                         "of more steps. Hint: --steps " + std::to_string(done + *args.steps) +
                         " trains " + std::to_string(*args.steps) + " more.");
      }
      if (cfg.train.decay_steps == 0) cfg.train.decay_steps = cfg.train.steps;
    }
    cfg.train.steps = *args.steps;
    if (cfg.train.schedule == "cosine" && cfg.train.warmup_steps >= cfg.train.schedule_steps()) {
      cfg.train.warmup_steps = cfg.train.steps / 10;
      std::cout << "note: --steps " << cfg.train.steps
                << " is shorter than the warm-up; warmup_steps set to " << cfg.train.warmup_steps
                << "\n";
    }
  }
  if (args.seed) cfg.train.seed = *args.seed;
  if (args.precision) cfg.train.precision = *args.precision;
  // The run records the schedule's length it trains with, so that a run
  // resumed to the same step saves the same config as one never stopped.
  if (cfg.train.decay_steps == 0) cfg.train.decay_steps = cfg.train.steps;
  cfg.train.validate();
}

void print_config_changes(const lm::RunConfig& saved, const lm::RunConfig& now) {
  const auto before = nlohmann::json::parse(lm::to_json(saved));
  const auto after = nlohmann::json::parse(lm::to_json(now));
  for (const auto& [section, values] : after.items()) {
    if (!values.is_object()) continue;
    for (const auto& [key, value] : values.items()) {
      const auto& old_value =
          before.at(section).contains(key) ? before.at(section).at(key) : nlohmann::json();
      if (old_value != value) {
        std::cout << "note: " << section << "." << key << " " << old_value.dump() << " -> "
                  << value.dump() << "\n";
      }
    }
  }
}

fs::path run_directory(const TrainArgs& args, const lm::RunConfig& cfg) {
  const fs::path dir = args.out      ? fs::path(*args.out)
                       : args.resume ? fs::path(*args.resume)
                                     : fs::path("runs") / cfg.name;
  std::error_code ec;
  const bool continues_it = args.resume && fs::equivalent(dir, *args.resume, ec);
  if (!continues_it && !args.force && fs::exists(checkpoint_path(dir))) {
    throw ValueError(dir.string() + " already holds a run (" +
                     checkpoint_path(dir).filename().string() + "). Hint: continue it with " +
                     "--resume " + dir.string() + ", or overwrite it with --force.");
  }
  return dir;
}

void write_curves(const fs::path& dir, const Curves& curves, const std::string& title) {
  write_line_chart_svg(dir / "loss.svg", {curves.steps, curves.train, curves.val},
                       {.title = title});
}

nlohmann::json metrics_line(const lm::StepResult& r, double tokens_per_s, double elapsed) {
  return {{"step", r.step},           {"train_loss", r.loss},         {"lr", r.lr},
          {"grad_norm", r.grad_norm}, {"tokens_per_s", tokens_per_s}, {"elapsed", elapsed},
          {"val_loss", nullptr}};
}

MetricsHistory truncate_metrics(const fs::path& file, int64_t checkpoint_step) {
  MetricsHistory h;
  std::ifstream in(file);
  std::string text;
  while (std::getline(in, text)) {
    const auto line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!line.is_object() || !line.contains("step") || !line["step"].is_number_integer()) continue;
    const int64_t step = line["step"].get<int64_t>();
    if (step > checkpoint_step) break;
    h.lines += text + "\n";
    if (line.contains("elapsed") && line["elapsed"].is_number()) {
      h.elapsed = line["elapsed"].get<double>();
    }
    if (line.contains("train_loss") && line["train_loss"].is_number()) {
      h.curves.add_step_loss(step, line["train_loss"].get<double>());
    }
    if (line.contains("val_loss") && line["val_loss"].is_number()) {
      const double val = line["val_loss"].get<double>();
      if (h.curves.val.x.empty()) {
        h.first_val_loss = val;
        h.first_val_step = step;
      }
      h.curves.val.x.push_back(double(step));
      h.curves.val.y.push_back(val);
      h.curves.train.x.push_back(double(step));
      h.curves.train.y.push_back(line.value("train_loss_estimate", line.value("train_loss", 0.0)));
    }
  }
  io::write_file_atomically(file.string(), h.lines, "train");
  return h;
}

}  // namespace stride::app
