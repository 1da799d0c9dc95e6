// Tensors are views: every view op shares storage and version counter and
// never copies; contiguous()/clone() copy only when asked.
#include <gtest/gtest.h>

#include <stride/stride.h>

#include "support/layouts.h"

namespace stride {
namespace {

Tensor iota(IntArrayRef shape, ScalarType dtype = kFloat32) {
  return arange(numel_of(shape)).to(dtype).view(shape);
}

TEST(Storage, CpuBuffersAre64ByteAligned) {
  for (int64_t n : {1, 3, 17, 1000}) {
    Tensor t = empty({n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u) << n;
  }
}

TEST(Views, ShareStorageAndNeverCopy) {
  Tensor x = iota({2, 3, 4});
  const std::vector<Tensor> views = {x.view({6, 4}),
                                     x.reshape({4, 6}),
                                     x.transpose(0, 2),
                                     x.permute({2, 0, 1}),
                                     x.narrow(2, 1, 2),
                                     x.slice(1, 0, 3, 2),
                                     x.select(1, 2),
                                     x.unsqueeze(1),
                                     x.view({2, 1, 3, 4}).squeeze(),
                                     x[0].t(),
                                     x.flatten(),
                                     x.as_strided({3}, {5}, 1),
                                     x.chunk(2, 2)[1],
                                     x.split(1, 0)[1],
                                     x.unbind(2)[3],
                                     x[1].diagonal(1),
                                     x.unfold(2, 2, 1),
                                     x.view({2, 1, 12}).expand({2, 5, 12}),
                                     x.contiguous()};
  for (const Tensor& v : views) {
    EXPECT_EQ(v.storage(), x.storage());
  }
}

TEST(Views, SeeWritesAndShareTheVersionCounter) {
  Tensor x = zeros({3, 4});
  Tensor col = x.select(1, 2);
  const uint64_t v0 = x.version();
  col.fill_(5);
  EXPECT_EQ(x.version(), v0 + 1);
  EXPECT_EQ(col.version(), x.version());
  EXPECT_EQ(x.sum().item<double>(), 15.0);
  EXPECT_EQ((x.to_vector<float>()), (std::vector<float>{0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 5, 0}));
}

TEST(Views, GeometryMatchesPyTorch) {
  Tensor x = iota({2, 3, 4});
  Tensor t = x.transpose(0, 2);
  EXPECT_EQ(t.sizes(), IntArrayRef({4, 3, 2}));
  EXPECT_EQ(t.strides(), IntArrayRef({1, 4, 12}));
  EXPECT_FALSE(t.is_contiguous());
  Tensor s = x.slice(2, 1, std::nullopt, 2);
  EXPECT_EQ(s.sizes(), IntArrayRef({2, 3, 2}));
  EXPECT_EQ(s.strides(), IntArrayRef({12, 4, 2}));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_EQ(x.slice(1, -2).sizes(), IntArrayRef({2, 2, 4}));
  EXPECT_EQ(x.slice(1, 5, 9).sizes(), IntArrayRef({2, 0, 4}));
  Tensor e = x[0][0].unsqueeze(0).expand({5, 4});
  EXPECT_EQ(e.strides(), IntArrayRef({0, 1}));
  Tensor d = iota({3, 3}).diagonal();
  EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{0, 4, 8}));
  EXPECT_EQ(iota({3, 4}).diagonal(-1).to_vector<float>(), (std::vector<float>{4, 9}));
  EXPECT_EQ(iota({2, 3}).t().contiguous().to_vector<float>(),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
  auto parts = iota({5}).chunk(2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].numel(), 3);
  EXPECT_EQ(parts[1].numel(), 2);
  EXPECT_EQ(iota({7}).split(3).size(), 3u);
}

TEST(Views, ViewOnIncompatibleStridesThrowsAndSuggestsReshape) {
  Tensor t = iota({3, 4}).t();
  try {
    (void)t.view({12});
    FAIL() << "view should have thrown";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("reshape"), std::string::npos) << e.what();
  }
  Tensor r = t.reshape({12});  // copies instead
  EXPECT_NE(r.storage(), t.storage());
  EXPECT_EQ(r.to_vector<float>()[1], 4.0f);
  // Splitting and merging dims that are laid out compatibly is a view.
  Tensor v = iota({4, 6}).slice(0, 0, 4, 2).view({2, 2, 3});
  EXPECT_EQ(v.strides(), IntArrayRef({12, 3, 1}));
  EXPECT_EQ(iota({2, 3}).view({-1}).sizes(), IntArrayRef({6}));
  EXPECT_THROW((void)iota({2, 3}).view({4, -1}), ShapeError);
}

TEST(Views, AsStridedChecksBounds) {
  Tensor x = zeros({6});
  EXPECT_NO_THROW((void)x.as_strided({2, 3}, {3, 1}));
  EXPECT_THROW((void)x.as_strided({2, 3}, {3, 1}, 1), IndexError);
  EXPECT_THROW((void)x.as_strided({2}, {-1}), ValueError);
}

TEST(Views, UnfoldGivesOverlappingWindowsAsPyTorch) {
  Tensor x = iota({2, 5});
  Tensor w = x.unfold(1, 3, 1);  // torch: sizes (2, 3, 3), strides (5, 1, 1)
  EXPECT_EQ(w.storage(), x.storage());
  EXPECT_TRUE(w.is_view());
  EXPECT_EQ(w.sizes(), IntArrayRef({2, 3, 3}));
  EXPECT_EQ(w.strides(), IntArrayRef({5, 1, 1}));
  EXPECT_EQ(w[1][2].to_vector<float>(), (std::vector<float>{7, 8, 9}));
  // Negative dims, steps past the window (a ragged tail is dropped).
  Tensor s = x.unfold(-1, 2, 2);
  EXPECT_EQ(s.sizes(), IntArrayRef({2, 2, 2}));
  EXPECT_EQ(s.strides(), IntArrayRef({5, 2, 1}));
  EXPECT_EQ(s[0].contiguous().to_vector<float>(), (std::vector<float>{0, 1, 2, 3}));
  // Dim 0 of a non-contiguous base keeps the base's strides.
  Tensor t = iota({3, 4}).t();  // (4, 3), strides (1, 4)
  Tensor u = t.unfold(0, 2, 1);
  EXPECT_EQ(u.sizes(), IntArrayRef({3, 3, 2}));
  EXPECT_EQ(u.strides(), IntArrayRef({1, 4, 1}));
  EXPECT_EQ(u.storage_offset(), 0);
  EXPECT_EQ(u[2][1].to_vector<float>(), (std::vector<float>{6, 7}));
  // A 0-d tensor unfolds as (1,); an empty window gives a trailing 0.
  EXPECT_EQ(scalar_tensor(3.0).unfold(0, 1, 1).sizes(), IntArrayRef({1}));
  EXPECT_EQ(x.unfold(1, 0, 1).sizes(), IntArrayRef({2, 6, 0}));
  // Writes through the view reach the base.
  w.select(2, 0).fill_(-1);
  EXPECT_EQ(x[0].to_vector<float>(), (std::vector<float>{-1, -1, -1, 3, 4}));
}

TEST(Views, UnfoldRefusesBadWindowsNamingTheArgument) {
  Tensor x = iota({2, 5});
  try {
    (void)x.unfold(1, 6, 1);
    FAIL() << "unfold should have thrown";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[unfold] size 6"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)x.unfold(1, 2, 0), ValueError);
  EXPECT_THROW((void)x.unfold(2, 1, 1), IndexError);
}

TEST(Views, UnfoldGradientSumsOverlappingWindows) {
  Tensor x = ones({5}).requires_grad_();
  x.unfold(0, 3, 1).sum().backward();  // element i lies in min(i+1, 3, 5-i) windows
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{1, 2, 3, 2, 1}));
}

TEST(Views, ResizeKeepsMemoryWhenItFitsAndGrowsOtherwise) {
  Tensor x = iota({2, 3});
  const Storage memory = x.storage();
  x.resize_({3});
  EXPECT_EQ(x.storage(), memory);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 1, 2}));
  x.resize_({2, 4});  // 8 elements: new memory starting with the old 6
  EXPECT_NE(x.storage(), memory);
  EXPECT_EQ(x.strides(), IntArrayRef({4, 1}));
  EXPECT_EQ(x.view({-1}).narrow(0, 0, 6).to_vector<float>(),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));
  Tensor y = zeros({4, 2});
  EXPECT_EQ(y.resize_as_(iota({1, 8})).sizes(), IntArrayRef({1, 8}));
  EXPECT_THROW(zeros({2}).requires_grad_().resize_({4}), ValueError);
  EXPECT_THROW(zeros({2}).resize_({-1}), ValueError);
}

TEST(Views, AsStridedScatterWritesWhereTheStridedViewLooks) {
  Tensor x = zeros({3, 3});
  Tensor out = as_strided_scatter(x, ones({2, 2}), {2, 2}, {1, 2}, 1);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{0, 1, 1, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(x.sum().item<double>(), 0.0);  // a copy: x is untouched
  EXPECT_THROW((void)as_strided_scatter(x, ones({3}), {2, 2}, {1, 2}), ShapeError);
}

TEST(Copies, ContiguousAndCloneCopyOnlyWhenAsked) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(x.contiguous().is_same(x));
  Tensor c = x.clone();
  EXPECT_NE(c.storage(), x.storage());
  Tensor tc = x.t().contiguous();
  EXPECT_NE(tc.storage(), x.storage());
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_TRUE(x.to(kFloat32).is_same(x));
  Tensor i = x.to(kInt64);
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(Copies, CopyBroadcastsAndConverts) {
  Tensor dst = zeros({2, 3}, kFloat64);
  dst.copy_(tensor<int32_t>({1, 2, 3}));
  EXPECT_EQ(dst.to_vector<double>(), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_THROW(dst.copy_(ones({2, 2})), ShapeError);
}

TEST(Factories, ValuesAndDtypes) {
  EXPECT_EQ(arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(1, 2, 0.25, kFloat64).to_vector<double>(),
            (std::vector<double>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(eye(2, 3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(full({2}, 7, kInt32).to_vector<int32_t>(), (std::vector<int32_t>{7, 7}));
  EXPECT_EQ(zeros({2, 0}).numel(), 0);
  EXPECT_EQ(ones_like(empty({3}, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(scalar_tensor(3.5).dim(), 0);
  EXPECT_EQ(scalar_tensor(3.5).item<double>(), 3.5);
  EXPECT_THROW((void)empty({-1}), ShapeError);
  EXPECT_THROW((void)tensor<float>({1, 2, 3}, {2, 2}), ShapeError);
  Tensor s = empty_strided({2, 3}, {1, 2});
  EXPECT_EQ(s.strides(), IntArrayRef({1, 2}));
  EXPECT_EQ(s.storage()->nbytes(), 6u * 4u);
}

TEST(Factories, ItemNeedsOneElement) {
  EXPECT_THROW((void)zeros({2}).item(), ShapeError);
  EXPECT_EQ(tensor<int64_t>({42}).item<int64_t>(), 42);
  EXPECT_THROW((void)zeros({2}).data_ptr<double>(), DTypeError);
}

TEST(Devices, CudaIsNamedButRefusedClearly) {
  EXPECT_EQ(Device("cuda:1").index(), 1);
  EXPECT_EQ(Device("cuda:1").str(), "cuda:1");
  EXPECT_TRUE(Device("cpu").is_cpu());
  EXPECT_THROW(Device("tpu"), DeviceError);
  try {
    (void)zeros({2}, Device(kCUDA, 0));
    FAIL();
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)ones({2}).to(Device("cuda")), DeviceError);
}

TEST(Printing, LooksLikePyTorch) {
  EXPECT_EQ(tensor<float>({1, 2.5}).str(), "tensor([1.0000, 2.5000])");
  EXPECT_EQ(tensor<int64_t>({1, 2, 3, 4}, {2, 2}).str(), "tensor([[1, 2],\n        [3, 4]])");
  EXPECT_EQ(tensor<double>({1}).str(), "tensor([1.], dtype=float64)");
  EXPECT_EQ(zeros({0, 2}).str(), "tensor([], size=(0, 2))");
}

// A shape whose element count wraps around int64 used to reach the kernels
// (a SIGFPE in Python's fuzzing); it is refused where tensors are made.
TEST(Factories, RefuseShapesWhoseSizeOverflowsInt64) {
  const int64_t big = int64_t(1) << 40;
  EXPECT_THROW(zeros({big, 159182828583813}, kUInt8), ShapeError);
  EXPECT_THROW(empty({big, big}, TensorOptions(kFloat32).device(Device("meta"))), ShapeError);
  EXPECT_THROW(empty({int64_t(1) << 62}, kFloat64), ShapeError);  // the bytes overflow
  EXPECT_THROW(empty_strided({big, big}, {big, 1}, kFloat32), ShapeError);
  EXPECT_THROW(ones({1, 1}).expand({big, big}), ShapeError);
  EXPECT_THROW(zeros({0, big, big}), ShapeError);   // no elements, but the strides overflow
  EXPECT_EQ(ones({1}).expand({big}).numel(), big);  // large but countable: a view, no memory
}

// Strings printed by torch 2.15 for the same tensors.
TEST(Printing, ChoosesPyTorchsStyleAndWidth) {
  EXPECT_EQ(tensor<float>({1, -2, 30}).str(), "tensor([ 1., -2., 30.])");
  EXPECT_EQ(tensor<float>({0.5, -1e-5}).str(), "tensor([ 5.0000e-01, -1.0000e-05])");
  EXPECT_EQ(tensor<float>({1e10, 1}).str(), "tensor([1.0000e+10, 1.0000e+00])");
  EXPECT_EQ(tensor<bool>({true, false}).str(), "tensor([ True, False])");
  EXPECT_EQ(tensor<int64_t>({1, -20, 3}).str(), "tensor([  1, -20,   3])");
  EXPECT_EQ(scalar_tensor(3.0, kFloat32).str(), "tensor(3.)");
  EXPECT_EQ(zeros({2}).str(), "tensor([0., 0.])");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(tensor<float>({float(nan), 1.5f, float(inf)}).str(),
            "tensor([   nan, 1.5000,    inf])");
  EXPECT_EQ(arange(1, 9).to(kFloat32).view({2, 2, 2}).str(),
            "tensor([[[1., 2.],\n         [3., 4.]],\n\n        [[5., 6.],\n         [7., 8.]]])");
  EXPECT_EQ((arange(0, 30).to(kFloat32) / 7).str(),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
            "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
            "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
            "        3.8571, 4.0000, 4.1429])");
  EXPECT_EQ(arange(0, 2000).to(kFloat32).view({2, 1000}).str(),
            "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
            "         9.9900e+02],\n"
            "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
            "         1.9990e+03]])");
}

}  // namespace
}  // namespace stride
