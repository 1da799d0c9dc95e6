// stride eval / generate / attention / init: using a trained (or fresh) model.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <tuple>
#include <utility>

#include "commands.h"
#include "gguf/gguf.h"
#include "hf/hf.h"
#include "lm/generate.h"
#include "lm/masked_eval.h"
#include "lm/registry.h"
#include "lm/train.h"
#include "lm/weights.h"
#include "run_dir.h"
#include "stride/autocast.h"
#include "stride/autograd.h"
#include "stride/data/gguf_tokenizer.h"
#include "stride/data/tokenizer.h"
#include "stride/doctor.h"
#include "stride/io.h"
#include "stride/ops.h"
#include "stride/plot.h"
#include "support/text_streamer.h"

namespace stride::app {

namespace {

// A pretrained model: a Hugging Face directory's (--hf) or a GGUF file's
// (--gguf), with its own tokenizer.
struct Pretrained {
  std::string source;  // the directory or file, for messages
  std::shared_ptr<lm::LanguageModel> model;
  TokenizerPtr tokenizer;
};

// The run config of --hf DIR or --gguf FILE's model, read without its
// weights (a GGUF file is mapped, and only its header is read).
lm::RunConfig pretrained_run_config(const std::optional<std::string>& hf,
                                    const std::optional<std::string>& gguf_file) {
  lm::RunConfig config;
  config.model =
      hf ? hf::read_config(*hf) : gguf::read_config(io::map_gguf(*gguf_file), *gguf_file);
  return config;
}

// Loads --hf DIR or --gguf FILE, after checking that `workload` fits in
// memory for the model its config describes.
Pretrained load_pretrained(const std::optional<std::string>& hf,
                           const std::optional<std::string>& gguf_file,
                           const lm::Workload& workload) {
  check_fits_in_memory(pretrained_run_config(hf, gguf_file), workload);
  Pretrained p;
  if (hf) {
    p.source = *hf;
    p.tokenizer = data::load_tokenizer(*hf);
    p.model = hf::load(*hf);
  } else {
    p.source = *gguf_file;
    p.tokenizer = data::load_gguf_tokenizer(io::map_gguf(*gguf_file).header, *gguf_file);
    p.model = gguf::load(*gguf_file);
  }
  check_tokenizer_fits(*p.tokenizer, p.model->config().vocab_size, p.source);
  return p;
}

data::Split parse_split(const std::string& name) {
  return name == "test"    ? data::Split::Test
         : name == "train" ? data::Split::Train
                           : data::Split::Val;
}

WeightFormat weight_format(const std::string& name) {
  const std::optional<WeightFormat> format = parse_weight_format(name);
  if (!format) {
    throw ValueError("--weights-dtype must be float32, bf16, int8 or int4; got \"" + name + "\".");
  }
  return *format;
}

// --weights-dtype's list for eval: comma-separated names, or "all" (bf16,
// int8, int4); float32, which eval always reports, is left out.
std::vector<WeightFormat> weight_formats(const std::string& list) {
  if (list == "all") return {WeightFormat::BFloat16, WeightFormat::Int8, WeightFormat::Int4};
  std::vector<WeightFormat> formats;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const WeightFormat f = weight_format(list.substr(start, comma - start));
    if (f != WeightFormat::Float32) formats.push_back(f);
    start = comma + 1;
  }
  return formats;
}

double megabytes(int64_t bytes) {
  return double(bytes) / 1e6;
}

// Packs the model's linear layers in `format` and says so on stderr: the
// format, the layers and the model's bytes before and after.
void pack_model(lm::LanguageModel& model, WeightFormat format) {
  const lm::PackedWeights packed = lm::pack_weights(model, format);
  std::cerr << "note: the weights of " << packed.packed_layers << " linear layers are stored as "
            << to_string(format)
            << (is_blocked(format)
                    ? " (blocks of 32 with a float16 scale, as GGUF's " +
                          std::string(format == WeightFormat::Int8 ? "Q8_0" : "Q4_0") + ")"
                    : std::string())
            << "; the model's weights take " << megabytes(packed.bytes_after) << " MB instead of "
            << megabytes(packed.bytes_before) << " MB";
  if (packed.kept_layers > 0) {
    std::cerr << " (" << packed.kept_layers
              << " layers stay as they were: stored packed already, or with inputs that are not "
                 "a multiple of 32)";
  }
  std::cerr << "\n";
}

// The id of the token an encoder's tokenizer masks with: tokenizer_config.json's
// mask_token (a string, or an object with its "content"), else "[MASK]".
int64_t mask_token_id(const Pretrained& p) {
  std::string token = "[MASK]";
  const fs::path config = fs::path(p.source) / "tokenizer_config.json";
  if (fs::exists(config)) {
    const auto c = nlohmann::json::parse(data::read_text_file(config), nullptr, false);
    if (c.is_object() && c.contains("mask_token")) {
      const nlohmann::json& m = c["mask_token"];
      if (m.is_string()) token = m.get<std::string>();
      if (m.is_object() && m.contains("content") && m["content"].is_string()) {
        token = m["content"].get<std::string>();
      }
    }
  }
  const std::optional<int64_t> id = p.tokenizer->token_to_id(token);
  if (!id) {
    throw ValueError("eval --hf " + p.source + ": the tokenizer has no mask token \"" + token +
                     "\", and a masked language model is evaluated on masked tokens. Hint: "
                     "name it as mask_token in tokenizer_config.json.");
  }
  return *id;
}

// The special tokens the tokenizer puts before and after one sequence
// (BERT: [CLS] and [SEP]), read off its wrapping of a one-token sequence.
std::pair<std::vector<int64_t>, std::vector<int64_t>> special_tokens_around(
    const data::Tokenizer& tokenizer, int64_t probe) {
  const std::vector<int64_t> none = tokenizer.with_special_tokens({}).ids;
  const std::vector<int64_t> one = tokenizer.with_special_tokens({probe}).ids;
  // The probe sits where the two first differ.
  const auto at = size_t(std::mismatch(none.begin(), none.end(), one.begin()).first - none.begin());
  return {std::vector<int64_t>(one.begin(), one.begin() + int64_t(at)),
          std::vector<int64_t>(one.begin() + int64_t(at) + 1, one.end())};
}

// eval --hf DIR of an encoder (BERT): its loss at masked tokens
// (lm::evaluate_masked_split), 15% of each window's, for float32 and each
// --weights-dtype format.
int eval_masked(const EvalArgs& args, Pretrained p, int64_t T) {
  constexpr uint64_t kMaskSeed = 0;
  const data::TokenDataset data = load_corpus(args.data, p.tokenizer).data;
  const data::Split split = parse_split(args.split);
  lm::MaskedEvalOptions options;
  options.mask_id = mask_token_id(p);
  std::tie(options.prefix, options.suffix) = special_tokens_around(*p.tokenizer, options.mask_id);
  options.seed = kMaskSeed;
  options.batch_size = args.batch;
  options.max_windows = args.max_windows;
  options.context = T;
  const lm::MaskedLoss whole = lm::evaluate_masked_split(*p.model, data, split, options);
  std::cout << p.source << " (" << p.model->config().arch << ", an encoder, "
            << p.model->num_parameters() << " parameters) on the " << args.split << " split ("
            << data.bounds(split).size() << " tokens)\n"
            << "  masked-token loss over "
            << (args.max_windows > 0
                    ? "its first " + std::to_string(whole.windows) + " windows"
                    : "the whole split (" + std::to_string(whole.windows) + " windows)")
            << " of " << T << " positions, 15% of each window's tokens masked (seed " << kMaskSeed
            << "): " << whole.loss << " per masked token (" << whole.masked
            << " positions), perplexity " << std::exp(whole.loss) << ", top-1 accuracy "
            << 100.0 * whole.accuracy << "%\n";
  // Each format packs the model as loaded (packing is one-way).
  for (const WeightFormat format : weight_formats(args.weights_dtype)) {
    p = load_pretrained(args.hf, args.gguf, {lm::Workload::Kind::Evaluation, args.batch, T});
    pack_model(*p.model, format);
    const lm::MaskedLoss packed = lm::evaluate_masked_split(*p.model, data, split, options);
    std::cout << "  with " << to_string(format) << " weights: " << packed.loss
              << " per masked token (" << std::showpos << packed.loss - whole.loss << std::noshowpos
              << "), top-1 accuracy " << 100.0 * packed.accuracy << "%\n";
  }
  return 0;
}

// eval --hf DIR / --gguf FILE: a pretrained model's loss on the text
// tokenized with its own tokenizer, per token and in bits per byte, which
// compares models whatever their tokenizers (the character-level runs' bits
// per character are bits per byte on TinyShakespeare's ASCII).
int eval_pretrained(const EvalArgs& args) {
  const lm::RunConfig config = pretrained_run_config(args.hf, args.gguf);
  const int64_t T =
      args.context > 0 ? std::min(args.context, config.model.context) : config.model.context;
  Pretrained p =
      load_pretrained(args.hf, args.gguf, {lm::Workload::Kind::Evaluation, args.batch, T});
  if (!p.model->is_causal()) return eval_masked(args, std::move(p), T);
  const TokenizerPtr tokenizer = p.tokenizer;
  lm::LanguageModel* model = p.model.get();
  const data::TokenDataset data = load_corpus(args.data, tokenizer).data;
  const data::Split split = parse_split(args.split);
  auto evaluate = [&] {
    return lm::evaluate_split(*model, data, split, args.batch, false, args.max_windows, T);
  };
  const lm::SplitLoss whole = evaluate();
  // The bytes of the targets scored: positions 1..n of the split.
  const Tensor targets = data.split(split).slice(0, 1, whole.positions + 1);
  const auto bytes = double(tokenizer->decode(targets.to_vector<int64_t>()).size());
  auto bits_per_byte = [&](const lm::SplitLoss& l) {
    return l.loss * double(l.positions) / bytes / std::numbers::ln2;
  };
  std::cout << p.source << " (" << model->config().arch << ", " << model->num_parameters()
            << " parameters) on the " << args.split << " split (" << data.bounds(split).size()
            << " tokens)\n"
            << "  loss over " << (args.max_windows > 0 ? "its first windows" : "the whole split")
            << " of " << T << " tokens: " << whole.loss << " per token (" << whole.positions
            << " positions), perplexity " << std::exp(whole.loss) << ", " << bits_per_byte(whole)
            << " bits per byte\n";
  // Each format packs the model as loaded (packing is one-way).
  for (const WeightFormat format : weight_formats(args.weights_dtype)) {
    p = load_pretrained(args.hf, args.gguf, {lm::Workload::Kind::Evaluation, args.batch, T});
    model = p.model.get();
    pack_model(*model, format);
    const lm::SplitLoss packed = evaluate();
    std::cout << "  with " << to_string(format) << " weights: " << packed.loss << " per token ("
              << std::showpos << packed.loss - whole.loss << std::noshowpos << "), perplexity "
              << std::exp(packed.loss) << ", " << bits_per_byte(packed) << " bits per byte ("
              << std::showpos << bits_per_byte(packed) - bits_per_byte(whole) << std::noshowpos
              << ")\n";
  }
  return 0;
}

}  // namespace

int run_eval(const EvalArgs& args) {
  if (args.hf || args.gguf) return eval_pretrained(args);
  LoadedRun run = load_model(args.model, args.data);
  const Corpus corpus = load_corpus(args.data, run.tokenizer);
  const data::Split split = parse_split(args.split);
  lm::LanguageModel& model = *run.model;
  const int64_t B = run.config.train.batch_size, context = run.config.model.context;
  const int64_t tokens = corpus.data.bounds(split).size();
  // Every forward pass below runs at most B windows of T tokens: the whole
  // split's windows (no more than it holds), the causality check's two, and
  // the article's estimate, B random windows of the whole context and their
  // next token where the split has that many.
  const int64_t T = std::max<int64_t>(1, std::min(context, tokens - 1));
  const bool article_estimate = tokens >= context + 2;
  const int64_t windows = (tokens - 1 + T - 1) / T;
  const int64_t batch = std::max<int64_t>(article_estimate ? B : std::min(B, windows), 2);
  check_fits_in_memory(run.config, {lm::Workload::Kind::Evaluation, batch, T});
  std::cout << run.config.name << " (" << run.config.model.arch << ", step " << run.state.step
            << ") on the " << args.split << " split (" << tokens
            << (as_chars(*run.tokenizer) ? " characters)\n" : " tokens)\n");
  const lm::SplitLoss whole = lm::evaluate_split(model, corpus.data, split, B);
  const char* bits_per = as_chars(*run.tokenizer) ? " bits per character" : " bits per token";
  std::cout << "  loss over the whole split, sequential windows: " << whole.loss << " ("
            << whole.positions << " positions): " << whole.loss / std::numbers::ln2 << bits_per
            << ", perplexity " << std::exp(whole.loss) << "\n"
            << "  loss at the last position of each window:     " << whole.last_position_loss
            << " (" << whole.last_positions << " positions, each from a full context, as in "
            << "generation)\n";
  // The article's estimate draws windows of the whole context and its next
  // token.
  if (article_estimate) {
    Generator gen(run.config.train.seed);
    const double estimate = lm::estimate_loss(model, corpus.data, split, 10, B, gen);
    std::cout << "  article-style estimate, 10 random batches:     " << estimate << "\n";
  } else {
    std::cout << "  article-style estimate: none (its random windows of " << context
              << " tokens and their next token need more than the split's " << tokens << ")\n";
  }
  // A model that reads the future scores better on whole windows than it
  // can when generating: give the loss it has when the future is absent.
  // The check runs a forward per position, so it looks at the first
  // positions only (a missing mask or a norm over the sequence leaks at
  // any length); `stride doctor` checks the whole context.
  constexpr int64_t kCausalityPositions = 128;
  model.eval();
  const auto causal = doctor::check_causality(
      [&](const Tensor& ids) { return model.forward(ids); }, run.config.model.vocab_size,
      std::min(T, kCausalityPositions), {.batch = 2, .trials = 1});
  if (!causal.causal) {
    const lm::SplitLoss honest =
        lm::evaluate_split(model, corpus.data, split, B, /*prefix_only=*/true);
    std::cout << "  the model is NOT causal (it reads later tokens); the loss it has when the\n"
              << "  future is absent (each position from its prefix only): " << honest.loss << "\n";
  }
  // Each format packs the run's model as loaded (packing is one-way).
  for (const WeightFormat format : weight_formats(args.weights_dtype)) {
    LoadedRun fresh = load_model(args.model, args.data);
    pack_model(*fresh.model, format);
    const lm::SplitLoss packed = lm::evaluate_split(*fresh.model, corpus.data, split, B);
    std::cout << "  with " << to_string(format) << " weights, the whole split: " << packed.loss
              << " (" << std::showpos << packed.loss - whole.loss << std::noshowpos
              << "): " << packed.loss / std::numbers::ln2 << bits_per << "\n";
  }
  return 0;
}

namespace {

lm::GenerateOptions generate_options(const GenerateArgs& args) {
  lm::GenerateOptions opt;
  opt.max_new_tokens = args.tokens;
  opt.seed = args.seed;
  opt.sampling = {args.temperature, args.top_k, args.top_p};
  opt.slide = args.window;
  return opt;
}

// Streams the continuation of `prompt` to stdout; with --stats-json, writes
// the new ids and the times of the prefill (up to the first new token) and
// of the decoding after it.
void stream_generation(lm::LanguageModel& model,
                       const data::Tokenizer& tokenizer,
                       const std::vector<int64_t>& prompt,
                       const GenerateArgs& args) {
  using Clock = std::chrono::steady_clock;
  if (args.precision == "bf16") note_bf16_autocast();
  std::cout << args.prompt << std::flush;
  AutocastGuard autocast(args.precision == "bf16");
  TextStreamer out(tokenizer, prompt, std::cout);
  std::vector<int64_t> ids;
  const Clock::time_point start = Clock::now();
  Clock::time_point first, last;
  lm::generate(model, prompt, generate_options(args), [&](int64_t id) {
    last = Clock::now();
    if (ids.empty()) first = last;
    ids.push_back(id);
    out.push(id);
  });
  out.finish();
  std::cout << "\n";
  if (!args.stats_json) return;
  const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  const double decode = ids.empty() ? 0.0 : seconds(last - first);
  const nlohmann::json stats = {
      {"prompt_tokens", prompt.size()},
      {"new_tokens", ids.size()},
      {"prefill_s", ids.empty() ? 0.0 : seconds(first - start)},
      {"decode_s", decode},
      {"decode_tokens_per_s", ids.size() > 1 && decode > 0 ? double(ids.size() - 1) / decode : 0.0},
      {"ids", ids}};
  io::write_file_atomically(*args.stats_json, stats.dump() + "\n", "generate --stats-json");
}

// generate --hf DIR / --gguf FILE: a pretrained model and its tokenizer
// (SentencePiece or byte-level BPE).
int generate_pretrained(const GenerateArgs& args) {
  lm::require_causal(pretrained_run_config(args.hf, args.gguf).model, "generate");
  Pretrained p = load_pretrained(args.hf, args.gguf, {lm::Workload::Kind::Generation});
  const TokenizerPtr tokenizer = p.tokenizer;
  const std::shared_ptr<lm::LanguageModel> model = p.model;
  const WeightFormat format = weight_format(args.weights_dtype);
  if (format != WeightFormat::Float32) pack_model(*model, format);
  const std::vector<int64_t> prompt = encode_prompt(*tokenizer, args.prompt);
  if (prompt.empty()) throw ValueError("the prompt is empty.");
  stream_generation(*model, *tokenizer, prompt, args);
  return 0;
}

}  // namespace

int run_generate(const GenerateArgs& args) {
  if (args.hf || args.gguf) return generate_pretrained(args);
  LoadedRun run = load_model(args.model, std::nullopt);
  // Generation holds a KV cache of the whole context.
  check_fits_in_memory(run.config, {lm::Workload::Kind::Generation});
  const WeightFormat format = weight_format(args.weights_dtype);
  if (format != WeightFormat::Float32) pack_model(*run.model, format);
  const std::vector<int64_t> prompt = encode_prompt(*run.tokenizer, args.prompt);
  if (prompt.empty())
    throw ValueError("the prompt is empty. Hint: omit --prompt to start from a newline.");
  if (args.temperature == 0) {
    std::cerr << "note: temperature 0 is greedy decoding (the most likely character each "
                 "time); --seed, --top-k and --top-p have no effect\n";
  }
  stream_generation(*run.model, *run.tokenizer, prompt, args);
  return 0;
}

namespace {

// A prompt character as an axis label: newline and space made visible.
std::string axis_label(const std::string& symbol) {
  if (symbol == "\n") return "\u23ce";  // ⏎
  if (symbol == " ") return "\u2423";   // ␣
  if (symbol == "\t") return "\u21e5";  // ⇥
  return data::valid_utf8(symbol);      // a token may hold part of a character
}

// The labels of an attention grid: the prompt's tokens on both axes
// (queries down, keys across), "layer L, head H" over each map.
plot::HeatmapLabels attention_labels(const std::string& model_name,
                                     const data::Tokenizer& tokenizer,
                                     const std::vector<int64_t>& ids,
                                     size_t layers,
                                     int64_t heads) {
  plot::HeatmapLabels labels;
  labels.title = model_name + ": attention of each query (row) to each key (column)";
  for (int64_t id : ids) labels.row_labels.push_back(axis_label(tokenizer.decode({id})));
  labels.col_labels = labels.row_labels;
  for (size_t l = 0; l < layers; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      labels.map_titles.push_back("layer " + std::to_string(l) + ", head " + std::to_string(h));
    }
  }
  return labels;
}

// The ids whose attention is drawn: a causal model's prompt (its last
// context tokens), or an encoder's text between the special tokens its
// tokenizer adds ([CLS] ... [SEP]), cut to fit the context.
std::vector<int64_t> attention_prompt(const lm::LanguageModel& model,
                                      const data::Tokenizer& tokenizer,
                                      const std::string& prompt) {
  const int64_t context = model.config().context;
  std::vector<int64_t> ids =
      model.is_causal() ? encode_prompt(tokenizer, prompt) : tokenizer.encode(prompt);
  if (ids.empty()) throw ValueError("the prompt is empty.");
  if (model.is_causal()) {
    if (int64_t(ids.size()) > context) ids.erase(ids.begin(), ids.end() - context);
    return ids;
  }
  const auto specials = int64_t(tokenizer.with_special_tokens({}).ids.size());
  if (int64_t(ids.size()) > context - specials)
    ids.resize(size_t(std::max<int64_t>(context - specials, 0)));
  return tokenizer.with_special_tokens(ids).ids;
}

}  // namespace

int run_attention(const AttentionArgs& args) {
  // The model, its tokenizer and its name over the grid.
  std::shared_ptr<lm::LanguageModel> model;
  TokenizerPtr tokenizer;
  std::string name;
  if (args.hf || args.gguf) {
    Pretrained p = load_pretrained(args.hf, args.gguf, {lm::Workload::Kind::Generation});
    model = p.model;
    tokenizer = p.tokenizer;
    name = p.source + " (" + model->config().arch + ")";
  } else {
    LoadedRun run = load_model(args.model, std::nullopt);
    model = run.model;
    tokenizer = run.tokenizer;
    name = run.config.name + " (" + run.config.model.arch + "), step " +
           std::to_string(run.state.step);
  }
  const std::vector<int64_t> ids = attention_prompt(*model, *tokenizer, args.prompt);
  model->eval();
  model->record_attention(true);
  {
    NoGradGuard no_grad;
    model->forward(tensor<int64_t>(ids, {1, int64_t(ids.size())}));
  }
  const auto& maps = model->attention_maps();
  if (maps.empty()) {
    throw ValueError("the model (" + model->config().arch + ") has no attention layers.");
  }
  std::vector<plot::Heatmap> cells;
  const int64_t H = maps.front().size(1), T = maps.front().size(2);
  for (const Tensor& layer : maps) {
    for (int64_t h = 0; h < H; ++h) {
      cells.push_back(
          {layer.select(0, 0).select(0, h).to(kFloat32).contiguous().to_vector<float>(), T, T});
    }
  }
  const plot::HeatmapLabels labels = attention_labels(name, *tokenizer, ids, maps.size(), H);
  if (fs::path(args.out).extension() == ".svg") {
    plot::write_heatmap_grid_svg(args.out, cells, labels, {.grid_cols = H});
  } else {
    plot::write_heatmap_grid_png(args.out, cells, labels, {.grid_cols = H});
  }
  std::cout << "wrote " << args.out << ": " << maps.size() << " layers (rows) x " << H
            << " heads (columns), each " << T << " x " << T
            << " (query row attends to key column) for \""
            << data::valid_utf8(tokenizer->decode(ids)) << "\"\n";
  return 0;
}

int run_export(const ExportArgs& args) {
  const LoadedRun run = load_run(args.ckpt);
  if (args.hf && args.weights_dtype != "float32") {
    throw ValueError(
        "export --hf writes float32 weights, as transformers reads them; "
        "--weights-dtype " +
        args.weights_dtype + " goes with --out FILE.");
  }
  if (args.hf) {
    hf::save(*run.model, *args.hf);
    // A subword tokenizer goes with the model; the character one has no
    // Hugging Face form and stays in the run.
    const bool chars = as_chars(*run.tokenizer) != nullptr;
    if (!chars) save_run_tokenizer(*run.tokenizer, fs::path(args.ckpt), *args.hf);
    std::cout << "wrote " << *args.hf << " (config.json, model.safetensors"
              << (chars ? "" : ", the tokenizer")
              << ") for transformers' from_pretrained: " << run.model->name() << " at step "
              << run.state.step
              << (chars ? "; the character tokenizer stays in " + args.ckpt + "/tokenizer.json"
                        : std::string())
              << "\n";
    return 0;
  }
  if (!args.out) throw ValueError("export needs --out FILE or --hf DIR.");
  const WeightFormat format = weight_format(args.weights_dtype);
  export_weights(run, *args.out, format);
  std::cout << "wrote " << *args.out << ": " << run.model->state_dict().size() << " tensors of "
            << run.model->name() << " at step " << run.state.step
            << (format == WeightFormat::Float32
                    ? std::string()
                    : " (linear layers' weights as " + std::string(to_string(format)) + ")")
            << ", with its config" << (as_chars(*run.tokenizer) ? " and tokenizer" : "")
            << " as metadata\n";
  return 0;
}

int run_init(const InitArgs& args) {
  lm::RunConfig cfg = lm::load_config(args.config);
  check_fits_in_memory(cfg, {lm::Workload::Kind::Model});
  manual_seed(args.seed.value_or(cfg.train.seed));
  auto model = lm::build_model(cfg.model);
  io::save_safetensors(args.out, model->state_dict().items(),
                       {{"stride.config", lm::to_json(cfg)}});
  std::cout << "wrote " << args.out << ": " << model->name() << ", " << model->num_parameters(true)
            << " parameters\n";
  return 0;
}

}  // namespace stride::app
