// The meta device and the device seam: tensors without memory, ops that
// compute shapes only, autograd on meta, models sized and materialised, the
// backend interface, and errors that name both devices of a mixed op.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "backends/kernels.h"
#include "llama/ladder.h"
#include "llama/model.h"
#include "lm/inspect.h"
#include "lm/registry.h"
#include "stride/backend.h"
#include "stride/checkpoint.h"
#include "stride/nn/functional.h"
#include "stride/nn/layers.h"
#include "stride/ops.h"

namespace stride {
namespace {

namespace F = nn::functional;

// Runs `fn`, expects a DeviceError whose message names both devices.
template <class Fn>
void expect_names_both(Fn fn, const std::string& a, const std::string& b) {
  try {
    fn();
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(a), std::string::npos) << msg;
    EXPECT_NE(msg.find(b), std::string::npos) << msg;
  }
}

TEST(MetaDevice, IsNamedLikePyTorchs) {
  EXPECT_TRUE(Device("meta").is_meta());
  EXPECT_EQ(Device("meta").str(), "meta");
  EXPECT_EQ(Device(kMeta), Device("meta"));
  EXPECT_THROW(Device("meta:1"), DeviceError);
}

TEST(MetaDevice, TensorsHaveShapeDtypeStridesAndNoMemory) {
  const CpuAllocatorStats cpu_before = cpu_allocator_stats();
  const size_t meta_before = meta_memory_stats().allocated_bytes;
  {
    // 16 GiB: only a device without memory can hold it here.
    Tensor t = empty({int64_t(1) << 22, 1024}, TensorOptions(kFloat32).device(kMeta));
    EXPECT_EQ(t.device(), Device(kMeta));
    EXPECT_EQ(t.data_ptr(), nullptr);
    EXPECT_EQ(t.sizes(), IntArrayRef({int64_t(1) << 22, 1024}));
    EXPECT_EQ(t.strides(), IntArrayRef({1024, 1}));
    EXPECT_EQ(meta_memory_stats().allocated_bytes - meta_before, size_t(16) << 30);
    const Tensor v = t.transpose(0, 1).slice(1, 2, std::nullopt, 3);
    EXPECT_EQ(v.strides(), IntArrayRef({1, 3 * 1024}));
    EXPECT_EQ(v.storage_offset(), 2 * 1024);
  }
  EXPECT_EQ(meta_memory_stats().allocated_bytes, meta_before);
  EXPECT_EQ(cpu_allocator_stats().allocated_bytes, cpu_before.allocated_bytes);
}

TEST(MetaDevice, OpsComputeShapesDtypesAndStrides) {
  const TensorOptions meta = TensorOptions(kFloat32).device(kMeta);
  const Tensor a = empty({4, 6}, meta), b = empty({6}, meta);
  const Tensor c = a.t() + b.view({6, 1});  // a.t()'s column-major order wins
  EXPECT_EQ(c.device(), Device(kMeta));
  EXPECT_EQ(c.sizes(), IntArrayRef({6, 4}));
  EXPECT_EQ(c.strides(), IntArrayRef({1, 6}));
  EXPECT_EQ(a.gt(0).dtype(), kBool);
  EXPECT_EQ(a.to(kInt64).sum({1}).dtype(), kInt64);
  EXPECT_EQ(a.matmul(empty({6, 5}, meta)).sizes(), IntArrayRef({4, 5}));
  const auto [values, indices] = a.max(1, true);
  EXPECT_EQ(indices.dtype(), kInt64);
  EXPECT_EQ(indices.sizes(), IntArrayRef({4, 1}));
  EXPECT_EQ(cat({a, a}, 0).sizes(), IntArrayRef({8, 6}));
  EXPECT_EQ(a.softmax(0).sizes(), a.sizes());
  Tensor x = empty({4, 6}, meta);
  const uint64_t version = x.version();
  x.mul_(2).normal_();
  EXPECT_EQ(x.version(), version + 2);  // in-place ops still bump the counter
}

TEST(MetaDevice, AutogradGivesGradientsOfTheRightShapes) {
  const TensorOptions meta = TensorOptions(kFloat32).device(kMeta);
  Tensor w = empty({6, 5}, meta).requires_grad_();
  Tensor bias = empty({5}, meta).requires_grad_();
  const Tensor x = empty({3, 4, 6}, meta);
  const Tensor loss = F::rms_norm(x.matmul(w) + bias, Tensor()).relu().mean();
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().device(), Device(kMeta));
  EXPECT_EQ(w.grad().sizes(), w.sizes());
  EXPECT_EQ(bias.grad().sizes(), bias.sizes());
}

TEST(MetaDevice, CopiesOutOfMetaAreRefused) {
  const Tensor cpu = randn({3, 4}).t();
  const Tensor meta = cpu.to(Device(kMeta));
  EXPECT_EQ(meta.device(), Device(kMeta));
  EXPECT_EQ(meta.sizes(), cpu.sizes());
  EXPECT_EQ(meta.strides(), cpu.strides());  // a dense layout is kept
  try {
    (void)meta.to(Device(kCPU));
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("no data"), std::string::npos) << e.what();
  }
  const Tensor one = zeros({1}, TensorOptions().device(kMeta));
  EXPECT_THROW((void)one.item(), DeviceError);
  EXPECT_THROW((void)one.to_vector<float>(), DeviceError);
  EXPECT_EQ(meta.str(), "tensor(..., device='meta', size=(4, 3))");
  EXPECT_EQ(one.to(kInt64).str(), "tensor(..., device='meta', size=(1), dtype=int64)");
}

TEST(DeviceSeam, MixingDevicesInOneOpNamesBoth) {
  const Tensor cpu = ones({4, 4});
  const Tensor meta = ones({4, 4}, TensorOptions().device(kMeta));
  expect_names_both([&] { (void)(cpu + meta); }, "cpu", "meta");
  expect_names_both([&] { (void)(meta * cpu); }, "meta", "cpu");
  expect_names_both([&] { (void)cpu.matmul(meta); }, "cpu", "meta");
  expect_names_both([&] { Tensor(cpu).copy_(meta); }, "cpu", "meta");
  expect_names_both([&] { (void)F::rms_norm(cpu, ones({4}, TensorOptions().device(kMeta))); },
                    "cpu", "meta");
  expect_names_both(
      [&] { (void)F::cross_entropy(cpu, zeros({4}, TensorOptions(kInt64).device(kMeta))); }, "cpu",
      "meta");
  const Tensor q = ones({1, 2, 4, 8});
  expect_names_both(
      [&] { (void)F::scaled_dot_product_attention(q, q.to(Device(kMeta)), q, {}, 0.0, true); },
      "cpu", "meta");
  expect_names_both([&] { (void)F::swiglu(cpu, meta); }, "cpu", "meta");
}

TEST(DeviceSeam, BackendInterface) {
  EXPECT_TRUE(has_device_backend(kCPU));
  EXPECT_TRUE(has_device_backend(kMeta));
  EXPECT_FALSE(device_backend(Device(kMeta)).has_data());
  EXPECT_EQ(&default_generator(Device(kCPU)), &default_generator());
  synchronize(Device(kCPU));  // nothing to wait for
  synchronize(Device(kMeta));
  if (!has_device_backend(kCUDA)) {
    expect_names_both([] { (void)zeros({2}, Device(kCUDA, 0)); }, "cuda:0", "no cuda backend");
  }
  // manual_seed restarts every device's generator.
  manual_seed(5);
  const GeneratorState cpu = default_generator(Device(kCPU)).get_state();
  const GeneratorState meta = default_generator(Device(kMeta)).get_state();
  EXPECT_EQ(cpu.seed, 5u);
  EXPECT_EQ(meta.seed, 5u);
  EXPECT_EQ(meta.offset, 0u);
}

TEST(DeviceSeam, DefaultDeviceGuardScopesFactories) {
  {
    DefaultDeviceGuard on_meta(kMeta);
    EXPECT_TRUE(zeros({2}).device().is_meta());
    EXPECT_TRUE(arange(5).device().is_meta());
    EXPECT_TRUE(tensor<float>({1, 2}).device().is_meta());
  }
  EXPECT_TRUE(zeros({2}).device().is_cpu());
}

// Every stub of backends/kernels.h has its CPU kernel registered (a backend
// file dropped at link time would leave one empty), and a device without a
// kernel is an error naming the op and the device.
TEST(DeviceSeam, EveryStubHasACpuKernel) {
  // Every stub of backends/kernels.h's list, the op list's included.
  std::vector<std::pair<std::string, bool>> registered = {
#define STRIDE_HAS_CPU_KERNEL(stub, ...) {#stub, kernels::stub.has_kernel(kCPU)},
      STRIDE_KERNEL_STUBS(STRIDE_HAS_CPU_KERNEL)
          STRIDE_LISTED_ELEMENTWISE_OPS(STRIDE_HAS_CPU_KERNEL)
#undef STRIDE_HAS_CPU_KERNEL
  };
  EXPECT_GT(registered.size(), 60u);
  for (const auto& [stub, has_kernel] : registered) EXPECT_TRUE(has_kernel) << stub;
  EXPECT_FALSE(kernels::softmax_rows.has_kernel(kCUDA));
  Tensor x = ones({2, 3}), out = empty({2, 3});
  expect_names_both([&] { kernels::softmax_rows(Device(kCUDA, 1), x, out, false); }, "softmax",
                    "cuda:1");
  kernels::softmax_rows(Device(kMeta), x, out, false);  // meta: nothing runs
}

// Module::to(Device) keeps each parameter's identity (an optimizer built
// before still holds it), as Module::to(dtype) does.
TEST(DeviceSeam, ModuleToDeviceKeepsParameterIdentity) {
  nn::Linear linear(4, 3);
  const TensorImpl* weight = linear.weight.impl();
  linear.to(Device(kMeta));
  EXPECT_EQ(linear.weight.impl(), weight);
  EXPECT_TRUE(linear.weight.device().is_meta());
  EXPECT_TRUE(linear.bias.device().is_meta());
  EXPECT_TRUE(linear.weight.requires_grad());
  EXPECT_THROW(linear.to(Device(kCPU)), DeviceError);  // meta has no values to move
  linear.to_empty(Device(kCPU));
  EXPECT_EQ(linear.weight.impl(), weight);
  EXPECT_TRUE(linear.weight.device().is_cpu());
}

lm::ModelConfig correct_llama() {
  return lm::load_config(STRIDE_SOURCE_DIR "/configs/llama.json").model;
}

// A training step of the correct Llama on meta: every parameter receives a
// gradient of its own shape, on meta, and nothing is allocated on the CPU.
TEST(MetaModels, LlamaTrainsOnMetaInShapes) {
  DefaultDeviceGuard on_meta(kMeta);
  const auto model = lm::build_model(correct_llama());
  const Tensor ids = zeros({2, 16}, kInt64);
  model->loss(ids, ids).backward();
  for (const auto& [name, p] : model->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(p.grad().sizes(), p.sizes()) << name;
    EXPECT_TRUE(p.grad().device().is_meta()) << name;
  }
}

// Built on meta, moved to the CPU with to_empty and initialised: the same
// values as built on the CPU from the same seed.
void expect_materialises_like_cpu(const lm::ModelConfig& config) {
  manual_seed(11);
  const auto on_cpu = lm::build_model(config);
  std::shared_ptr<lm::LanguageModel> from_meta;
  {
    DefaultDeviceGuard on_meta(kMeta);
    from_meta = lm::build_model(config);
  }
  from_meta->to_empty(Device(kCPU));
  manual_seed(11);
  from_meta->reset_all_parameters();
  const auto want = on_cpu->state_dict();
  const auto got = from_meta->state_dict();
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, t] : want) {
    ASSERT_TRUE(got.contains(name)) << name;
    EXPECT_TRUE(got[name].device().is_cpu()) << name;
    EXPECT_TRUE(equal(got[name], t)) << name;
  }
}

TEST(MetaModels, MaterialisedLlamaEqualsOneBuiltOnTheCpu) {
  expect_materialises_like_cpu(correct_llama());
}

// The RoPE stages create their modules in registration order. The others
// pass a Sequential's layers as arguments of one call, which GCC evaluates
// right to left, so their draws come in another order than reset's walk
// (Module::reset_all_parameters says so).
TEST(MetaModels, MaterialisedRopeStagesEqualOnesBuiltOnTheCpu) {
  int checked = 0;
  for (const auto& stage : llama::ladder_stages()) {
    const std::string name(stage.article_class);
    if (name.rfind("RopeModel", 0) != 0) continue;
    SCOPED_TRACE(name);
    expect_materialises_like_cpu(llama::article_run_config(stage).model);
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// `stride inspect`'s numbers: Meta's 7B in well under a second, with no
// parameter memory allocated.
TEST(MetaModels, InspectSizesA7BLlamaWithoutItsMemory) {
  const lm::RunConfig config = lm::load_config(STRIDE_SOURCE_DIR "/configs/llama-7b.json");
  const CpuAllocatorStats cpu_before = cpu_allocator_stats();
  const auto start = std::chrono::steady_clock::now();
  const lm::ModelInspection r = lm::inspect_model(config);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.parameter_count, 6738415616);
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(r.parameter_bytes, size_t(6738415616) * 4);
  EXPECT_EQ(r.gradient_bytes, r.parameter_bytes);
  EXPECT_EQ(r.optimizer_bytes, 2 * r.parameter_bytes);
  EXPECT_GT(r.activation_bytes, size_t(1) << 30);
  EXPECT_GT(r.step_peak_bytes, r.parameter_bytes + r.optimizer_bytes + r.activation_bytes);
  ASSERT_EQ(r.parameters.size(), size_t(3 + 32 * 9));
  EXPECT_EQ(r.parameters.front().name, "tok_embeddings.weight");
  EXPECT_EQ(IntArrayRef(r.parameters.front().shape), IntArrayRef({32000, 4096}));
  // The CPU allocator's cached size classes (64 KiB and up) grew by less than
  // one layer's weight: the parameters were never allocated.
  EXPECT_LT(cpu_allocator_stats().peak_allocated_bytes - cpu_before.peak_allocated_bytes,
            size_t(64) << 20);
}

// The estimate from one and two layers equals a build at full depth, for
// every stage of the ladder and the correct Llama.
TEST(MetaModels, MemoryEstimateEqualsAFullBuild) {
  std::vector<lm::RunConfig> configs;
  for (const auto& stage : llama::ladder_stages())
    configs.push_back(llama::article_run_config(stage));
  configs.push_back(lm::load_config(STRIDE_SOURCE_DIR "/configs/llama.json"));
  for (const lm::RunConfig& config : configs) {
    SCOPED_TRACE(config.model.arch);
    const lm::MemoryEstimate estimate = lm::estimate_memory(config);
    DefaultDeviceGuard on_meta(kMeta);
    const size_t before = meta_memory_stats().allocated_bytes;
    const auto model = lm::build_model(config.model);
    EXPECT_EQ(estimate.model_bytes, meta_memory_stats().allocated_bytes - before);
    const nn::StateDict state = model->state_dict();
    uint64_t bytes = 0;
    for (const auto& [name, t] : state) bytes += t.nbytes();
    EXPECT_EQ(estimate.state_tensors, state.size());
    EXPECT_EQ(estimate.state_bytes, bytes);
  }
}

// A checkpoint whose config was edited is refused before the model is
// built: an n_layers of a million costs two small meta builds, not memory.
TEST(MetaModels, ACheckpointConfigMustDescribeItsTensors) {
  lm::RunConfig config = lm::load_config(STRIDE_SOURCE_DIR "/configs/llama.json");
  config.model.d_model = 32;
  config.model.n_heads = 4;
  config.model.n_layers = 2;
  const auto model = lm::build_model(config.model);
  CheckpointState state = capture_checkpoint(*model, nullptr, nullptr, 0, lm::to_json(config));
  EXPECT_NO_THROW(lm::check_config_fits_checkpoint(config, state, "ckpt"));
  const auto expect_refused = [&](lm::RunConfig edited, const std::string& expected) {
    const auto start = std::chrono::steady_clock::now();
    try {
      lm::check_config_fits_checkpoint(edited, state, "ckpt");
      ADD_FAILURE() << "accepted " << lm::to_json(edited);
    } catch (const IOError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  };
  lm::RunConfig deep = config;
  deep.model.n_layers = 1'000'000;
  expect_refused(deep, "describes a model of 9000003 tensors");
  lm::RunConfig wide = config;
  wide.model.d_model = 1 << 20;
  wide.model.n_heads = 1 << 10;
  expect_refused(wide, "but the file holds 21 model tensors");
  lm::RunConfig huge = config;
  huge.model.ffn_hidden = int64_t(1) << 40;
  expect_refused(huge, "Hint: the checkpoint's metadata is corrupt or was edited.");
  // A saved config must describe the model in full.
  EXPECT_THROW(lm::parse_saved_config("{}", "ckpt"), lm::ConfigError);
  EXPECT_NO_THROW(lm::parse_saved_config(lm::to_json(config), "ckpt"));
}

// The estimate is closed-form in the sizes: on meta nothing is computed or
// allocated in proportion to the context or the batch (RoPE and the
// article's tables, positions, targets), so a context of 2^24 (8 s of
// tables before) costs what one of 16 does, for every workload and every
// model family; at 2^40 a model whose attention dropout would draw more
// numbers than int64 counts, and every model at 2^62, is a ConfigError
// naming its sizes.
TEST(MetaModels, MemoryEstimateCostsNothingInProportionToTheSizes) {
  using Kind = lm::Workload::Kind;
  std::vector<lm::RunConfig> configs;
  for (const auto& stage : llama::ladder_stages())
    configs.push_back(llama::article_run_config(stage));
  configs.push_back(lm::load_config(STRIDE_SOURCE_DIR "/configs/llama.json"));
  configs.push_back(lm::load_config(STRIDE_SOURCE_DIR "/configs/tiny-gpt.json"));
  for (lm::RunConfig config : configs) {
    SCOPED_TRACE(config.model.arch);
    lm::RunConfig huge = config;
    huge.model.context = int64_t(1) << 24;
    const CpuAllocatorStats cpu_before = cpu_allocator_stats();
    const auto start = std::chrono::steady_clock::now();
    for (Kind kind : {Kind::Training, Kind::Evaluation, Kind::Generation}) {
      EXPECT_GT(lm::estimate_memory(huge, {kind}).peak_bytes,
                lm::estimate_memory(config, {kind}).peak_bytes);
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
    EXPECT_LT(cpu_allocator_stats().peak_allocated_bytes - cpu_before.peak_allocated_bytes,
              size_t(1) << 20);
    huge.model.context = int64_t(1) << 40;
    for (Kind kind : {Kind::Model, Kind::Training, Kind::Evaluation, Kind::Generation}) {
      try {
        EXPECT_GT(lm::estimate_memory(huge, {kind}).peak_bytes, 0u);
      } catch (const lm::ConfigError& e) {
        EXPECT_GT(config.model.dropout, 0.0) << e.what();
        EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
      }
    }
    config.model.context = int64_t(1) << 62;
    try {
      lm::estimate_memory(config, {Kind::Training});
      ADD_FAILURE() << "a context of 2^62 was estimated";
    } catch (const lm::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("context 4611686018427387904"), std::string::npos)
          << e.what();
    }
  }
}

// Generation holds a KV cache of the whole context beside the model: the
// estimate grows with the context by the cache's bytes at least.
TEST(MetaModels, GenerationEstimateHoldsTheKVCache) {
  lm::RunConfig config = lm::load_config(STRIDE_SOURCE_DIR "/configs/llama.json");
  const lm::ModelConfig& m = config.model;
  const uint64_t at_16 = lm::estimate_memory(config, {lm::Workload::Kind::Generation}).peak_bytes;
  config.model.context = 16 + 1024;
  const uint64_t at_1040 = lm::estimate_memory(config, {lm::Workload::Kind::Generation}).peak_bytes;
  const uint64_t cache = uint64_t(2 * m.n_layers * 1024 * m.kv_heads() * m.head_dim() * 4);
  EXPECT_GE(at_1040 - at_16, cache);
}

}  // namespace
}  // namespace stride
