// Per-op cost of autograd: a tiny add without and with recording, its
// forward+backward, and a Linear-shaped matmul forward+backward. PyTorch's
// numbers for the same workloads come from bench/pytorch_autograd.py.
#include <benchmark/benchmark.h>

#include <stride/stride.h>

namespace {

using namespace stride;

void BM_AddNoGrad(benchmark::State& state) {
  set_num_threads(1);
  Tensor a = randn({128}), b = randn({128});
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
}

void BM_AddRecording(benchmark::State& state) {
  set_num_threads(1);
  Tensor a = randn({128}).requires_grad_(), b = randn({128});
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
}

void BM_AddForwardBackward(benchmark::State& state) {
  set_num_threads(1);
  Tensor a = randn({128}).requires_grad_(), b = randn({128});
  for (auto _ : state) {
    add(a, b).sum().backward();
    a.mutable_grad() = Tensor();
  }
}

void BM_LinearForwardBackward(benchmark::State& state) {
  set_num_threads(int(state.range(0)));
  Tensor x = randn({512, 128});
  Tensor w = randn({128, 128}).requires_grad_(), bias = randn({128}).requires_grad_();
  for (auto _ : state) {
    (matmul(x, w.t()) + bias).sum().backward();
    w.mutable_grad() = Tensor();
    bias.mutable_grad() = Tensor();
  }
}

BENCHMARK(BM_AddNoGrad);
BENCHMARK(BM_AddRecording);
BENCHMARK(BM_AddForwardBackward);
BENCHMARK(BM_LinearForwardBackward)->Arg(1)->Arg(2);

}  // namespace

BENCHMARK_MAIN();
