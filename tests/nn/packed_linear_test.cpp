// Packed weights (include/stride/weight_format.h, Note [Weight formats]):
// pack_weight writes what llama.cpp's quantizers write for the same weights
// (tests/golden/gguf_blocks.safetensors, from its Python package gguf),
// unpack_weight reads them back, and linear_packed multiplies by them as
// the unpacked float32 weight would, at every row count and thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <stride/io.h>
#include <stride/nn.h>
#include <stride/stride.h>

#include "support/error_message.h"
#include "support/thread_count.h"

namespace stride {
namespace {

namespace F = nn::functional;

constexpr WeightFormat kPacked[] = {WeightFormat::BFloat16, WeightFormat::Int8, WeightFormat::Int4};

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<uint8_t> out(size_t(c.numel()) * c.element_size());
  std::memcpy(out.data(), c.data_ptr(), out.size());
  return out;
}

// pack_weight's bytes are gguf's, row by row: the same rounding of each
// scale to a half and of each weight to its quant, ties included.
TEST(PackedLinear, PacksAsLlamaCppsQuantizers) {
  const io::SafetensorsContents golden =
      io::load_safetensors(STRIDE_GOLDEN_DIR "/gguf_blocks.safetensors");
  const Tensor w = golden.at("quantize.weights");
  const std::pair<const char*, WeightFormat> formats[] = {
      {"q8_0", WeightFormat::Int8}, {"q4_0", WeightFormat::Int4}, {"bf16", WeightFormat::BFloat16}};
  for (const auto& [name, format] : formats) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> want = bytes_of(golden.at(std::string("quantize.") + name));
    const Tensor packed = F::pack_weight(w, format);
    EXPECT_EQ(packed.dtype(), storage_dtype(format));
    EXPECT_EQ(packed.size(0), w.size(0));
    EXPECT_EQ(packed.size(1), stored_row_size(format, w.size(1)));
    const std::vector<uint8_t> got = bytes_of(packed);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(int(got[i]), int(want[i])) << "byte " << i;
  }
}

// Unpacked, each weight is within half a quantization step d of the
// original (d = max |w| / 127 for int8; for int4, d = max / -8 with max's
// sign, and a weight of -max lands a whole step away, on 7 d, the largest
// code), plus the rounding of d to a half: |q| d 2^-11 more. bf16 is the
// nearest bfloat16.
TEST(PackedLinear, UnpacksWithinHalfAStep) {
  Generator gen(11);
  const Tensor w = randn({7, 96}, {}, &gen) * 3.0;
  const Tensor blocks = w.abs().view({7, 3, 32}).amax({-1}, /*keepdim=*/true);
  for (WeightFormat format : kPacked) {
    SCOPED_TRACE(std::string(to_string(format)));
    const Tensor back = F::unpack_weight(F::pack_weight(w, format), format, 96);
    ASSERT_EQ(back.sizes(), w.sizes());
    ASSERT_EQ(back.dtype(), kFloat32);
    if (format == WeightFormat::BFloat16) {
      EXPECT_TRUE(equal(back, w.to(kBFloat16).to(kFloat32)));
      continue;
    }
    const bool int8 = format == WeightFormat::Int8;
    const Tensor step = blocks / (int8 ? 127.0 : 8.0);
    const double steps = (int8 ? 0.5 : 1.0) + (int8 ? 127.0 : 8.0) * 0x1p-11;
    const Tensor error = (back - w).abs().view({7, 3, 32});
    EXPECT_TRUE(error.le(step * steps + 1e-7).all().item<bool>());
    // Most weights are within half a step.
    EXPECT_GT(error.le(step * (0.5 + 0x1p-5)).to(kFloat64).mean().item<double>(), 0.95);
  }
}

// linear_packed is x @ unpack_weight(w)^T: the dot products of decoding (up
// to 4 rows) and the GEMM over unpacked tiles (more rows), for widths that
// leave partial vectors and tasks. Decoding int8 and int4 weights may round
// x by blocks of 32 to int8 (Note [Quantized activations]): each element
// then moves by at most half of its block's step d = max |x| / 127, plus
// 127 times d's rounding to a half (2^-11 d).
TEST(PackedLinear, MultipliesAsTheUnpackedWeight) {
  Generator gen(5);
  for (int64_t K : {32, 96, 1024}) {
    for (int64_t N : {1, 7, 33, 200}) {
      const Tensor w = randn({N, K}, {}, &gen);
      for (WeightFormat format : kPacked) {
        const Tensor packed = F::pack_weight(w, format);
        const Tensor dense = F::unpack_weight(packed, format, K).to(kFloat64);
        for (int64_t M : {1, 2, 3, 4, 5, 19}) {
          SCOPED_TRACE(std::string(to_string(format)) + " K " + std::to_string(K) + " N " +
                       std::to_string(N) + " M " + std::to_string(M));
          const Tensor x = randn({M, K}, {}, &gen);
          const Tensor y = F::linear_packed(x, packed, format, K);
          ASSERT_EQ(y.sizes(), IntArrayRef({M, N}));
          const Tensor want = x.to(kFloat64).matmul(dense.t());
          // float32 sums of K products: a few units of the last place of the
          // sum of magnitudes; and x's rounding.
          Tensor bound = x.abs().to(kFloat64).matmul(dense.abs().t()) * 1e-6 + 1e-6;
          if (M <= 4 && is_blocked(format)) {
            const Tensor step =
                x.abs().view({M, K / 32, 32}).amax({-1}, true).expand({M, K / 32, 32});
            const double steps = (0.5 + 127 * 0x1p-11) / 127;
            bound = bound + (step.reshape({M, K}) * steps).to(kFloat64).matmul(dense.abs().t());
          }
          EXPECT_TRUE((y.to(kFloat64) - want).abs().le(bound).all().item<bool>());
        }
      }
    }
  }
}

// A decoded row's outputs do not depend on the rows beside it or on the
// threads: generating one sequence or four, on any machine's core count,
// gives each the same bits.
TEST(PackedLinear, DecodedRowsHaveTheSameBitsAtAnyRowAndThreadCount) {
  Generator gen(9);
  const Tensor w = randn({300, 256}, {}, &gen);
  const Tensor x = randn({4, 256}, {}, &gen);
  for (WeightFormat format : kPacked) {
    SCOPED_TRACE(std::string(to_string(format)));
    const Tensor packed = F::pack_weight(w, format);
    Tensor one_thread;
    {
      testing::ThreadCount threads(1);
      one_thread = F::linear_packed(x, packed, format, 256);
    }
    testing::ThreadCount threads(2);
    EXPECT_TRUE(equal(F::linear_packed(x, packed, format, 256), one_thread));
    for (int64_t m = 0; m < 4; ++m) {
      EXPECT_TRUE(equal(F::linear_packed(x.narrow(0, m, 1), packed, format, 256),
                        one_thread.narrow(0, m, 1)));
    }
  }
}

// x keeps its leading dims and its dtype; float64 multiplies in float64.
TEST(PackedLinear, KeepsLeadingDimsAndDtype) {
  Generator gen(2);
  const Tensor w = randn({6, 64}, {}, &gen);
  const Tensor packed = F::pack_weight(w, WeightFormat::Int8);
  const Tensor x = randn({2, 3, 64}, {}, &gen);
  const Tensor y = F::linear_packed(x, packed, WeightFormat::Int8, 64);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 3, 6}));
  const Tensor y64 = F::linear_packed(x.to(kFloat64), packed, WeightFormat::Int8, 64);
  EXPECT_EQ(y64.dtype(), kFloat64);
  EXPECT_TRUE(allclose(y64.to(kFloat32), y, 1e-5, 1e-5));
  EXPECT_EQ(F::linear_packed(x.to(kBFloat16), packed, WeightFormat::Int8, 64).dtype(), kBFloat16);
}

// x's gradient is dy @ unpack(w); the stored weight gets none.
TEST(PackedLinear, GradientOfTheInput) {
  Generator gen(4);
  const Tensor packed = F::pack_weight(randn({5, 32}, {}, &gen), WeightFormat::Int4);
  const Tensor x = randn({3, 32}, {}, &gen).requires_grad_(true);
  const Tensor dy = randn({3, 5}, {}, &gen);
  F::linear_packed(x, packed, WeightFormat::Int4, 32).backward(dy);
  const Tensor want = dy.matmul(F::unpack_weight(packed, WeightFormat::Int4, 32));
  EXPECT_TRUE(allclose(x.grad(), want, 1e-5, 1e-6));
}

TEST(PackedLinear, ErrorsNameTheOpAndTheFix) {
  const Tensor w = randn({4, 48});
  EXPECT_THROW(F::pack_weight(w, WeightFormat::Int8), ShapeError);
  EXPECT_NE(testing::message_of([&] {
              F::pack_weight(w, WeightFormat::Int4);
            }).find("in_features 48 is not a multiple of 32"),
            std::string::npos);
  EXPECT_THROW(F::pack_weight(randn({64}), WeightFormat::Int8), ShapeError);
  const Tensor packed = F::pack_weight(randn({4, 64}), WeightFormat::Int8);
  EXPECT_THROW(F::linear_packed(randn({2, 64}), packed, WeightFormat::Int4, 64), ShapeError);
  EXPECT_THROW(F::linear_packed(randn({2, 64}), packed, WeightFormat::BFloat16, 64), DTypeError);
  EXPECT_THROW(F::linear_packed(randn({2, 32}), packed, WeightFormat::Int8, 64), ShapeError);
  EXPECT_THROW(F::linear_packed(randn({2, 64}).to(kInt64), packed, WeightFormat::Int8, 64),
               DTypeError);
}

// nn::Linear::pack_weight: the layer computes through its stored weight,
// which its state dict holds under "weight" (a buffer, no longer trained),
// and the input still gets its gradient.
TEST(PackedLinear, LinearLayerStoresItsWeightPacked) {
  manual_seed(3);
  nn::Linear layer(64, 10);
  const Tensor w = layer.weight.detach().clone();
  const Tensor x = randn({2, 64}).requires_grad_(true);
  layer.pack_weight(WeightFormat::Int8);
  EXPECT_EQ(layer.weight_format(), WeightFormat::Int8);
  EXPECT_EQ(layer.parameters().size(), 1u);  // the bias
  const nn::StateDict state = layer.state_dict();
  ASSERT_TRUE(state.contains("weight"));
  EXPECT_EQ(state.at("weight").dtype(), kUInt8);
  EXPECT_EQ(state.at("weight").sizes(), IntArrayRef({10, 2 * kInt8BlockBytes}));
  const Tensor y = layer.call(x);
  const Tensor want =
      F::linear_packed(x, F::pack_weight(w, WeightFormat::Int8), WeightFormat::Int8, 64) +
      layer.bias;
  EXPECT_TRUE(equal(y, want));
  y.sum().backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_NE(layer.extra_repr().find("weight_format=int8"), std::string::npos);
  layer.pack_weight(WeightFormat::Int8);  // the same format: nothing to do
  EXPECT_THROW(layer.pack_weight(WeightFormat::Int4), ValueError);
}

TEST(PackedLinear, FormatNames) {
  for (WeightFormat f :
       {WeightFormat::Float32, WeightFormat::BFloat16, WeightFormat::Int8, WeightFormat::Int4}) {
    EXPECT_EQ(parse_weight_format(to_string(f)), f);
  }
  EXPECT_EQ(parse_weight_format("fp32"), WeightFormat::Float32);
  EXPECT_FALSE(parse_weight_format("int3").has_value());
}

}  // namespace
}  // namespace stride
