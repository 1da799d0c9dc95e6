// stride's side of bench/compare_pytorch: the flagship models timed end to
// end, one workload per process (so that ru_maxrss is that workload's peak).
//
//   build-bench/bench/llama_bench --workload correct --threads 2 --warmup 2 --reps 5
//
// Workloads (bench/pytorch_llama.py runs the same ones in PyTorch):
//   article   the article's Llama (2,370,246 params), B 32 x T 16, Adam(1e-3):
//             ms per training step (zero_grad, forward, backward, step)
//   correct   the correct Llama at the article's size (820,608 params),
//             B 32 x T 16, AdamW(1e-3, betas 0.9/0.95, wd 0.1): ms per step
//   large     the correct Llama d 384, 6 layers, 6 heads, T 256 (10,671,744
//             params), B 16, AdamW as above: ms per step
//   gpt       the lesson's tiny GPT (configs/tiny-gpt.json's model: GPT-2
//             blocks, d 384, 6 layers, 6 heads, T 256, vocab 65, dropout 0.2,
//             tied head; 10,770,816 params), B 16, AdamW(1e-3, betas
//             0.9/0.99, wd 0.1) as its config trains it: ms per step
//   generate  the `large` model, batch 1, greedy decoding of --tokens new
//             tokens (default 256) with a KV cache from a one-token prompt:
//             tokens/s (one rep = a fresh cache and the whole sequence)
//   sgemm     a (n, n) @ (n, n) float32 matmul, n = --n (default 1024):
//             GFLOP/s
//   fma       the machine's float32 compute peak on --threads threads of
//             stride's pool: independent chains of vector FMAs in
//             registers, GFLOP/s. No GEMM can beat it.
//   attention-article, attention-correct, attention-large
//             that model's attention alone: rotary_attention forward and
//             backward (causal; the article's with its dropout 0.1) on heads
//             viewed from (B, T, H E) projections, as the models call it, one
//             set of projections per layer so that they come from where a
//             training step finds them: ms per layer, and its forward alone
//             as forward_ms
//   stream    the machine's read bandwidth on --threads threads: sweeps
//             over --n floats (default: as many as the generate model's
//             parameters, beyond most L3 caches), each split over the
//             threads as a decode GEMV splits its weight, GB/s. Each rep
//             runs every reader - stride's pool, threads pinned one per
//             CPU, pinned with software prefetch - on stride's memory (huge
//             pages) and on 4 KiB pages, and takes the fastest; "readers"
//             gives each one's median. A decoded token reads every weight
//             once, so no implementation of generate beats this rate.
//
// Model workloads also report linear_params, the weights of their linear
// layers; training workloads min_matmul_flops, the matrix-multiply FLOPs a
// step cannot do without, and generate bytes_per_token, the memory a token
// cannot do without: compare_pytorch divides them by the fma peak and the
// stream rate for bounds that no implementation can pass.
//
// Prints one JSON line: the median over the timed reps (after --warmup
// untimed ones), every rep, ru_maxrss in KiB and the model's parameter counts.
// Token ids are the splitmix64 stream that pytorch_llama.py also draws, so
// both sides see the same data; weights are stride's default init.
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "llama/ladder.h"
#include "llama/model.h"
#include "lm/config.h"
#include "lm/registry.h"
#include "lm/train.h"
#include "stride/nn/functional.h"
#include "stride/profiler.h"
#include "stride/stride.h"

namespace {

using stride::Tensor;
namespace llama = stride::llama;
namespace lm = stride::lm;

struct Options {
  std::string workload;
  int threads = 1;
  int warmup = 2;
  int reps = 5;
  int64_t tokens = 256;      // generate
  bool profile = false;      // print the profiler's table of the timed reps to stderr
  bool shapes = false;       // ... with one row per op and input shapes
  bool autocast = false;     // bfloat16 matmuls (stride::AutocastGuard)
  std::string trace;         // ... and write their Chrome trace here
  std::optional<int64_t> n;  // sgemm (default 1024), stream (default: generate's parameters)
};

[[noreturn]] void usage(const std::string& message) {
  std::cerr << "llama_bench: " << message << "\n"
            << "usage: llama_bench --workload "
               "article|correct|large|gpt|generate|attention-MODEL|sgemm|fma|stream "
               "--threads N "
               "[--warmup W] [--reps R] [--tokens K] [--n N] [--profile] [--profile-shapes] "
               "[--trace FILE] [--autocast]\n";
  std::exit(2);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--profile" || arg == "--autocast") {
      (arg == "--profile" ? o.profile : o.autocast) = true;
      continue;
    }
    if (arg == "--profile-shapes") {
      o.profile = o.shapes = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + arg);
    const std::string value = argv[++i];
    try {
      if (arg == "--workload") {
        o.workload = value;
      } else if (arg == "--threads") {
        o.threads = std::stoi(value);
      } else if (arg == "--warmup") {
        o.warmup = std::stoi(value);
      } else if (arg == "--reps") {
        o.reps = std::stoi(value);
      } else if (arg == "--tokens") {
        o.tokens = std::stoll(value);
      } else if (arg == "--n") {
        o.n = std::stoll(value);
      } else if (arg == "--trace") {
        o.trace = value;
        o.profile = true;
      } else {
        usage("unknown option " + arg);
      }
    } catch (const std::logic_error&) {
      usage("bad value for " + arg + ": " + value);
    }
  }
  if (o.workload.empty()) usage("--workload is required");
  if (o.threads < 1 || o.warmup < 0 || o.reps < 1 || o.tokens < 1 || (o.n && *o.n < 1)) {
    usage("expected --threads >= 1, --warmup >= 0, --reps >= 1, --tokens >= 1, --n >= 1");
  }
  return o;
}

// splitmix64, mirrored in bench/pytorch_llama.py: the token ids of both sides.
std::vector<int64_t> token_stream(uint64_t seed, int64_t count, int64_t vocab) {
  std::vector<int64_t> out(static_cast<size_t>(count));
  uint64_t state = seed;
  for (auto& id : out) {
    state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    id = int64_t(z % uint64_t(vocab));
  }
  return out;
}

struct Workload {
  lm::ModelConfig model;
  lm::TrainConfig train;
};

lm::ModelConfig correct_llama(int64_t d, int64_t layers, int64_t heads, int64_t context) {
  lm::ModelConfig m;
  m.arch = "llama";
  m.vocab_size = 65;
  m.d_model = d;
  m.n_layers = layers;
  m.n_heads = heads;
  m.context = context;
  return m;
}

lm::TrainConfig adamw(int64_t batch) {
  lm::TrainConfig t;
  t.batch_size = batch;
  t.optimizer = "adamw";
  t.lr = 1e-3;
  t.beta1 = 0.9;
  t.beta2 = 0.95;
  t.weight_decay = 0.1;
  return t;
}

Workload workload_config(const std::string& name) {
  if (name == "article") {
    for (const auto& stage : llama::ladder_stages()) {
      if (stage.arch != "article_llama") continue;
      const lm::RunConfig run = llama::article_run_config(stage);
      return {run.model, run.train};
    }
    throw stride::ValueError("no ArticleLlama stage in ladder_stages()");
  }
  if (name == "correct") return {correct_llama(128, 4, 8, 16), adamw(32)};
  if (name == "large" || name == "generate") return {correct_llama(384, 6, 6, 256), adamw(16)};
  if (name == "gpt") {
    lm::ModelConfig m;
    m.arch = "gpt2";
    m.vocab_size = 65;
    m.d_model = 384;
    m.n_layers = 6;
    m.n_heads = 6;
    m.context = 256;
    m.norm_eps = 1e-5;
    m.tie_embeddings = true;
    m.dropout = 0.2;
    lm::TrainConfig t = adamw(16);
    t.beta2 = 0.99;
    return {m, t};
  }
  usage("unknown workload " + name);
}

// The weights of the model's linear layers.
int64_t linear_params(stride::nn::Module& model) {
  int64_t n = 0;
  for (const auto& [name, m] : model.named_modules()) {
    if (const auto* linear = dynamic_cast<const stride::nn::Linear*>(m.get())) {
      n += linear->weight.numel();
    }
  }
  return n;
}

// The matrix-multiply FLOPs a training step cannot do without: 6 per linear
// weight and token (forward, and the two gradients), and attention's four
// products (q k^T and P v, and two each in backward) over the causal half
// of the (T, T) scores, 6 * T * width per token and layer. The attention
// width is H * d for the article's heads of width d, d otherwise.
double min_matmul_flops(stride::nn::Module& model, const lm::ModelConfig& c, int64_t batch) {
  const double tokens = double(batch * c.context);
  const double width = double(c.arch == "article_llama" ? c.n_heads * c.d_model : c.d_model);
  return tokens * (6.0 * double(linear_params(model)) +
                   6.0 * double(c.n_layers) * double(c.context) * width);
}

// kFmaChains independent chains of `steps` vector multiply-adds of Lanes
// floats each, in registers; their sum. Instantiated inside functions
// compiled for each vector width's instructions, where GCC contracts the
// multiply-add into one FMA (this file is built for the baseline x86-64,
// like the library, and picks at run time). `mul` and `add` come from the
// caller at run time: with constants, the compiler may fold a chain away.
constexpr int kFmaChains = 12;  // > FMA latency x units, < the register file

template <int Lanes>
struct FloatVec;  // GCC ignores a vector_size that depends on a template argument
template <>
struct FloatVec<8> {
  using type = float __attribute__((vector_size(32)));
};
template <>
struct FloatVec<16> {
  using type = float __attribute__((vector_size(64)));
};

template <int Lanes>
[[gnu::always_inline]] inline float fma_chains(int64_t steps, float mul, float add) {
  using V = typename FloatVec<Lanes>::type;
  V acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = V{} + (1.0f + 0.001f * float(c));
  const V m = V{} + mul, a = V{} + add;
  for (int64_t i = 0; i < steps; ++i) {
    for (int c = 0; c < kFmaChains; ++c) acc[c] = acc[c] * m + a;
  }
  float total = 0;
  for (int c = 0; c < kFmaChains; ++c) total += acc[c][0];
  return total;
}

__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t steps, float mul, float add) {
  return fma_chains<16>(steps, mul, add);
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t steps, float mul, float add) {
  return fma_chains<8>(steps, mul, add);
}

// The widest FMA this CPU has, as function and floats per instruction.
struct FmaKernel {
  float (*chains)(int64_t, float, float);
  int lanes;
};
FmaKernel widest_fma() {
  if (__builtin_cpu_supports("avx512f")) return {fma_chains_avx512, 16};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {fma_chains_avx2, 8};
  }
  std::fprintf(stderr, "llama_bench: the fma workload needs AVX2 and FMA\n");
  std::exit(2);
}

// One rep of the fma workload: the chains above on every thread of the
// pool; the FLOPs done. `checksum` (the chains' sum) is printed, so that no
// chain can be optimised away.
double fma_rep(int threads, int64_t steps, float mul, float add, float& checksum) {
  static const FmaKernel kernel = widest_fma();
  std::vector<float> sink(size_t(threads), 0.0f);
  stride::parallel_for(0, threads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) sink[size_t(t)] = kernel.chains(steps, mul, add);
  });
  checksum = 0;
  for (float v : sink) checksum += v;
  return 2.0 * kernel.lanes * kFmaChains * double(steps) * threads;
}

// The sum of x[0, n): four independent chains of 16-float vectors, so that
// the loads, not the adds, set the pace; with Prefetch, each step also asks
// for the line kPrefetchAhead bytes on.
constexpr int64_t kPrefetchAhead = 1024;

template <bool Prefetch>
float sum_floats(const float* x, int64_t n) {
  using V16 = float __attribute__((vector_size(64)));
  constexpr int64_t kLanes = 16;
  V16 acc[4] = {};
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    if constexpr (Prefetch) __builtin_prefetch(x + i + kPrefetchAhead / int64_t(sizeof(float)));
    for (int c = 0; c < 4; ++c) {
      V16 v;
      std::memcpy(&v, x + i + c * kLanes, sizeof v);
      acc[c] += v;
    }
  }
  const V16 all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  float total = 0;
  for (int64_t l = 0; l < kLanes; ++l) total += all[l];
  for (; i < n; ++i) total += x[i];
  return total;
}

// The stream workload's readers: on stride's pool, as a decode GEMV reads
// its weight; or on threads of their own, each pinned to a CPU, with or
// without software prefetch - the ways a reader may go faster.
struct StreamReader {
  const char* name;
  bool pinned, prefetch;
};
constexpr StreamReader kStreamReaders[] = {
    {"pool", false, false}, {"pinned", true, false}, {"pinned, prefetch", true, true}};

// The CPUs this process may run on.
std::vector<int> allowed_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof allowed, &allowed);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  return cpus;
}

// One rep of `reader` over x[0, n): `passes` reads of it, each split evenly
// over `threads` threads; GB/s. `checksum` gets the sums, which are printed
// so that no load can be optimised away.
double stream_rep(const StreamReader& reader,
                  const float* x,
                  int64_t n,
                  int threads,
                  int passes,
                  float& checksum) {
  std::vector<float> sink(size_t(threads), 0.0f);
  auto read_slice = [&](int64_t t) {
    const int64_t first = n * t / threads, last = n * (t + 1) / threads;
    sink[size_t(t)] += reader.prefetch ? sum_floats<true>(x + first, last - first)
                                       : sum_floats<false>(x + first, last - first);
  };
  std::chrono::steady_clock::time_point start, end;
  if (!reader.pinned) {
    start = std::chrono::steady_clock::now();
    for (int pass = 0; pass < passes; ++pass) {
      stride::parallel_for(0, threads, 1, [&](int64_t begin, int64_t stop) {
        for (int64_t t = begin; t < stop; ++t) read_slice(t);
      });
    }
    end = std::chrono::steady_clock::now();
  } else {
    const std::vector<int> cpus = allowed_cpus();
    std::barrier sync(threads);
    std::vector<std::thread> readers;
    for (int t = 0; t < threads; ++t) {
      readers.emplace_back([&, t] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[size_t(t) % cpus.size()], &one);
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        sync.arrive_and_wait();
        if (t == 0) start = std::chrono::steady_clock::now();
        for (int pass = 0; pass < passes; ++pass) read_slice(t);
        sync.arrive_and_wait();
        if (t == 0) end = std::chrono::steady_clock::now();
      });
    }
    for (std::thread& r : readers) r.join();
  }
  for (float v : sink) checksum += v;
  const double seconds = std::chrono::duration<double>(end - start).count();
  return double(passes) * double(n) * double(sizeof(float)) / seconds / 1e9;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs fn warmup + reps times; returns the timed reps in ms.
std::vector<double> time_reps(const Options& o, const std::function<void()>& fn) {
  for (int i = 0; i < o.warmup; ++i) fn();
  std::optional<stride::profiler::Profiler> prof;
  if (o.profile) {
    prof.emplace(stride::profiler::ProfilerOptions{.record_shapes = o.shapes});
    prof->start();
  }
  std::vector<double> times;
  for (int i = 0; i < o.reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(ms_since(start));
  }
  if (prof) {
    prof->stop();
    if (!o.trace.empty()) prof->export_chrome_trace(o.trace);
    std::cerr << prof->key_averages(o.shapes).table("self_cpu_time_total", o.shapes ? 50 : 30);
  }
  return times;
}

std::string json_list(const std::vector<double>& v) {
  std::ostringstream s;
  s.precision(6);
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  return s.str() + "]";
}

// What a workload measured: times per rep, the reported values, their unit,
// and more JSON fields.
struct Measured {
  std::vector<double> times, values;
  std::string unit;
  std::ostringstream extra;
  Measured() { extra.precision(10); }
};

void bench_sgemm(const Options& o, Measured& m) {
  const int64_t n = o.n.value_or(1024);
  const Tensor a = stride::randn({n, n}), b = stride::randn({n, n});
  Tensor c;
  m.times = time_reps(o, [&] { c = a.matmul(b); });
  m.unit = "GFLOP/s";
  for (double t : m.times) m.values.push_back(2.0 * double(n * n * n) / (t * 1e6));
  m.extra << ", \"n\": " << n;
}

void bench_fma(const Options& o, Measured& m) {
  constexpr int64_t kSteps = 20'000'000;  // ~0.1 s
  double flops = 0;
  float checksum = 0;
  // Opaque to the compiler: read from a volatile.
  volatile float mul = 0.9999999f, add = 1e-7f;
  m.times = time_reps(o, [&] { flops = fma_rep(o.threads, kSteps, mul, add, checksum); });
  m.unit = "GFLOP/s";
  for (double t : m.times) m.values.push_back(flops / (t * 1e6));
  m.extra << ", \"checksum\": " << checksum;
}

// `n` floats on 4 KiB pages: mapped with transparent huge pages refused,
// then written, so that every page is backed.
std::shared_ptr<float> small_page_floats(int64_t n) {
  const size_t bytes = size_t(n) * sizeof(float);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_NOHUGEPAGE);
  std::fill_n(static_cast<float*>(p), n, 1.0f);
  return std::shared_ptr<float>(static_cast<float*>(p), [bytes](float* q) { munmap(q, bytes); });
}

// Every reader of kStreamReaders, on stride's memory (huge pages where the
// kernel grants them, Note [Huge pages]: how weights are held) and on 4 KiB
// pages. A rep's value is the fastest reader's at that rep: the read rate
// no decoder passes. Each reader's median is printed beside it.
void bench_stream(const Options& o, Measured& m) {
  constexpr int kPasses = 8;  // ~10 ms a reader at tens of GB/s
  const int64_t n =
      o.n ? *o.n : lm::build_model(workload_config("generate").model)->num_parameters();
  const Tensor huge = stride::ones({n});
  const std::shared_ptr<float> small = small_page_floats(n);
  const std::pair<const char*, const float*> memories[] = {{"huge pages", huge.data_ptr<float>()},
                                                           {"4 KiB pages", small.get()}};
  std::vector<std::pair<std::string, std::vector<double>>> rates;
  for (const StreamReader& reader : kStreamReaders) {
    for (const auto& memory : memories) {
      rates.emplace_back(std::string(reader.name) + ", " + memory.first, std::vector<double>());
    }
  }
  // Reader by reader, the pool's first: threads of the pinned readers would
  // take the pool's cores from it, and the pool would then run on fewer
  // threads for a while (Note [A taken core]).
  float checksum = 0;
  size_t r = 0;
  for (const StreamReader& reader : kStreamReaders) {
    for (const auto& memory : memories) {
      for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
        const double gbs = stream_rep(reader, memory.second, n, o.threads, kPasses, checksum);
        if (rep >= o.warmup) rates[r].second.push_back(gbs);
      }
      ++r;
    }
  }
  for (int rep = 0; rep < o.reps; ++rep) {
    double best = 0;
    for (const auto& rate : rates) best = std::max(best, rate.second[size_t(rep)]);
    m.values.push_back(best);
    m.times.push_back(double(kPasses) * double(n) * double(sizeof(float)) / (best * 1e6));
  }
  m.unit = "GB/s";
  m.extra << ", \"n\": " << n << ", \"checksum\": " << checksum << ", \"readers\": {";
  for (size_t i = 0; i < rates.size(); ++i) {
    m.extra << (i ? ", " : "") << "\"" << rates[i].first << "\": " << median(rates[i].second);
  }
  m.extra << "}";
}

void bench_attention(const Options& o, Measured& m) {
  namespace F = stride::nn::functional;
  const Workload w = workload_config(o.workload.substr(std::strlen("attention-")));
  const lm::ModelConfig& c = w.model;
  const bool article = c.arch == "article_llama";  // heads as wide as the model
  const int64_t B = w.train.batch_size, T = c.context, H = c.n_heads;
  const int64_t E = article ? c.d_model : c.head_dim();
  const double p = article ? c.dropout : 0.0;
  std::vector<Tensor> proj;  // q, k, v of each layer
  for (int64_t i = 0; i < 3 * c.n_layers; ++i) {
    proj.push_back(stride::randn({B, T, H * E}).requires_grad_(true));
  }
  const auto [cos, sin] = F::rotary_tables(T, E, 0, c.rope_theta);
  // As the model's: the gradient of y.transpose(1, 2).reshape({B, T, H E}).
  const Tensor dy = stride::randn({B, T, H, E}).transpose(1, 2);
  std::vector<double> forward_ms;
  m.times = time_reps(o, [&] {
    for (int64_t l = 0; l < c.n_layers; ++l) {
      auto heads = [&](int64_t i) {
        Tensor& x = proj[size_t(3 * l + i)];
        x.mutable_grad() = Tensor();
        return x.view({B, T, H, E}).transpose(1, 2);
      };
      const auto start = std::chrono::steady_clock::now();
      const Tensor y = F::rotary_attention(heads(0), heads(1), heads(2), cos, sin,
                                           F::RopeConvention::Interleaved, p, true);
      forward_ms.push_back(ms_since(start));
      y.backward(dy);
    }
  });
  m.unit = "ms";
  for (double t : m.times) m.values.push_back(t / double(c.n_layers));
  forward_ms.erase(forward_ms.begin(), forward_ms.end() - int64_t(m.times.size()) * c.n_layers);
  m.extra << ", \"batch\": " << B << ", \"heads\": " << H << ", \"context\": " << T
          << ", \"head_dim\": " << E << ", \"dropout\": " << p
          << ", \"forward_ms\": " << median(forward_ms);
}

void bench_generate(const Options& o,
                    const Workload& w,
                    lm::LanguageModel& model,
                    int64_t params,
                    int64_t embedding,
                    Measured& m) {
  auto* net = dynamic_cast<llama::Llama*>(&model);
  model.eval();
  stride::NoGradGuard no_grad;
  const int64_t prompt = token_stream(3, 1, w.model.vocab_size).front();
  int64_t last = -1;
  m.times = time_reps(o, [&] {
    stride::AutocastGuard autocast(o.autocast);
    lm::KVCache cache = net->make_cache(1, w.model.context);
    int64_t next = prompt;
    for (int64_t i = 0; i < o.tokens; ++i) {
      const Tensor logits = net->forward(stride::tensor<int64_t>({next}, {1, 1}), cache);
      next = logits.reshape({-1}).argmax().item<int64_t>();
    }
    last = next;
  });
  m.unit = "tok/s";
  for (double t : m.times) m.values.push_back(double(o.tokens) / (t * 1e-3));
  // What a token reads at the least: every float32 weight but the token
  // embedding table (one row of it), and the cached keys and values of
  // every position so far, 2 x n_layers x d_model floats each; token i
  // (from 0) attends to i + 1 positions, (tokens + 1) / 2 on average.
  const double d = double(w.model.d_model);
  const double weights = double(params - embedding) + d;
  const double cached = 2.0 * double(w.model.n_layers) * d * double(o.tokens + 1) / 2.0;
  m.extra << ", \"new_tokens\": " << o.tokens << ", \"last_token\": " << last
          << ", \"bytes_per_token\": " << (weights + cached) * double(sizeof(float));
}

void bench_train(const Options& o, const Workload& w, lm::LanguageModel& model, Measured& m) {
  const int64_t B = w.train.batch_size, T = w.model.context, V = w.model.vocab_size;
  const Tensor x = stride::tensor<int64_t>(token_stream(1, B * T, V), {B, T});
  const Tensor y = stride::tensor<int64_t>(token_stream(2, B * T, V), {B, T});
  auto optimizer = lm::make_optimizer(model, w.train);
  model.train();
  double loss = 0;
  m.times = time_reps(o, [&] {
    optimizer->zero_grad();
    Tensor l;
    {
      stride::AutocastGuard autocast(o.autocast);
      l = model.loss(x, y);
    }
    l.backward();
    optimizer->step();
    loss = l.item<double>();
  });
  m.unit = "ms";
  m.values = m.times;
  m.extra << ", \"batch\": " << B << ", \"context\": " << T << ", \"tokens_per_step\": " << B * T
          << ", \"min_matmul_flops\": " << min_matmul_flops(model, w.model, B)
          << ", \"final_loss\": " << loss;
}

// The model workloads: training steps and generation.
void bench_model(const Options& o, Measured& m) {
  const Workload w = workload_config(o.workload);
  auto model = lm::build_model(w.model);
  int64_t params = 0, embedding = 0;
  for (const auto& [name, p] : model->named_parameters()) {
    params += p.numel();
    if (name.find("embedding") != std::string::npos) embedding += p.numel();
  }
  m.extra << ", \"params\": " << params << ", \"params_embedding\": " << embedding
          << ", \"linear_params\": " << linear_params(*model);
  if (o.workload == "generate") {
    bench_generate(o, w, *model, params, embedding, m);
  } else {
    bench_train(o, w, *model, m);
  }
}

void print_json(const Options& o, const Measured& m) {
  rusage usage_now{};
  getrusage(RUSAGE_SELF, &usage_now);
  std::ostringstream line;
  line.precision(6);
  line << "{\"system\": \"stride\", \"version\": \"stride\", \"mode\": \""
       << (o.autocast ? "eager, bf16 autocast" : "eager") << "\", \"workload\": \"" << o.workload
       << "\", \"threads\": " << o.threads << ", \"warmup\": " << o.warmup
       << ", \"reps\": " << o.reps << ", \"unit\": \"" << m.unit
       << "\", \"median\": " << median(m.values) << ", \"values\": " << json_list(m.values)
       << ", \"times_ms\": " << json_list(m.times) << ", \"maxrss_kb\": " << usage_now.ru_maxrss
       << m.extra.str() << "}";
  std::cout << line.str() << std::endl;
}

int run(const Options& o) {
  stride::set_num_threads(o.threads);
  stride::manual_seed(0);
  Measured m;
  if (o.workload == "sgemm") {
    bench_sgemm(o, m);
  } else if (o.workload == "fma") {
    bench_fma(o, m);
  } else if (o.workload == "stream") {
    bench_stream(o, m);
  } else if (o.workload.rfind("attention-", 0) == 0) {
    bench_attention(o, m);
  } else {
    bench_model(o, m);
  }
  print_json(o, m);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_args(argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << "llama_bench: error: " << e.what() << "\n";
    return 1;
  }
}
