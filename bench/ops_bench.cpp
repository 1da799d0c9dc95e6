// Tensor ops through stride's public API, at the shapes the tiny Llama uses.
// bench/pytorch_ops.py times the same workloads in PyTorch, and
// bench/compare_ops.sh runs both and prints the side-by-side table.
//
//   build-bench/bench/ops_bench --benchmark_repetitions=5
//                               --benchmark_report_aggregates_only=true
//
// Names read <op>/<shape>/threads:<t>; the thread count is stride's pool
// (stride::set_num_threads), set before the timed loop. Every result is kept
// alive through benchmark::DoNotOptimize, so the op cannot be skipped, and the
// output tensor is freed inside the loop as it would be in a real program.
// Inputs are float32, drawn from a fixed seed outside the timing.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stride/generator.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "stride/parallel.h"
#include "stride/tensor.h"

namespace {

using stride::Tensor;

// Inputs are made once per workload; the op runs on them in the timed loop.
struct Workload {
  std::string op;
  std::string shape;
  std::function<std::vector<Tensor>()> make;
  std::function<Tensor(const std::vector<Tensor>&)> run;
};

Tensor randn(std::vector<int64_t> shape) {
  return stride::randn(shape);
}

// A maker of fresh randn inputs of the given shapes.
std::function<std::vector<Tensor>()> inputs(std::vector<std::vector<int64_t>> shapes) {
  return [shapes] {
    std::vector<Tensor> in;
    for (const auto& s : shapes) in.push_back(randn(s));
    return in;
  };
}

std::vector<Workload> workloads() {
  using In = const std::vector<Tensor>&;
  std::vector<Workload> w;
  // Binary ops: contiguous, transposed operands (a.t() + b.t() of 1024x512),
  // and a row broadcast over a matrix.
  for (const std::string op : {"add", "mul"}) {
    auto f = [op](const Tensor& a, const Tensor& b) { return op == "add" ? a + b : a * b; };
    w.push_back({op, "512x1024", inputs({{512, 1024}, {512, 1024}}),
                 [f](In in) { return f(in[0], in[1]); }});
    w.push_back({op, "T(1024x512)", inputs({{1024, 512}, {1024, 512}}),
                 [f](In in) { return f(in[0].t(), in[1].t()); }});
    w.push_back({op, "512x1024+1024", inputs({{512, 1024}, {1024}}),
                 [f](In in) { return f(in[0], in[1]); }});
  }
  w.push_back({"exp", "512x1024", inputs({{512, 1024}}), [](In in) { return stride::exp(in[0]); }});
  w.push_back(
      {"gelu", "512x1024", inputs({{512, 1024}}), [](In in) { return stride::gelu(in[0]); }});
  w.push_back(
      {"sum", "512x1024,dim=0", inputs({{512, 1024}}), [](In in) { return in[0].sum({0}); }});
  w.push_back(
      {"sum", "512x1024,dim=1", inputs({{512, 1024}}), [](In in) { return in[0].sum({1}); }});
  w.push_back({"sum", "512x1024,all", inputs({{512, 1024}}), [](In in) { return in[0].sum(); }});
  for (auto [r, c] : {std::pair<int64_t, int64_t>{512, 65}, {4096, 256}}) {
    w.push_back({"softmax", std::to_string(r) + "x" + std::to_string(c), inputs({{r, c}}),
                 [](In in) { return in[0].softmax(-1); }});
  }
  const auto matmul = [](In in) { return in[0].matmul(in[1]); };
  w.push_back({"matmul", "512x128@128x128", inputs({{512, 128}, {128, 128}}), matmul});
  w.push_back({"matmul", "512x128@128x65", inputs({{512, 128}, {128, 65}}), matmul});
  w.push_back({"matmul", "256x(16x16@16x16)", inputs({{256, 16, 16}, {256, 16, 16}}), matmul});
  w.push_back({"matmul", "512x512@512x512", inputs({{512, 512}, {512, 512}}), matmul});
  w.push_back({"matmul", "1024x1024@1024x1024", inputs({{1024, 1024}, {1024, 1024}}), matmul});
  // The Llama's own ops at the correct Llama's sizes (512 tokens, d 128,
  // FFN 352, 8 heads of 16; the article's heads are 128 wide): what PyTorch
  // runs for them, e.g. scaled_dot_product_attention, against stride's
  // kernels.
  namespace F = stride::nn::functional;
  w.push_back({"rms_norm", "512x128", inputs({{512, 128}, {128}}),
               [](In in) { return F::rms_norm(in[0], in[1], 1e-5); }});
  w.push_back({"swiglu", "512x352", inputs({{512, 352}, {512, 352}}),
               [](In in) { return F::swiglu(in[0], in[1]); }});
  for (const int64_t e : {16, 128}) {
    w.push_back({"sdpa_causal", "32x8x16x" + std::to_string(e),
                 inputs({{32, 8, 16, e}, {32, 8, 16, e}, {32, 8, 16, e}}), [](In in) {
                   return F::scaled_dot_product_attention(in[0], in[1], in[2], {}, 0.0, true);
                 }});
  }
  return w;
}

void run_workload(benchmark::State& state, const Workload& w) {
  stride::set_num_threads(static_cast<int>(state.range(0)));
  stride::manual_seed(0);
  const std::vector<Tensor> in = w.make();
  for (auto _ : state) {
    Tensor out = w.run(in);
    benchmark::DoNotOptimize(out.data_ptr());
    benchmark::ClobberMemory();
  }
}

const bool kRegistered = [] {
  for (const Workload& w : workloads()) {
    benchmark::RegisterBenchmark((w.op + "/" + w.shape).c_str(), run_workload, w)
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
