// GEMM backends side by side at the shapes stride's models use, in GFLOP/s.
//
//   build/bench/gemm_bench --benchmark_filter=sgemm/ --benchmark_repetitions=5
//                          --benchmark_report_aggregates_only=true
//
// Names read <kind>/<shape>/<backend>/threads:<t>. Shapes are m x n x k with
// the transposes of op(A) and op(B) (N or T), b<batch>_ for batched GEMMs.
// Kinds: sgemm, sgemm_batched, dgemm, dgemm_batched, bf16gemm (stride's
// bfloat16 x bfloat16 -> float32 GEMM of autocast, when the CPU has one), and
// decode (stride's one-row GEMM streaming 40 MiB of weights, in GB/s).
// Backends:
//   stride          stride::cpu::gemm / gemm_batched: what stride actually runs
//   onednn          dnnl_sgemm, threaded by its own OpenMP team of t
//   openblas        cblas_*gemm with OpenBLAS's own pthreads set to t
//   onednn_matmul   oneDNN's matmul primitive (created once, outside the timing;
//                   memory objects per call, as a dispatcher would)
//   loop            a cache-blocked i-k-j loop (double only)
// and, for batched GEMMs, how the batch is spread over threads:
//   *_pf            parallel_for over the batch, one single-threaded call per matrix
//   *_seq           one call per matrix in sequence, each threaded by the library
//   onednn_matmul   one primitive over the whole batch
// Results and the choice they led to: Note [GEMM backend choice] in
// src/backends/cpu/blas.cpp.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <dnnl.h>

#include <algorithm>
#include <cstdint>
#include <dnnl.hpp>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/blas.h"
#include "stride/parallel.h"

namespace {

struct Shape {
  int64_t batch, m, n, k;
  bool ta, tb;
  int64_t lda() const { return ta ? m : k; }
  int64_t ldb() const { return tb ? k : n; }
  int64_t ldc() const { return n; }
  std::string name() const {
    // Appends only: GCC 12 warns falsely (-Wrestrict) on `"b" + std::string`.
    std::string s;
    if (batch > 1) s.append("b").append(std::to_string(batch)).append("_");
    s.append(std::to_string(m)).append("x").append(std::to_string(n)).append("x");
    s.append(std::to_string(k)).append(ta ? "_T" : "_N").append(tb ? "T" : "N");
    return s;
  }
  double flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
};

// stride's arguments for a shape's GEMM (its first matrices, for a batch)
// and for its batch of dense matrices.
template <class In, class Out>
stride::cpu::GemmArgs<In, Out> args_of(const Shape& s, const In* a, const In* b, Out* c) {
  return {.trans_a = s.ta,
          .trans_b = s.tb,
          .m = s.m,
          .n = s.n,
          .k = s.k,
          .a = a,
          .lda = s.lda(),
          .b = b,
          .ldb = s.ldb(),
          .c = c,
          .ldc = s.ldc()};
}
stride::cpu::GemmBatch batch_of(const Shape& s) {
  return {.count = s.batch, .stride_a = s.m * s.k, .stride_b = s.k * s.n, .stride_c = s.m * s.n};
}

// One layer of Llama-ish training at the article's sizes: B*T = 512 tokens,
// C = 128, FFN hidden 1024 (down-projection), vocab 65; attention with
// 256 = batch*heads blocks of 16 tokens, head dim 16 or 128.
const std::vector<Shape> kSingle = {
    {1, 512, 128, 128, false, false},     // dX = dY @ W
    {1, 512, 128, 128, false, true},      // Linear forward: X @ W^T
    {1, 128, 128, 512, true, false},      // dW = dY^T @ X
    {1, 512, 65, 128, false, false},      // lm head (N)
    {1, 512, 65, 128, false, true},       // lm head forward: X @ W^T
    {1, 512, 128, 1024, false, false},    // FFN down-projection
    {1, 512, 128, 1024, false, true},     // 1024 -> 128 projection forward: X @ W^T
    {1, 512, 1024, 128, false, false},    // its dX = dY @ W
    {1, 128, 1024, 512, true, false},     // its dW = dY^T @ X
    {1, 512, 512, 512, false, false},     // square
    {1, 1024, 1024, 1024, false, false},  // square
    // Small GEMMs: where a library's fixed cost per call shows.
    {1, 16, 16, 16, false, false},
    {1, 32, 32, 32, false, false},
    {1, 64, 64, 64, false, false},
    {1, 64, 64, 64, false, true},
    {1, 96, 96, 96, false, false},
    {1, 128, 128, 128, false, false},
    {1, 128, 128, 128, true, false},
};
const std::vector<Shape> kBatched = {
    {256, 16, 16, 16, false, false},   // att @ V, head dim 16
    {256, 16, 16, 16, false, true},    // q @ k^T
    {256, 16, 16, 16, true, false},    // dV = att^T @ dY
    {256, 16, 16, 128, false, false},  // dQ-like, head dim 128
    {256, 16, 16, 128, false, true},   // q @ k^T, head dim 128
    {256, 16, 128, 16, false, false},  // att @ V, head dim 128
    {256, 16, 128, 16, true, false},   // dV, head dim 128
    {32, 128, 128, 64, false, true},   // q @ k^T, 128 tokens, head dim 64
    {32, 128, 64, 128, false, false},  // att @ V, 128 tokens
};
const std::vector<Shape> kDouble = {
    {1, 64, 64, 64, false, false},
    {1, 512, 128, 128, false, false},
    {1, 512, 128, 128, true, false},
    {1, 1024, 1024, 1024, false, false},
};
const std::vector<Shape> kDoubleBatched = {
    {256, 16, 16, 16, false, false},
    {256, 16, 16, 128, false, true},
};

template <class T>
struct Operands {
  std::vector<T> a, b, c;
  explicit Operands(const Shape& s) {
    std::mt19937 gen(0);
    std::uniform_real_distribution<T> dist(-1, 1);
    a.resize(size_t(s.batch * s.m * s.k));
    b.resize(size_t(s.batch * s.k * s.n));
    c.resize(size_t(s.batch * s.m * s.n));
    for (T& x : a) x = dist(gen);
    for (T& x : b) x = dist(gen);
  }
};

void set_threads(int t, int openblas_threads) {
  stride::set_num_threads(t);
  openblas_set_num_threads(openblas_threads);
}

void finish(benchmark::State& state, const Shape& s) {
  state.counters["GFLOPS"] =
      benchmark::Counter(s.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- single GEMMs, one per library ------------------------------------------------------

void cblas(const Shape& s, int64_t m, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans,
              blasint(m), blasint(s.n), blasint(s.k), 1.0f, a, blasint(s.lda()), b,
              blasint(s.ldb()), 0.0f, c, blasint(s.ldc()));
}
void cblas(const Shape& s, int64_t m, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans,
              blasint(m), blasint(s.n), blasint(s.k), 1.0, a, blasint(s.lda()), b, blasint(s.ldb()),
              0.0, c, blasint(s.ldc()));
}
void onednn(const Shape& s, const float* a, const float* b, float* c) {
  dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a, s.lda(), b, s.ldb(), 0.0f,
             c, s.ldc());
}

// Row-major C = op(A) @ op(B), blocked over k and j so a B panel stays in
// cache; the inner loop runs along rows of C and (untransposed) B.
template <class T>
void loop(const Shape& s, const T* a, const T* b, T* c) {
  constexpr int64_t kb = 128, nb = 256;
  const int64_t m = s.m, n = s.n, k = s.k, lda = s.lda(), ldb = s.ldb();
  const bool ta = s.ta, tb = s.tb;
  for (int64_t i = 0; i < m * n; ++i) c[i] = T(0);
  for (int64_t j0 = 0; j0 < n; j0 += nb) {
    const int64_t j1 = std::min(n, j0 + nb);
    for (int64_t p0 = 0; p0 < k; p0 += kb) {
      const int64_t p1 = std::min(k, p0 + kb);
      for (int64_t i = 0; i < m; ++i) {
        T* __restrict crow = c + i * n;
        for (int64_t p = p0; p < p1; ++p) {
          const T av = ta ? a[p * lda + i] : a[i * lda + p];
          if (!tb) {
            const T* __restrict brow = b + p * ldb;
            for (int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
          } else {
            for (int64_t j = j0; j < j1; ++j) crow[j] += av * b[j * ldb + p];
          }
        }
      }
    }
  }
}

// oneDNN's matmul primitive for [batch] x (m, k) @ (k, n), strided like the shape.
struct MatmulPrimitive {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::memory::desc a_md, b_md, c_md;
  dnnl::matmul prim;

  explicit MatmulPrimitive(const Shape& s) {
    using dims = dnnl::memory::dims;
    const auto f32 = dnnl::memory::data_type::f32;
    const int64_t sa = s.m * s.k, sb = s.k * s.n, sc = s.m * s.n;
    a_md = {dims{s.batch, s.m, s.k}, f32, s.ta ? dims{sa, 1, s.lda()} : dims{sa, s.lda(), 1}};
    b_md = {dims{s.batch, s.k, s.n}, f32, s.tb ? dims{sb, 1, s.ldb()} : dims{sb, s.ldb(), 1}};
    c_md = {dims{s.batch, s.m, s.n}, f32, dims{sc, s.ldc(), 1}};
    prim = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), engine));
  }
  void operator()(const float* a, const float* b, float* c) {
    dnnl::memory am(a_md, engine, const_cast<float*>(a));
    dnnl::memory bm(b_md, engine, const_cast<float*>(b));
    dnnl::memory cm(c_md, engine, c);
    prim.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
  }
};

enum class Backend {
  Stride,
  OneDnn,
  OpenBlas,
  OneDnnMatmul,
  Loop,
  OneDnnPf,
  OpenBlasPf,
  OneDnnSeq,
  OpenBlasSeq,
  OpenBlasSplit
};

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Stride:
      return "stride";
    case Backend::OneDnn:
      return "onednn";
    case Backend::OpenBlas:
      return "openblas";
    case Backend::OneDnnMatmul:
      return "onednn_matmul";
    case Backend::Loop:
      return "loop";
    case Backend::OneDnnPf:
      return "onednn_pf";
    case Backend::OpenBlasPf:
      return "openblas_pf";
    case Backend::OneDnnSeq:
      return "onednn_seq";
    case Backend::OpenBlasSeq:
      return "openblas_seq";
    case Backend::OpenBlasSplit:
      return "openblas_split";
  }
  return "?";
}

// OpenBLAS runs with its own pthreads only where that is what is measured;
// everywhere else it stays single-threaded, as stride keeps it.
int openblas_threads_for(Backend backend, int threads) {
  return backend == Backend::OpenBlas || backend == Backend::OpenBlasSeq ? threads : 1;
}

template <class T>
void run_single(benchmark::State& state, Shape s, Backend backend, int threads) {
  set_threads(threads, openblas_threads_for(backend, threads));
  Operands<T> x(s);
  std::unique_ptr<MatmulPrimitive> matmul;
  if constexpr (std::is_same_v<T, float>) {
    if (backend == Backend::OneDnnMatmul) matmul = std::make_unique<MatmulPrimitive>(s);
  }
  const T* a = x.a.data();
  const T* b = x.b.data();
  T* c = x.c.data();
  for (auto _ : state) {
    switch (backend) {
      case Backend::Stride:
        stride::cpu::gemm(args_of(s, a, b, c));
        break;
      case Backend::OpenBlas:
        cblas(s, s.m, a, b, c);
        break;
      case Backend::OpenBlasSplit:
        // Row blocks of C over stride's threads, single-threaded OpenBLAS on each.
        stride::parallel_for(0, s.m, 1, [&](int64_t i0, int64_t i1) {
          cblas(s, i1 - i0, s.ta ? a + i0 : a + i0 * s.lda(), b, c + i0 * s.ldc());
        });
        break;
      case Backend::Loop:
        loop(s, a, b, c);
        break;
      default:
        if constexpr (std::is_same_v<T, float>) {
          if (backend == Backend::OneDnn) onednn(s, a, b, c);
          if (backend == Backend::OneDnnMatmul) (*matmul)(a, b, c);
        }
        break;
    }
    benchmark::DoNotOptimize(c);
    benchmark::ClobberMemory();
  }
  finish(state, s);
}

template <class T>
void run_batched(benchmark::State& state, Shape s, Backend backend, int threads) {
  set_threads(threads, openblas_threads_for(backend, threads));
  Operands<T> x(s);
  std::unique_ptr<MatmulPrimitive> matmul;
  if constexpr (std::is_same_v<T, float>) {
    if (backend == Backend::OneDnnMatmul) matmul = std::make_unique<MatmulPrimitive>(s);
  }
  const int64_t sa = s.m * s.k, sb = s.k * s.n, sc = s.m * s.n;
  const T* a = x.a.data();
  const T* b = x.b.data();
  T* c = x.c.data();
  Shape one = s;
  one.batch = 1;
  auto one_gemm = [&](int64_t i) {
    if (backend == Backend::OpenBlasPf || backend == Backend::OpenBlasSeq) {
      cblas(one, one.m, a + i * sa, b + i * sb, c + i * sc);
    } else if constexpr (std::is_same_v<T, float>) {
      onednn(one, a + i * sa, b + i * sb, c + i * sc);
    }
  };
  for (auto _ : state) {
    switch (backend) {
      case Backend::Stride:
        stride::cpu::gemm_batched(args_of(s, a, b, c), batch_of(s));
        break;
      case Backend::OneDnnPf:
      case Backend::OpenBlasPf:
        stride::parallel_for(0, s.batch, 1, [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) one_gemm(i);
        });
        break;
      case Backend::OneDnnSeq:
      case Backend::OpenBlasSeq:
        for (int64_t i = 0; i < s.batch; ++i) one_gemm(i);
        break;
      default:
        if constexpr (std::is_same_v<T, float>) {
          if (backend == Backend::OneDnnMatmul) (*matmul)(a, b, c);
        }
        break;
    }
    benchmark::DoNotOptimize(c);
    benchmark::ClobberMemory();
  }
  finish(state, s);
}

// stride's mixed-precision GEMM (autocast): bfloat16 operands, float32 C.
void run_bf16(benchmark::State& state, Shape s, Backend, int threads) {
  set_threads(threads, 1);
  Operands<float> x(s);
  std::vector<stride::BFloat16> a(x.a.size()), b(x.b.size());
  stride::cpu::round_to_bf16(x.a.data(), a.data(), int64_t(a.size()));
  stride::cpu::round_to_bf16(x.b.data(), b.data(), int64_t(b.size()));
  for (auto _ : state) {
    stride::cpu::gemm_batched_bf16(args_of(s, a.data(), b.data(), x.c.data()), batch_of(s));
    benchmark::DoNotOptimize(x.c.data());
    benchmark::ClobberMemory();
  }
  finish(state, s);
}

// Decoding: one row times each of ten 1024x1024 float32 weights (40 MiB, more
// than the L3), as a decoded token reads a model's weights; GB/s of weights.
void run_decode(benchmark::State& state, int threads) {
  set_threads(threads, 1);
  constexpr int64_t kMatrices = 10, kN = 1024, kK = 1024;
  std::vector<std::vector<float>> weights(kMatrices, std::vector<float>(kN * kK, 0.5f));
  std::vector<float> x(kK, 1.0f), y(kN);
  for (auto _ : state) {
    for (const auto& w : weights) {
      stride::cpu::gemm({.trans_b = true,
                         .m = 1,
                         .n = kN,
                         .k = kK,
                         .a = x.data(),
                         .lda = kK,
                         .b = w.data(),
                         .ldb = kK,
                         .c = y.data(),
                         .ldc = kN});
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(double(kMatrices * kN * kK * 4) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

template <class Fn>
void add(const std::string& kind, const Shape& s, Backend backend, Fn fn) {
  for (int threads : {1, 2}) {
    std::string name = kind;
    name.append("/").append(s.name()).append("/").append(backend_name(backend));
    name.append("/threads:").append(std::to_string(threads));
    benchmark::RegisterBenchmark(name.c_str(),
                                 [=](benchmark::State& st) { fn(st, s, backend, threads); })
        ->UseRealTime()
        ->MinTime(0.2);
  }
}

const bool registered = [] {
  for (const Shape& s : kSingle) {
    for (Backend b : {Backend::Stride, Backend::OneDnn, Backend::OpenBlas, Backend::OneDnnMatmul}) {
      add("sgemm", s, b, run_single<float>);
    }
  }
  for (int threads : {1, 2}) {
    benchmark::RegisterBenchmark(
        ("decode/10x1x1024x1024_NT/stride/threads:" + std::to_string(threads)).c_str(),
        [=](benchmark::State& st) { run_decode(st, threads); })
        ->UseRealTime()
        ->MinTime(0.5);
  }
  if (stride::cpu::has_bf16_gemm()) {
    for (const Shape& s : kSingle) add("bf16gemm", s, Backend::Stride, run_bf16);
  }
  for (const Shape& s : kBatched) {
    for (Backend b : {Backend::Stride, Backend::OneDnnPf, Backend::OpenBlasPf, Backend::OneDnnSeq,
                      Backend::OneDnnMatmul}) {
      add("sgemm_batched", s, b, run_batched<float>);
    }
  }
  for (const Shape& s : kDouble) {
    for (Backend b : {Backend::Stride, Backend::OpenBlas, Backend::OpenBlasSplit, Backend::Loop}) {
      add("dgemm", s, b, run_single<double>);
    }
  }
  for (const Shape& s : kDoubleBatched) {
    for (Backend b : {Backend::Stride, Backend::OpenBlasPf, Backend::OpenBlasSeq}) {
      add("dgemm_batched", s, b, run_batched<double>);
    }
  }
  return true;
}();

}  // namespace
