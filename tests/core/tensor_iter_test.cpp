// Note [Output layout]: outputs that TensorIter allocates follow the inputs'
// memory order as PyTorch's TensorIterator does (every layout below was
// checked against torch 1.13), so a.t() + b.t() is walked densely; given
// outputs keep their strides.
#include <gtest/gtest.h>

#include <stride/stride.h>

#include "core/tensor_impl_utils.h"
#include "core/tensor_iter.h"
#include "support/layouts.h"

namespace stride {
namespace {

using testing::close;

// The same op on row-major copies of the inputs: the values to expect.
template <class Op>
Tensor on_contiguous(const Op& op, const Tensor& a, const Tensor& b) {
  return op(a.contiguous(), b.contiguous());
}

TEST(OutputLayout, TransposedInputsGiveATransposedOutput) {
  const Tensor a = randn({16, 8}), b = randn({16, 8});
  const Tensor at = a.t(), bt = b.t();  // (8, 16), strides (1, 8)
  for (const Tensor& y : {at + bt, at * bt}) {
    EXPECT_EQ(y.sizes(), IntArrayRef({8, 16}));
    EXPECT_EQ(y.strides(), IntArrayRef({1, 8})) << "as PyTorch: (a.t() + b.t()).stride() == (1, 8)";
    EXPECT_TRUE(y.t().is_contiguous());
  }
  EXPECT_TRUE(equal(at + bt, on_contiguous([](auto x, auto y) { return x + y; }, at, bt)));
  EXPECT_TRUE(equal(at * bt, on_contiguous([](auto x, auto y) { return x * y; }, at, bt)));
  // A scalar is a 0-d operand: it has no say either.
  EXPECT_EQ((at * 2.0).strides(), at.strides());

  // Any permutation: p (4, 2, 3) with strides (1, 12, 4).
  const Tensor p = randn({2, 3, 4}).permute({2, 0, 1}), q = randn({2, 3, 4}).permute({2, 0, 1});
  const Tensor s = p - q;
  EXPECT_EQ(s.strides(), p.strides());
  EXPECT_TRUE(equal(s, p.contiguous() - q.contiguous()));
}

TEST(OutputLayout, TransposedInputsAreWalkedAsOneContiguousRun) {
  const Tensor at = randn({64, 32}).t(), bt = randn({64, 32}).t();
  Tensor out;
  TensorIter iter = TensorIterConfig("add").add_output(out).add_input(at).add_input(bt).build();
  EXPECT_TRUE(iter.is_contiguous());
  EXPECT_EQ(iter.ndim(), 1);
  EXPECT_EQ(out.strides(), at.strides());
}

TEST(OutputLayout, ContiguousInputsStillGiveAContiguousOutput) {
  const Tensor x = randn({2, 3, 4});
  EXPECT_TRUE((x + x).is_contiguous());
  EXPECT_EQ((x * x).strides(), IntArrayRef({12, 4, 1}));
  EXPECT_TRUE(exp(x).is_contiguous());
  EXPECT_TRUE((x + randn({4})).is_contiguous());     // broadcast row
  EXPECT_TRUE((randn({3, 1}) + x).is_contiguous());  // broadcast column, first
  EXPECT_TRUE((x * 3.0).is_contiguous());
  const Tensor u = randn({3, 1, 4});  // a size-1 dim
  EXPECT_TRUE((u + u).is_contiguous());
  EXPECT_TRUE((randn({5, 1}) + randn({1, 6})).is_contiguous());  // both broadcast
}

TEST(OutputLayout, MixedLayoutsFollowTheFirstInputThatDecides) {
  const Tensor at = randn({6, 5}).t();  // (5, 6), strides (1, 5)
  const Tensor c = randn({5, 6});       // row-major
  auto add = [](const Tensor& x, const Tensor& y) { return x + y; };
  const Tensor ac = at + c, ca = c + at;
  EXPECT_EQ(ac.strides(), IntArrayRef({1, 5})) << "a.t() comes first and decides";
  EXPECT_TRUE(ca.is_contiguous()) << "c comes first and decides";
  EXPECT_TRUE(equal(ac, on_contiguous(add, at, c)));
  EXPECT_TRUE(equal(ca, on_contiguous(add, c, at)));

  // Broadcast dims decide nothing: a row (6) or a column (5, 1) first leaves
  // the order to a.t().
  const Tensor row = randn({6}), col = randn({5, 1});
  EXPECT_EQ((row + at).strides(), IntArrayRef({1, 5}));
  EXPECT_EQ((col + at).strides(), IntArrayRef({1, 5}));
  EXPECT_EQ((at * row).strides(), IntArrayRef({1, 5}));
  EXPECT_TRUE(equal(row + at, at.contiguous() + row));
  EXPECT_TRUE(equal(col + at, at.contiguous() + col));

  // As PyTorch: an expanded input whose stride-0 dim sits between the two
  // others decides nothing about them, so the row-major second input does.
  const Tensor e = randn({5, 1, 7}).expand({5, 6, 7}).transpose(0, 2);  // strides (1, 0, 7)
  const Tensor v = randn({7, 6, 5});
  EXPECT_EQ((e + v).strides(), IntArrayRef({30, 5, 1}));
  EXPECT_TRUE(equal(e + v, e.contiguous() + v));
  // ... and alone, it is laid out dense in its own order: (1, 4, 20).
  const Tensor f = randn({3, 4}).t().unsqueeze(1).expand({4, 5, 3});  // strides (1, 0, 4)
  EXPECT_EQ(exp(f).strides(), IntArrayRef({1, 4, 20}));
  EXPECT_TRUE(close(exp(f), exp(f.contiguous())));
}

TEST(OutputLayout, InPlaceAndOutKeepTheGivenStrides) {
  const Tensor b = randn({4, 6});
  Tensor base = randn({6, 4});
  Tensor self = base.t();  // (4, 6), strides (1, 4)
  const Tensor expected = self.contiguous() + b;
  self.add_(b);
  EXPECT_EQ(self.strides(), IntArrayRef({1, 4}));
  EXPECT_TRUE(close(base.t(), expected));

  // A transposed out= with row-major inputs, and a row-major out= with
  // transposed inputs: both keep their strides and storage.
  Tensor out_base = empty({6, 4});
  Tensor out_t = out_base.t();
  const void* p = out_t.data_ptr();
  add_out(out_t, b, b);
  EXPECT_EQ(out_t.strides(), IntArrayRef({1, 4}));
  EXPECT_EQ(out_t.data_ptr(), p);
  EXPECT_TRUE(close(out_t, b + b));
  Tensor out_c = empty({4, 6});
  mul_out(out_c, base.t(), base.t());
  EXPECT_TRUE(out_c.is_contiguous());
  EXPECT_TRUE(close(out_c, base.t().contiguous() * base.t().contiguous()));

  // An empty out= is resized like a new output (PyTorch: strides (1, 4)).
  Tensor fresh = empty({0});
  add_out(fresh, base.t(), base.t());
  EXPECT_EQ(fresh.sizes(), IntArrayRef({4, 6}));
  EXPECT_EQ(fresh.strides(), IntArrayRef({1, 4}));
  EXPECT_TRUE(close(fresh, base.t().contiguous() * 2.0));
}

TEST(OutputLayout, UnaryOpsKeepATransposedLayout) {
  const Tensor xt = randn({7, 3}).t();  // (3, 7), strides (1, 3)
  for (const Tensor& y : {exp(xt), neg(xt), -xt, xt.sigmoid(), xt.abs()}) {
    EXPECT_EQ(y.strides(), IntArrayRef({1, 3}));
  }
  EXPECT_TRUE(close(exp(xt), exp(xt.contiguous())));
  EXPECT_TRUE(equal(neg(xt), neg(xt.contiguous())));
}

TEST(OutputLayout, ViewOfATransposedResultFailsClearlyWhileReshapeWorks) {
  const Tensor at = arange(12, kFloat32).view({3, 4}).t(), bt = ones({3, 4}).t();
  const Tensor y = at + bt;  // (4, 3), column-major, as in PyTorch
  try {
    (void)y.view({-1});
    FAIL() << "view should have thrown";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("reshape"), std::string::npos) << e.what();
  }
  EXPECT_EQ(y.reshape({-1}).to_vector<float>(),
            (std::vector<float>{1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12}));
  EXPECT_TRUE(y.t().view({-1}).is_contiguous()) << "its transpose is row-major: a free view";
}

TEST(OutputLayout, GradientsThroughTransposedLayoutsAreCorrect) {
  Tensor a = randn({5, 3}).requires_grad_(), b = randn({5, 3}).requires_grad_();
  Tensor y = a.t() * b.t() + a.t().exp();
  y.sum().backward();
  EXPECT_TRUE(close(a.grad(), b.detach() + a.detach().exp()));
  EXPECT_TRUE(close(b.grad(), a.detach()));
}

// Ops with kernels on raw dense memory (fused nn ops, GEMM, losses, gather)
// fed elementwise results that are no longer row-major: each must make its
// operand dense itself and give what it gives on a row-major copy.
TEST(OutputLayout, DenseKernelsAcceptElementwiseResultsInAnyLayout) {
  namespace F = nn::functional;
  Generator gen(3);
  const Tensor a = randn({6, 2, 8}, kFloat32, &gen), w = randn({8}, kFloat32, &gen);
  const Tensor x = a.transpose(0, 2) * 2.0;  // (8, 2, 6), laid out as a (6, 2, 8)
  ASSERT_FALSE(x.is_contiguous());
  const Tensor xc = x.contiguous();
  EXPECT_TRUE(close(F::softmax(x, -1), F::softmax(xc, -1)));
  EXPECT_TRUE(close(F::softmax(x, 0), F::softmax(xc, 0)));
  EXPECT_TRUE(close(F::rms_norm(x.transpose(0, 2), w), F::rms_norm(xc.transpose(0, 2), w)));
  EXPECT_TRUE(close(F::swiglu(x, x + 1.0), F::swiglu(xc, xc + 1.0)));
  const Tensor m = randn({6, 5}, kFloat32, &gen);
  EXPECT_TRUE(close(matmul(x, m), matmul(xc, m), 1e-5, 1e-5));
  EXPECT_TRUE(close(F::linear(x, m.t()), F::linear(xc, m.t()), 1e-5, 1e-5));
  const Tensor target = tensor<int64_t>({0, 3, 5, 1, 2, 4, 0, 1, 5, 3, 2, 2, 1, 0, 4, 5}, {8, 2});
  EXPECT_TRUE(close(F::cross_entropy(x.transpose(1, 2), target),
                    F::cross_entropy(xc.transpose(1, 2), target)));
  const Tensor ids = tensor<int64_t>({0, 1, 2, 3, 4, 0}, {3, 2}).t() + 1;
  EXPECT_FALSE(ids.is_contiguous());
  EXPECT_TRUE(equal(F::embedding(ids, m), F::embedding(ids.contiguous(), m)));
  EXPECT_EQ(x.to_vector<float>(), xc.to_vector<float>());
  EXPECT_TRUE(equal(x.flatten(), xc.view({-1})));
}

TEST(OutputLayout, SixteenBitOpsOnTransposedInputsAreCorrect) {
  const Tensor a = randn({9, 5}).to(kBFloat16), b = randn({9, 5}).to(kBFloat16);
  const Tensor y = a.t() + b.t();
  EXPECT_EQ(y.dtype(), kBFloat16);
  EXPECT_TRUE(equal(y, a.t().contiguous() + b.t().contiguous()));
}

// A tensor that claims to live on `device` while `owner`'s CPU memory backs
// it: TensorIter compares devices and leaves kernels to know where memory is.
Tensor claimed_on(const Tensor& owner, Device device) {
  auto storage =
      std::make_shared<StorageImpl>(owner.data_ptr(), owner.nbytes(), device, nullptr, nullptr);
  return detail::make_tensor(std::move(storage), owner.dtype(), owner.sizes(), owner.strides(), 0);
}

TEST(TensorIterDevices, AMismatchNamesTheOpAndBothDevices) {
  const Tensor a = ones({4}), backing = ones({4});
  const Tensor b = claimed_on(backing, Device(kCUDA));
  try {
    (void)add(a, b);
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("[add] expected all tensors on one device; got cpu and cuda"),
              std::string::npos)
        << what;
  }
  // An out= on another device than its inputs is a mismatch as well.
  const Tensor out_backing = zeros({4});
  Tensor out = claimed_on(out_backing, Device(kCUDA));
  EXPECT_THROW(add_out(out, a, a), DeviceError);
}

TEST(TensorIterDevices, OperandsOnOneDeviceOtherThanTheCpuAreAccepted) {
  const Tensor in_backing = ones({4}), out_backing = zeros({4});
  Tensor out = claimed_on(out_backing, Device(kCUDA));
  const Tensor in = claimed_on(in_backing, Device(kCUDA));
  EXPECT_NO_THROW((void)TensorIterConfig("copy_").add_output(out).add_input(in).build());
}

}  // namespace
}  // namespace stride
