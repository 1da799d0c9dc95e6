// Printing tensors the way PyTorch does: tensor([[1., 2.], ...],
// dtype=torch.float64) is tensor([[1., 2.], ...], dtype=float64) here.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "stride/backend.h"
#include "stride/ops.h"

namespace stride {

namespace {

// PyTorch's print options: precision 4, 3 edge items, summarise above 1000
// elements, 80 columns.
constexpr int kPrecision = 4;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kLineWidth = 80;

// `format` takes a precision and a double: "%.*f" or "%.*e".
std::string printf_double(const char* format, int precision, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, precision, v);
  return buf;
}

// PyTorch's _Formatter: one style and one width for every element, chosen
// from the finite non-zero values: integers print as "1." unless their range
// needs scientific notation, other values with 4 decimals, or as 1.0000e+10
// when the magnitudes span more than 1000x, exceed 1e8 or go below 1e-4.
class Formatter {
 public:
  Formatter(const std::vector<double>& vals, ScalarType dtype)
      : floating_(is_floating_point(dtype)), boolean_(dtype == kBool) {
    if (!floating_) {
      for (double v : vals) width_ = std::max(width_, format_plain(v).size());
      return;
    }
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    bool any = false;
    for (double v : vals) {
      if (!std::isfinite(v) || v == 0) continue;
      any = true;
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
      int_mode_ = int_mode_ && v == std::ceil(v);
    }
    if (!any) return;
    sci_mode_ = hi / lo > 1000 || hi > 1e8 || (!int_mode_ && lo < 1e-4);
    for (double v : vals) {
      if (std::isfinite(v) && v != 0) width_ = std::max(width_, format_plain(v).size());
    }
  }

  size_t width() const { return width_; }

  std::string format(double v) const {
    const std::string s = format_plain(v);
    std::string out(width_ > s.size() ? width_ - s.size() : 0, ' ');
    out.append(s);
    return out;
  }

 private:
  std::string format_plain(double v) const {
    if (!floating_) {
      return boolean_ ? (v != 0 ? "True" : "False") : std::to_string(int64_t(v));
    }
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_mode_) return printf_double("%.*e", kPrecision, v);
    if (int_mode_) return printf_double("%.*f.", 0, v);
    return printf_double("%.*f", kPrecision, v);
  }

  bool floating_, boolean_;
  bool int_mode_ = true, sci_mode_ = false;
  size_t width_ = 1;
};

// How each element prints: one formatter over the values, or for complex
// tensors (as PyTorch) one over the real parts and one over the imaginary
// parts, joined as "1.5000-2.0000j".
class Elements {
 public:
  explicit Elements(const Tensor& t)
      : real_(t.is_complex() ? real(t) : t), complex_(t.is_complex()) {
    re_ = real_.to_vector<double>();
    re_fmt_.emplace(re_, real_.dtype());
    if (complex_) {
      const Tensor im = imag(t);
      im_ = im.to_vector<double>();
      im_fmt_.emplace(im_, im.dtype());
    }
  }

  size_t width() const {
    return complex_ ? re_fmt_->width() + im_fmt_->width() + 1 : re_fmt_->width();
  }

  std::string format(size_t i) const {
    std::string out = re_fmt_->format(re_[i]);
    if (!complex_) return out;
    std::string im = im_fmt_->format(im_[i]);
    im.erase(0, im.find_first_not_of(' '));
    if (im[0] != '-' && im[0] != '+') out.push_back('+');
    return out + im + "j";
  }

 private:
  Tensor real_;
  bool complex_;
  std::vector<double> re_, im_;
  std::optional<Formatter> re_fmt_, im_fmt_;
};

// The elements of t (row-major positions) from `pos`, as PyTorch's _tensor_str:
// a vector wraps at 80 columns, rows are joined by ",\n" (plus a blank line
// per extra dimension) and indented under their bracket; with `summarize`,
// only the first and last 3 items of each dimension.
std::string tensor_str(const Tensor& t,
                       int64_t pos,
                       int64_t depth,
                       int64_t indent,
                       const Elements& fmt,
                       bool summarize) {
  const int64_t n = t.size(depth);
  int64_t inner = 1;
  for (int64_t d = depth + 1; d < t.dim(); ++d) inner *= t.size(d);
  const bool cut = summarize && n > 2 * kEdgeItems;
  std::vector<std::string> items;
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == kEdgeItems) {
      items.push_back(depth + 1 == t.dim() ? " ..." : "...");
      i = n - kEdgeItems - 1;
      continue;
    }
    items.push_back(depth + 1 == t.dim()
                        ? fmt.format(size_t(pos + i))
                        : tensor_str(t, pos + i * inner, depth + 1, indent + 1, fmt, summarize));
  }
  std::string out = "[";
  if (depth + 1 == t.dim()) {
    const auto per_line = std::max<int64_t>(1, (kLineWidth - indent) / int64_t(fmt.width() + 2));
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0 && int64_t(i) % per_line == 0) {
        out.append(",\n").append(size_t(indent + 1), ' ');
      } else if (i > 0) {
        out.append(", ");
      }
      out.append(items[i]);
    }
  } else {
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) {
        out.append(",").append(size_t(t.dim() - depth - 1), '\n').append(size_t(indent + 1), ' ');
      }
      out.append(items[i]);
    }
  }
  out.append("]");
  return out;
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
  const Elements fmt(t);
  os << "tensor(";
  if (t.numel() == 0) {
    os << "[], size=" << shape_str(t.sizes());
  } else if (t.dim() == 0) {
    os << fmt.format(0);
  } else {
    constexpr int64_t kIndent = 7;  // "tensor("
    os << tensor_str(t, 0, 0, kIndent, fmt, t.numel() > kSummarizeAbove);
  }
  if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool &&
      t.dtype() != kComplex64) {
    os << ", dtype=" << to_string(t.dtype());
  }
  return os << ")";
}

namespace {

// Complex tensors compare part by part, as float64 pairs.
Tensor as_parts(const Tensor& t) {
  return view_as_real(t.to(kComplex128));
}

}  // namespace

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (!(a.sizes() == b.sizes())) return false;
  if (a.is_complex() || b.is_complex()) {
    return allclose(as_parts(a), as_parts(b), rtol, atol, equal_nan);
  }
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
  if (a.is_complex() || b.is_complex()) return equal(as_parts(a), as_parts(b));
  std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  return va == vb;
}

}  // namespace stride
