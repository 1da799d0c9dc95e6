// The golden files of PyTorch's outputs that tools/gen_goldens.py and
// tools/gen_nn_goldens.py write, read and compared for the tests: each case
// is tensors named CASE/inN (its inputs) and CASE/outN (PyTorch's outputs),
// numbered densely from 0, with metadata saying how the file was made.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "stride/io.h"
#include "stride/tensor.h"

namespace stride::testing {

struct GoldenCaseData {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

struct GoldenFile {
  io::Metadata metadata;
  std::map<std::string, GoldenCaseData> cases;
  std::string error;  // why the file could not be read, if it could not
};

GoldenFile read_golden_file(const std::string& path);

// How close a result must be: bit for bit, or within atol + rtol * |want|
// elementwise (NaN matching NaN, infinities themselves).
struct Tolerance {
  bool exact = false;
  double rtol = 0, atol = 0;
};

// Empty when `got` matches `want` (dtype, shape and values); otherwise what
// differs, llm.c style: the count of bad elements, the max abs and rel
// differences, and the first bad element with its bits.
std::string golden_mismatch(const Tensor& got, const Tensor& want, Tolerance tolerance);

// A differentiable golden case's outputs: fn run on `in` without its last
// entry (the upstream gradient) and with the inputs at `wrt` as fresh
// leaves; returns {y, d y / d in[wrt[0]], ...}.
std::vector<Tensor> value_and_grads(const std::vector<Tensor>& in,
                                    const std::vector<size_t>& wrt,
                                    const std::function<Tensor(const std::vector<Tensor>&)>& fn);

}  // namespace stride::testing
