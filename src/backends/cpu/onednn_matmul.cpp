// oneDNN's matmul primitive, planned once per shape and cached by it:
// planning one costs far more than running it on the small matrices it is
// used for (attention's batches of heads, autocast's bf16 GEMMs), and models
// use a handful of shapes, so each shape is planned once per process.
#include "backends/cpu/onednn_matmul.h"

#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include <dnnl.hpp>

#include "backends/cpu/capability.h"
#include "backends/cpu/onednn_signals.h"
#include "backends/cpu/scratch_buffer.h"
#include "core/check.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

struct Matmul {
  dnnl::matmul primitive;
  dnnl::memory::desc a, b, c, scratchpad;
};

namespace {

struct MatmulKeyHash {
  size_t operator()(const MatmulKey& key) const {
    size_t h = 0;
    auto mix = [&h](auto v) {
      h ^= std::hash<decltype(v)>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    };
    for (int64_t v : {key.batch, key.m, key.n, key.k, key.lda, key.ldb, key.ldc, key.stride_a,
                      key.stride_b, key.stride_c}) {
      mix(v);
    }
    mix(key.trans_a);
    mix(key.trans_b);
    mix(key.alpha);
    mix(key.beta);
    mix(key.bf16);
    return h;
  }
};

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Made while oneDNN sees one OpenMP thread (SingleThreadedLibraries), so the
// primitive is planned for one thread, and run on one.
std::shared_ptr<const Matmul> make_matmul(const MatmulKey& key) {
  using dims = dnnl::memory::dims;
  const auto f32 = dnnl::memory::data_type::f32;
  const auto ab_type = key.bf16 ? dnnl::memory::data_type::bf16 : f32;
  auto result = std::make_shared<Matmul>();
  // Stride 0 broadcasts: a batch dimension of 1.
  const int64_t batch_a = key.stride_a == 0 ? 1 : key.batch;
  const int64_t batch_b = key.stride_b == 0 ? 1 : key.batch;
  const int64_t sa = key.stride_a == 0 ? key.m * key.k : key.stride_a;
  const int64_t sb = key.stride_b == 0 ? key.k * key.n : key.stride_b;
  try {
    result->a = {dims{batch_a, key.m, key.k}, ab_type,
                 key.trans_a ? dims{sa, 1, key.lda} : dims{sa, key.lda, 1}};
    result->b = {dims{batch_b, key.k, key.n}, ab_type,
                 key.trans_b ? dims{sb, 1, key.ldb} : dims{sb, key.ldb, 1}};
    result->c = {dims{key.batch, key.m, key.n}, f32, dims{key.stride_c, key.ldc, 1}};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (key.alpha != 1.0f) attr.set_output_scales(0, {key.alpha});
    if (key.beta != 0.0f) {
      dnnl::post_ops ops;
      ops.append_sum(key.beta);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(result->a, result->b, result->c), attr,
                                          cpu_engine());
    const std::string impl = pd.impl_info_str();
    // A batch wants brgemm (gemm-based ones loop like gemm_serial would);
    // a bf16 GEMM takes any JIT kernel, never the reference one.
    const bool good = key.bf16 ? impl.rfind("ref", 0) != 0 : impl.rfind("brg", 0) == 0;
    if (!good) return nullptr;
    result->scratchpad = pd.scratchpad_desc();
    result->primitive = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return result;
}

template <class In>
bool run_chunks(const GemmArgs<In, float>& g, const GemmBatch& batch, int64_t chunk) {
  const int64_t chunks = (batch.count + chunk - 1) / chunk;
  // One primitive per chunk size: the full one and the last, shorter one.
  GemmBatch layout = batch;
  layout.count = chunk;
  const std::shared_ptr<const Matmul> full = get_matmul(matmul_key(g, layout));
  layout.count = batch.count - (chunks - 1) * chunk;
  const std::shared_ptr<const Matmul> last = get_matmul(matmul_key(g, layout));
  if (full == nullptr || last == nullptr) return false;
  parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      const int64_t i = ch * chunk;
      run_matmul(ch == chunks - 1 ? *last : *full, g.a + i * batch.stride_a,
                 g.b + i * batch.stride_b, g.c + i * batch.stride_c);
    }
  });
  return true;
}

// Per-thread scratchpad for matmul primitives.
void* scratchpad(size_t bytes) {
  thread_local ScratchBuffer buffer;
  return buffer.get(bytes, "GEMM scratchpad");
}

}  // namespace

std::shared_ptr<const Matmul> get_matmul(const MatmulKey& key) {
  // Models use a handful of shapes; the cap only bounds pathological callers.
  constexpr size_t kMaxEntries = 256;
  static std::mutex mutex;
  static std::unordered_map<MatmulKey, std::shared_ptr<const Matmul>, MatmulKeyHash> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto made = make_matmul(key);  // outside the lock: creation is slow
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(key, std::move(made)).first->second;
}

void run_matmul(const Matmul& mm, const void* a, const void* b, float* c) {
  const SignalsDeferred signals_deferred;  // Note [Signals and oneDNN's kernels]
  dnnl::engine& engine = cpu_engine();
  thread_local dnnl::stream stream(engine);
  try {
    dnnl::memory am(mm.a, engine, const_cast<void*>(a));
    dnnl::memory bm(mm.b, engine, const_cast<void*>(b));
    dnnl::memory cm(mm.c, engine, c);
    dnnl::memory sm(mm.scratchpad, engine, scratchpad(mm.scratchpad.get_size()));
    mm.primitive.execute(stream, {{DNNL_ARG_SRC, am},
                                  {DNNL_ARG_WEIGHTS, bm},
                                  {DNNL_ARG_DST, cm},
                                  {DNNL_ARG_SCRATCHPAD, sm}});
    stream.wait();
  } catch (const dnnl::error& e) {
    STRIDE_ASSERT(false, "oneDNN matmul failed: ", e.what());
  }
}

bool run_matmul_chunks(const GemmArgs<float>& g, const GemmBatch& batch, int64_t chunk) {
  return run_chunks(g, batch, chunk);
}

bool run_matmul_chunks(const GemmArgs<BFloat16, float>& g, const GemmBatch& batch, int64_t chunk) {
  return run_chunks(g, batch, chunk);
}

}  // namespace STRIDE_CPU_NAMESPACE
