#include "lm/masked_eval.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "stride/autograd.h"
#include "stride/generator.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::lm {

namespace F = nn::functional;

namespace {

// `count` distinct positions of [0, n), uniformly: the first draws of a
// Fisher-Yates shuffle. (next_u64() % k leans towards small values by
// k / 2^64, far below anything a loss shows.)
std::vector<int64_t> draw_positions(int64_t n, int64_t count, Generator& gen) {
  std::vector<int64_t> order(size_t(n), 0);
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = 0; i < count; ++i) {
    const auto j = i + int64_t(gen.next_u64() % uint64_t(n - i));
    std::swap(order[size_t(i)], order[size_t(j)]);
  }
  order.resize(size_t(count));
  return order;
}

// One window, wrapped and masked: the model's input, and each masked
// position with the token it held.
struct MaskedWindow {
  std::vector<int64_t> ids;
  std::vector<std::pair<int64_t, int64_t>> masked;
};

MaskedWindow mask_window(const std::vector<int64_t>& text,
                         const MaskedEvalOptions& o,
                         Generator& gen) {
  MaskedWindow w;
  w.ids = o.prefix;
  w.ids.insert(w.ids.end(), text.begin(), text.end());
  w.ids.insert(w.ids.end(), o.suffix.begin(), o.suffix.end());
  const auto n = int64_t(text.size());
  const int64_t count = std::clamp<int64_t>(std::llround(o.fraction * double(n)), 1, n);
  const auto offset = int64_t(o.prefix.size());
  for (const int64_t p : draw_positions(n, count, gen)) {
    w.masked.emplace_back(offset + p, w.ids[size_t(offset + p)]);
    w.ids[size_t(offset + p)] = o.mask_id;
  }
  return w;
}

}  // namespace

MaskedLoss evaluate_masked_split(LanguageModel& model,
                                 const data::TokenDataset& data,
                                 data::Split split,
                                 const MaskedEvalOptions& o) {
  EvalScope eval(model);
  NoGradGuard no_grad;
  const int64_t context =
      o.context > 0 ? std::min(o.context, model.config().context) : model.config().context;
  if (!(o.fraction > 0 && o.fraction <= 1) || o.batch_size < 1) {
    throw ValueError(
        "[evaluate_masked_split] expected a fraction in (0, 1] and a batch size >= 1; "
        "got " +
        std::to_string(o.fraction) + " and " + std::to_string(o.batch_size) + ".");
  }
  const int64_t width = context - int64_t(o.prefix.size() + o.suffix.size());
  if (width < 1) {
    throw ValueError("[evaluate_masked_split] a context of " + std::to_string(context) +
                     " positions leaves no room for text beside the " +
                     std::to_string(o.prefix.size() + o.suffix.size()) +
                     " special tokens; give a longer one.");
  }
  const std::vector<int64_t> tokens = data.split(split).to_vector<int64_t>();
  auto windows = int64_t((tokens.size() + size_t(width) - 1) / size_t(width));
  if (o.max_windows > 0) windows = std::min(windows, o.max_windows);
  Generator gen(o.seed);
  MaskedLoss r;
  double total = 0;
  int64_t correct = 0;
  std::vector<MaskedWindow> batch;
  // Runs the windows gathered so far: all of one length.
  const auto flush = [&] {
    if (batch.empty()) return;
    const auto B = int64_t(batch.size()), T = int64_t(batch.front().ids.size());
    // The ids, and the masked positions alone (an encoder runs its head on
    // them only) with their tokens.
    std::vector<int64_t> ids, rows, y;
    for (const MaskedWindow& w : batch) {
      for (const auto& [position, token] : w.masked) {
        rows.push_back(int64_t(ids.size()) + position);
        y.push_back(token);
      }
      ids.insert(ids.end(), w.ids.begin(), w.ids.end());
    }
    const auto R = int64_t(rows.size());
    const Tensor logits = model.logits_at(tensor<int64_t>(ids, {B, T}), tensor<int64_t>(rows, {R}));
    const Tensor target = tensor<int64_t>(y, {R});
    total += F::cross_entropy(logits, target, data::kIgnoreIndex, F::Reduction::Sum).item<double>();
    correct += logits.argmax(-1).eq(target).sum().item<int64_t>();
    r.masked += R;
    r.windows += B;
    batch.clear();
  };
  for (int64_t w = 0; w < windows; ++w) {
    const auto begin = tokens.begin() + w * width;
    const auto end = tokens.begin() + std::min<int64_t>((w + 1) * width, int64_t(tokens.size()));
    MaskedWindow masked = mask_window(std::vector<int64_t>(begin, end), o, gen);
    if (!batch.empty() &&
        (masked.ids.size() != batch.front().ids.size() || int64_t(batch.size()) == o.batch_size)) {
      flush();
    }
    batch.push_back(std::move(masked));
  }
  flush();
  r.loss = r.masked > 0 ? total / double(r.masked) : std::nan("");
  r.accuracy = r.masked > 0 ? double(correct) / double(r.masked) : std::nan("");
  return r;
}

}  // namespace stride::lm
