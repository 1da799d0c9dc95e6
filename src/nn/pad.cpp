// pad (torch.nn.functional.pad), composed of views, flips and cat (listed as
// Composite in src/core/op_list.h): each padded dim, the last first, is
// cropped by its negative pads and then extended by its positive ones, which
// fill, or wrap the cropped dim, but reflect or repeat the edge of the whole
// one, as PyTorch does (a reflection of 4 of 5 elements beside a crop of 1
// still reaches the cropped element; a replication beside a crop of every
// element repeats the edge).
#include <algorithm>
#include <vector>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

const char* mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::Constant:
      return "constant";
    case PadMode::Reflect:
      return "reflect";
    case PadMode::Replicate:
      return "replicate";
    case PadMode::Circular:
      return "circular";
  }
  return "?";
}

// `cropped` (a part of `whole` along dim d) extended by `left` and `right`
// (both >= 0) elements.
Tensor pad_dim(const Tensor& whole,
               const Tensor& cropped,
               int64_t d,
               int64_t left,
               int64_t right,
               PadMode mode,
               const Scalar& value) {
  const int64_t n = cropped.size(d), whole_n = whole.size(d);
  switch (mode) {
    case PadMode::Constant:
      break;
    case PadMode::Reflect:
      STRIDE_CHECK(left < whole_n && right < whole_n, ValueError, "[pad] reflect padding (", left,
                   ", ", right, ") of dim ", d, " must be less than its size ", whole_n,
                   ": a reflection does not repeat the edge element.");
      break;
    case PadMode::Replicate:
      STRIDE_CHECK(whole_n > 0 || (left == 0 && right == 0), ValueError,
                   "[pad] replicate padding of dim ", d,
                   " needs an element to repeat; the dim is empty.");
      break;
    case PadMode::Circular:
      STRIDE_CHECK(left <= n && right <= n, ValueError, "[pad] circular padding (", left, ", ",
                   right, ") of dim ", d, " would wrap around more than once: it must be at most ",
                   n, ", the dim's size after cropping.");
      break;
  }
  const auto side = [&](int64_t width, bool is_left) -> Tensor {
    DimVector shape = cropped.sizes().dims();
    shape[size_t(d)] = width;
    switch (mode) {
      case PadMode::Constant:
        return full(shape, value, cropped.options());
      case PadMode::Reflect:
        return whole.narrow(d, is_left ? 1 : whole_n - 1 - width, width).flip({d});
      case PadMode::Replicate:
        return whole.narrow(d, is_left ? 0 : whole_n - 1, 1).expand(shape);
      case PadMode::Circular:
        return cropped.narrow(d, is_left ? n - width : 0, width);
    }
    return {};
  };
  std::vector<Tensor> parts;
  if (left > 0) parts.push_back(side(left, true));
  parts.push_back(cropped);
  if (right > 0) parts.push_back(side(right, false));
  return parts.size() == 1 ? cropped : cat(parts, d);
}

}  // namespace

Tensor pad(const Tensor& x, IntArrayRef pad, PadMode mode, const Scalar& value) {
  ::stride::detail::check_dtype_rule(::stride::detail::Op::pad, x);
  const auto n = int64_t(pad.size());
  STRIDE_CHECK(n % 2 == 0, ValueError,
               "[pad] pad must hold (left, right) pairs, the last dim's first; got ", n,
               " values.");
  const int64_t dims = n / 2;
  STRIDE_CHECK(dims <= x.dim(), ValueError, "[pad] pad has ", n, " values for ", dims,
               " dims, but the input ", shape_str(x.sizes()), " has ", x.dim(), ".");
  if (mode != PadMode::Constant) {
    STRIDE_CHECK(dims >= 1 && dims <= 3 && (x.dim() == dims + 1 || x.dim() == dims + 2), ShapeError,
                 "[pad] ", mode_name(mode), " padding of the last ", dims, " dim(s) takes a ",
                 dims + 1, "-d or ", dims + 2, "-d input (the batch dim optional); got ",
                 shape_str(x.sizes()),
                 ". Hint: 2, 4 or 6 pads pad the last 1, 2 or 3 dims; constant padding takes "
                 "any number of dims.");
  }
  Tensor y = x;
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t d = x.dim() - 1 - i;
    const int64_t left = pad[size_t(2 * i)], right = pad[size_t(2 * i + 1)];
    const int64_t size = y.size(d) + std::min<int64_t>(left, 0) + std::min<int64_t>(right, 0);
    STRIDE_CHECK(size >= 0, ValueError, "[pad] pads (", left, ", ", right, ") of dim ", d,
                 " crop more than its ", y.size(d), " elements.");
    const Tensor cropped = y.narrow(d, std::max<int64_t>(-left, 0), size);
    y = pad_dim(y, cropped, d, std::max<int64_t>(left, 0), std::max<int64_t>(right, 0), mode,
                value);
  }
  return y;
}

}  // namespace stride::nn::functional
