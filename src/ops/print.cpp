// Printing tensors the way PyTorch does, closely enough to compare by eye:
// tensor([[1.0000, 2.0000], ...], dtype=float64).
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "stride/backend.h"
#include "stride/ops.h"

namespace stride {

namespace {

constexpr int64_t kEdgeItems = 3;
constexpr int64_t kSummarizeAbove = 1000;

void print_rec(std::ostream& os,
               const Tensor& t,
               const std::vector<double>& vals,
               int64_t& pos,
               int64_t depth,
               bool floating,
               bool summarize) {
  if (t.dim() == depth) {
    const double v = vals[size_t(pos++)];
    if (!floating) {
      os << (t.dtype() == kBool ? (v != 0 ? "True" : "False") : std::to_string(int64_t(v)));
    } else if (std::isnan(v)) {
      os << "nan";
    } else if (std::isinf(v)) {
      os << (v > 0 ? "inf" : "-inf");
    } else {
      os << std::fixed << std::setprecision(4) << v;
    }
    return;
  }
  const int64_t n = t.size(depth);
  int64_t inner = 1;
  for (int64_t d = depth + 1; d < t.dim(); ++d) inner *= t.size(d);
  os << "[";
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << "...";
      pos += (n - 2 * kEdgeItems) * inner;
      i = n - kEdgeItems - 1;
      if (depth + 1 < t.dim())
        os << ",\n" << std::string(size_t(depth + 8), ' ');
      else
        os << ", ";
      continue;
    }
    if (i > 0) {
      os << ",";
      if (depth + 1 < t.dim())
        os << "\n" << std::string(size_t(depth + 8), ' ');
      else
        os << " ";
    }
    print_rec(os, t, vals, pos, depth + 1, floating, summarize);
  }
  os << "]";
}

}  // namespace

std::string Tensor::str() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  if (!device_backend(t.device()).has_data()) {  // as PyTorch prints meta tensors
    os << "tensor(..., device='" << t.device().str() << "', size=" << shape_str(t.sizes());
    if (t.dtype() != kFloat32) os << ", dtype=" << to_string(t.dtype());
    return os << ")";
  }
  std::vector<double> vals = t.to_vector<double>();
  int64_t pos = 0;
  os << "tensor(";
  if (t.numel() == 0) {
    os << "[], size=" << shape_str(t.sizes());
  } else {
    print_rec(os, t, vals, pos, 0, t.is_floating_point(), t.numel() > kSummarizeAbove);
  }
  if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool) {
    os << ", dtype=" << to_string(t.dtype());
  }
  return os << ")";
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (!(a.sizes() == b.sizes())) return false;
  std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) {
    if (std::isnan(va[i]) || std::isnan(vb[i])) {
      if (!(equal_nan && std::isnan(va[i]) && std::isnan(vb[i]))) return false;
      continue;
    }
    if (va[i] == vb[i]) continue;  // equal infinities
    if (!(std::abs(va[i] - vb[i]) <= atol + rtol * std::abs(vb[i]))) return false;
  }
  return true;
}

bool equal(const Tensor& a, const Tensor& b) {
  if (!(a.sizes() == b.sizes())) return false;
  std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  return va == vb;
}

}  // namespace stride
