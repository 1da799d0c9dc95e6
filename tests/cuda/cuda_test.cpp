// The CUDA backend (include/stride/cuda.h, src/backends/cuda/): copies
// between the CPU and the GPU in every dtype and layout, fill_ and copy_ on
// the GPU into every output layout with the elements around the view left
// alone (each run beside the CPU's on the same base), the elementwise ops
// of the op list against the CPU's, the caching
// allocator's reuse and statistics, and out-of-memory errors. Without a GPU
// the tests that need one are skipped with the reason; the ones that check
// what happens without one run.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <stride/stride.h>

#include "core/op_list.h"
#include "support/layouts.h"

namespace stride {
namespace {

using testing::Layout;

constexpr ScalarType kEveryDtype[] = {kBool,    kUInt8,    kInt32,   kInt64,
                                      kFloat16, kBFloat16, kFloat32, kFloat64};

#define STRIDE_SKIP_WITHOUT_CUDA()                                    \
  if (!cuda::is_available()) {                                        \
    GTEST_SKIP() << "no CUDA device: " << cuda::unavailable_reason(); \
  }

const Device kGpu("cuda:0");

std::string trace(ScalarType t, Layout l) {
  return std::string(to_string(t)) + ", " + testing::layout_name(l);
}

// `view`'s geometry on another base tensor.
Tensor same_view(const Tensor& view, const Tensor& base) {
  return base.as_strided(view.sizes(), view.strides(), view.storage_offset());
}

TEST(CudaDevice, SaysWhyThereIsNone) {
  if (cuda::is_available()) {
    EXPECT_GT(cuda::device_count(), 0);
    EXPECT_TRUE(cuda::unavailable_reason().empty());
    return;
  }
  EXPECT_EQ(cuda::device_count(), 0);
  const std::string reason = cuda::unavailable_reason();
  EXPECT_FALSE(reason.empty());
  try {
    (void)empty({2}, TensorOptions().device(kGpu));
    FAIL() << "a tensor was made on a missing GPU";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(cuda::synchronize());
  EXPECT_EQ(cuda::memory_allocated(), 0u);
}

TEST(CudaMemory, RoundTripsEveryDtypeAndLayout) {
  STRIDE_SKIP_WITHOUT_CUDA();
  Generator gen(1);
  for (ScalarType t : kEveryDtype) {
    for (Layout l : testing::kAllLayouts) {
      SCOPED_TRACE(trace(t, l));
      const Tensor x = testing::make_input({5, 7}, t, l, testing::Domain::Any, gen);
      const Tensor g = x.to(kGpu);
      EXPECT_EQ(g.device(), kGpu);
      EXPECT_EQ(g.dtype(), t);
      EXPECT_EQ(g.sizes(), x.sizes());
      const Tensor back = g.to(Device(kCPU));
      EXPECT_TRUE(equal(back, x));
      EXPECT_EQ(g.select(0, 1).select(0, 2).item<double>(),
                x.select(0, 1).select(0, 2).item<double>())
          << "item() reads the GPU";
    }
  }
}

TEST(CudaElementwise, FillWritesOnlyTheViewInEveryDtypeAndLayout) {
  STRIDE_SKIP_WITHOUT_CUDA();
  for (ScalarType t : kEveryDtype) {
    for (Layout l : testing::kOutputLayouts) {
      SCOPED_TRACE(trace(t, l));
      Tensor cpu_base;
      Tensor cpu_view = testing::make_output({4, 6}, t, l, cpu_base);
      Tensor gpu_base = cpu_base.to(kGpu);
      Tensor gpu_view = same_view(cpu_view, gpu_base);
      cpu_view.fill_(3);
      gpu_view.fill_(3);
      EXPECT_TRUE(equal(gpu_base.to(Device(kCPU)), cpu_base));
    }
  }
  EXPECT_TRUE(equal(zeros({3}, TensorOptions().device(kGpu)).to(Device(kCPU)), zeros({3})));
  EXPECT_TRUE(
      equal(full({2, 2}, 1.5, TensorOptions().device(kGpu)).to(Device(kCPU)), full({2, 2}, 1.5)));
}

TEST(CudaElementwise, CopyConvertsBetweenEveryDtypePairAndLayout) {
  STRIDE_SKIP_WITHOUT_CUDA();
  Generator gen(2);
  for (ScalarType from : kEveryDtype) {
    for (ScalarType to : kEveryDtype) {
      for (Layout in : testing::kAllLayouts) {
        for (Layout out : testing::kOutputLayouts) {
          SCOPED_TRACE(trace(from, in) + " -> " + trace(to, out));
          const Tensor src = testing::make_input({3, 5}, from, in, testing::Domain::Any, gen);
          Tensor cpu_base;
          Tensor cpu_view = testing::make_output({3, 5}, to, out, cpu_base);
          Tensor gpu_base = cpu_base.to(kGpu);
          Tensor gpu_view = same_view(cpu_view, gpu_base);
          cpu_view.copy_(src);
          gpu_view.copy_(src.to(kGpu));
          EXPECT_TRUE(equal(gpu_base.to(Device(kCPU)), cpu_base));
        }
      }
    }
  }
  // A non-contiguous GPU tensor comes back through a GPU copy.
  const Tensor x = arange(12).view({3, 4}).to(kFloat32);
  EXPECT_TRUE(equal(x.to(kGpu).t().to(Device(kCPU)), x.t()));
  EXPECT_TRUE(equal(x.to(kGpu).t().contiguous().to(Device(kCPU)), x.t().contiguous()));
}

// An op of the elementwise lists of core/op_list.h on up to two operands.
struct ListedOp {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> fn;
};

std::vector<ListedOp> listed_ops() {
  return {
#define STRIDE_UNARY_OP(name, ...) {#name, [](const Tensor& x, const Tensor&) { return name(x); }},
#define STRIDE_BINARY_OP(name, ...) \
  {#name, [](const Tensor& x, const Tensor& y) { return name(x, y); }},
      STRIDE_FLOAT_UNARY_OPS(STRIDE_UNARY_OP) STRIDE_SAME_UNARY_OPS(STRIDE_UNARY_OP)
          STRIDE_BINARY_OPS(STRIDE_BINARY_OP) STRIDE_FLOAT_BINARY_OPS(STRIDE_BINARY_OP)
              STRIDE_COMPARISON_OPS(STRIDE_BINARY_OP)
#undef STRIDE_BINARY_OP
#undef STRIDE_UNARY_OP
  };
}

// Every listed op runs the functor the CPU runs (backends/elementwise_math.h)
// on the GPU: the same results in every dtype and input layout (within
// float rounding where the two devices' libm differ), and a DTypeError for
// the dtypes the CPU refuses.
TEST(CudaElementwise, ListedOpsMatchTheCpuInEveryDtypeAndLayout) {
  STRIDE_SKIP_WITHOUT_CUDA();
  Generator gen(3);
  for (const ListedOp& op : listed_ops()) {
    for (ScalarType t : kEveryDtype) {
      for (Layout l : testing::kAllLayouts) {
        SCOPED_TRACE(std::string(op.name) + ", " + trace(t, l));
        const Tensor x = testing::make_input({5, 37}, t, l, testing::Domain::Unit, gen);
        const Tensor y = testing::make_input({5, 37}, t, l, testing::Domain::Unit, gen);
        Tensor want;
        try {
          want = op.fn(x, y);
        } catch (const DTypeError&) {
          EXPECT_THROW((void)op.fn(x.to(kGpu), y.to(kGpu)), DTypeError);
          continue;
        }
        const Tensor got = op.fn(x.to(kGpu), y.to(kGpu));
        EXPECT_EQ(got.device(), kGpu);
        const Tensor back = got.to(Device(kCPU));
        if (is_floating_point(want.dtype())) {
          const double rtol = element_size(want.dtype()) == 2 ? 1e-2 : 1e-5;
          EXPECT_TRUE(testing::close(back.to(kFloat64), want.to(kFloat64), rtol, rtol));
        } else {
          EXPECT_TRUE(equal(back, want));
        }
      }
    }
  }
}

TEST(CudaMemory, TheCachingAllocatorReusesBlocksAndCounts) {
  STRIDE_SKIP_WITHOUT_CUDA();
  cuda::synchronize();
  const size_t before = cuda::memory_allocated();
  auto step = [] {
    Tensor a = empty({1 << 20}, TensorOptions().device(kGpu));        // 4 MiB
    Tensor b = empty({3, 1000}, TensorOptions().device(kGpu));        // small
    Tensor c = empty({(1 << 22) + 5}, TensorOptions().device(kGpu));  // a larger class
    EXPECT_GE(cuda::memory_allocated(), size_t(4 << 20) + 12000 + (size_t(16) << 20));
  };
  step();
  EXPECT_EQ(cuda::memory_allocated(), before);
  const size_t reserved = cuda::memory_reserved();
  cuda::reset_peak_memory_stats();
  for (int i = 0; i < 5; ++i) step();  // a steady state asks the driver for nothing
  EXPECT_EQ(cuda::memory_reserved(), reserved);
  EXPECT_GE(cuda::max_memory_allocated(), before + (size_t(20) << 20));
  cuda::reset_peak_memory_stats();
  EXPECT_EQ(cuda::max_memory_allocated(), cuda::memory_allocated());
  cuda::empty_cache();
  EXPECT_LE(cuda::memory_reserved(), reserved);
}

TEST(CudaMemory, OutOfMemorySaysWhatWasAskedHeldAndCached) {
  STRIDE_SKIP_WITHOUT_CUDA();
  try {
    (void)empty({int64_t(1) << 50}, TensorOptions().device(kGpu).dtype(kUInt8));  // 1 PiB
    FAIL() << "a petabyte fit";
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    for (const char* part : {"out of memory", "asked", "live tensors", "cached"}) {
      EXPECT_NE(m.find(part), std::string::npos) << m;
    }
  }
  // The failure left the allocator usable.
  EXPECT_TRUE(equal(ones({4}, TensorOptions().device(kGpu)).to(Device(kCPU)), ones({4})));
}

TEST(CudaDevice, MixingDevicesInOneOpNamesBoth) {
  STRIDE_SKIP_WITHOUT_CUDA();
  try {
    (void)zeros({2}).add(zeros({2}, TensorOptions().device(kGpu)));
    FAIL() << "cpu + cuda ran";
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cpu"), std::string::npos) << m;
    EXPECT_NE(m.find("cuda:0"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace stride
