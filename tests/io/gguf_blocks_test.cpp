// ggml's encodings decoded by stride (src/io/gguf_blocks.h) against the
// values llama.cpp's own Python package gives for the same random blocks
// (tests/golden/gguf_blocks.safetensors, tools/gen_gguf_goldens.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <stride/io.h>
#include <stride/stride.h>
#include "io/gguf_blocks.h"

namespace stride::io::detail {
namespace {

struct Encoding {
  const char* name;
  GgmlType type;
};

constexpr Encoding kEncodings[] = {
    {"f16", GgmlType::F16},   {"bf16", GgmlType::BF16}, {"q8_0", GgmlType::Q8_0},
    {"q4_0", GgmlType::Q4_0}, {"q4_k", GgmlType::Q4_K}, {"q6_k", GgmlType::Q6_K},
};

// Each element as gguf decodes it, to a float32 rounding of the largest
// value: a multiply-add may be one rounding here (GCC contracts it into an
// FMA) where NumPy rounds twice.
TEST(GgufBlocks, DecodeAsLlamaCppsPythonPackage) {
  const SafetensorsContents golden = load_safetensors(STRIDE_GOLDEN_DIR "/gguf_blocks.safetensors");
  for (const Encoding& e : kEncodings) {
    SCOPED_TRACE(e.name);
    const Tensor raw = golden.at(std::string(e.name) + ".raw").contiguous();
    const std::vector<float> want = golden.at(std::string(e.name) + ".values").to_vector<float>();
    const GgmlTypeTraits& traits = ggml_type_traits(e.type);
    ASSERT_EQ(raw.numel() / traits.block_bytes * traits.block, int64_t(want.size()));
    ASSERT_TRUE(can_decode(e.type));
    std::vector<float> got(want.size());
    decode_row(e.type, raw.data_ptr(), got.data(), int64_t(got.size()));
    float largest = 0.0f;
    for (float w : want) largest = std::max(largest, std::abs(w));
    const double tolerance = double(largest) * 0x1p-23;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], tolerance) << "element " << i;
    }
  }
}

TEST(GgufBlocks, DecodesFloat32AsItIs) {
  const std::vector<float> x = {1.5f, -0.0f, 3e-39f, 65504.0f};
  std::vector<float> y(4);
  decode_row(GgmlType::F32, x.data(), y.data(), 4);
  EXPECT_EQ(0, std::memcmp(x.data(), y.data(), sizeof(float) * 4));
}

TEST(GgufBlocks, KnowsWhichEncodingsItDecodes) {
  EXPECT_TRUE(can_decode(GgmlType::Q4_K));
  EXPECT_FALSE(can_decode(GgmlType::Q5_K));
  EXPECT_FALSE(can_decode(GgmlType::Q4_1));
}

}  // namespace
}  // namespace stride::io::detail
