// stride ladder: every stage of the article's ladder trained with its step
// counts, next to the article's printed numbers and the honest ones.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "llama/ladder.h"
#include "lm/registry.h"
#include "lm/train.h"
#include "run_dir.h"
#include "stride/doctor.h"
#include "stride/io.h"
#include "support/progress.h"
#include "support/text.h"

namespace stride::app {

namespace {

struct Row {
  std::string stage, article_class;
  int64_t params = 0, article_params = 0;
  std::vector<int64_t> steps;
  std::vector<double> article_val, our_val;
  double whole_split = 0, honest = 0;
  bool causal = false;
  double seconds = 0;
};

std::string fmt(double v) {
  return format("%.4f", v);
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " / ") + p;
  return out;
}

std::string markdown(const std::vector<Row>& rows, double scale) {
  std::ostringstream md;
  md << "| stage | params (ours / article) | steps | article val (at its steps) | ours val (same "
        "estimate) | "
        "val, whole split | honest val (prefix only) | causal |\n"
     << "|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    std::vector<std::string> steps, article, ours;
    for (size_t i = 0; i < r.steps.size(); ++i) {
      steps.push_back(std::to_string(r.steps[i]));
      article.push_back(i < r.article_val.size() ? fmt(r.article_val[i]) : "–");
      ours.push_back(fmt(r.our_val[i]));
    }
    md << "| " << r.article_class << " | " << r.params << " / "
       << (r.article_params > 0 ? std::to_string(r.article_params) : "–") << " | " << join(steps)
       << " | " << join(article) << " | " << join(ours) << " | " << fmt(r.whole_split) << " | "
       << fmt(r.honest) << " | " << (r.causal ? "yes" : "**no**") << " |\n";
  }
  md << "\nSteps scaled by " << scale << " from the article's. \"ours val\" is the article's "
     << "estimate (mean of 10 random val batches of 32 x 16, eval mode); \"val, whole split\" "
     << "scores every val position once with sequential windows; \"honest\" predicts each "
     << "position from its prefix only, as generation must.\n";
  return md.str();
}

void write_results(const std::vector<Row>& rows, const LadderArgs& args) {
  io::write_file_atomically((fs::path(args.out) / "ladder.md").string(),
                            markdown(rows, args.steps_scale), "ladder");
  nlohmann::json j = nlohmann::json::array();
  for (const Row& r : rows) {
    j.push_back({{"stage", r.stage},
                 {"article_class", r.article_class},
                 {"params", r.params},
                 {"article_params", r.article_params},
                 {"steps", r.steps},
                 {"article_val", r.article_val},
                 {"val_estimate", r.our_val},
                 {"val_whole_split", r.whole_split},
                 {"val_honest", r.honest},
                 {"causal", r.causal},
                 {"seconds", r.seconds}});
  }
  io::write_file_atomically(
      (fs::path(args.out) / "ladder.json").string(),
      nlohmann::json{{"steps_scale", args.steps_scale}, {"stages", j}}.dump(2) + "\n", "ladder");
}

}  // namespace

int run_ladder(const LadderArgs& args) {
  using Clock = std::chrono::steady_clock;
  const auto& stages = llama::ladder_stages();
  if (args.params_only) {
    // Counted on meta: the models are built without memory or initial values.
    DefaultDeviceGuard on_meta(kMeta);
    std::printf("%-22s %12s %12s\n", "stage", "ours", "article");
    for (const auto& s : stages) {
      auto model = lm::build_model(llama::article_run_config(s).model);
      std::printf("%-22s %12lld %12lld%s\n", std::string(s.article_class).c_str(),
                  static_cast<long long>(model->num_parameters(true)),
                  static_cast<long long>(s.article_params),
                  model->num_parameters(true) == s.article_params ? "" : "  MISMATCH");
    }
    lm::ModelConfig correct;
    auto model = lm::build_model(correct);
    std::printf("%-22s %12lld %12s\n", "Llama (correct)",
                static_cast<long long>(model->num_parameters(true)), "-");
    return 0;
  }
  const Corpus corpus = load_corpus(args.data);
  io::create_directories(args.out, "ladder --out");
  auto scaled = [&](int64_t steps) {
    return std::max<int64_t>(1, int64_t(std::llround(double(steps) * args.steps_scale)));
  };
  // The article's stages, then the correct Llama trained the same way
  // (same Adam, batches and steps as the article's first Llama run).
  std::vector<std::pair<lm::RunConfig, const llama::LadderStage*>> runs;
  for (const auto& s : stages) runs.emplace_back(llama::article_run_config(s), &s);
  lm::RunConfig correct = llama::article_run_config(stages.back());
  correct.name = "08_llama";
  correct.model = lm::ModelConfig{};
  correct.train.steps = 5000;
  runs.emplace_back(correct, nullptr);

  std::vector<Row> rows;
  for (size_t index = 0; index < runs.size(); ++index) {
    auto& [cfg, stage] = runs[index];
    const int number = int(index) + 1;
    if (!args.stages.empty() &&
        std::find(args.stages.begin(), args.stages.end(), number) == args.stages.end()) {
      continue;
    }
    const auto start = Clock::now();
    Row row;
    row.stage = cfg.name;
    row.article_class = stage ? std::string(stage->article_class) : "Llama (correct)";
    row.article_params = stage ? stage->article_params : 0;
    std::vector<int64_t> points;
    if (stage) {
      for (const auto& p : stage->article) {
        points.push_back(p.steps);
        row.article_val.push_back(p.val_loss);
      }
    } else {
      points.push_back(cfg.train.steps);
    }
    cfg.train.steps = scaled(points.back());
    manual_seed(cfg.train.seed);
    auto model = lm::build_model(cfg.model);
    row.params = model->num_parameters(true);
    lm::Trainer trainer(model, cfg.train, corpus.data);
    Generator eval_gen(cfg.train.seed + 1);
    for (int64_t p : points) {
      const int64_t target = scaled(p);
      while (trainer.steps_done() < target) trainer.step();
      row.steps.push_back(target);
      row.our_val.push_back(
          lm::estimate_loss(*model, corpus.data, data::Split::Val, 10, 32, eval_gen));
    }
    model->eval();
    row.causal =
        doctor::check_causality([&](const Tensor& ids) { return model->forward(ids); },
                                cfg.model.vocab_size, cfg.model.context, {.batch = 2, .trials = 1})
            .causal;
    row.whole_split = lm::evaluate_split(*model, corpus.data, data::Split::Val, 64).loss;
    row.honest = row.causal ? row.whole_split
                            : lm::evaluate_split(*model, corpus.data, data::Split::Val, 64,
                                                 /*prefix_only=*/true)
                                  .loss;
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::string estimates;
    for (size_t i = 0; i < row.steps.size(); ++i) {
      estimates +=
          format("%s%.4f@%lld", i ? " " : "", row.our_val[i], static_cast<long long>(row.steps[i]));
    }
    std::printf("%-22s %9lld params  val %s  whole %.4f  honest %.4f  %s  (%s)\n",
                row.article_class.c_str(), static_cast<long long>(row.params), estimates.c_str(),
                row.whole_split, row.honest, row.causal ? "causal" : "NOT causal",
                format_duration(row.seconds).c_str());
    std::fflush(stdout);
    rows.push_back(row);
    // Written after every stage, so a long run that is stopped keeps what it did.
    write_results(rows, args);
  }
  std::cout << "\n" << markdown(rows, args.steps_scale);
  std::cout << "wrote " << (fs::path(args.out) / "ladder.md").string() << " and ladder.json\n";
  return 0;
}

}  // namespace stride::app
