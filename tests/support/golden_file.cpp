#include "support/golden_file.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>

#include "stride/autograd.h"

namespace stride::testing {

namespace {

// The tensors of `numbered` (index -> tensor) in order; an error when the
// numbers have gaps.
std::string append_dense(const std::string& name,
                         const std::map<int64_t, Tensor>& numbered,
                         std::vector<Tensor>& out) {
  for (const auto& [i, t] : numbered) {
    if (i != int64_t(out.size())) return "case " + name + " has gaps in its tensor numbering";
    out.push_back(t);
  }
  return "";
}

std::string hex_bits(const Tensor& contiguous, int64_t i) {
  const size_t size = contiguous.element_size();
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const char*>(contiguous.data_ptr()) + size_t(i) * size, size);
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(int(2 * size)) << std::setfill('0') << bits;
  return os.str();
}

}  // namespace

GoldenFile read_golden_file(const std::string& path) {
  GoldenFile file;
  io::SafetensorsContents contents;
  try {
    contents = io::load_safetensors(path);
  } catch (const std::exception& e) {
    file.error = e.what();
    return file;
  }
  file.metadata = contents.metadata;
  std::map<std::string, std::map<int64_t, Tensor>> ins, outs;
  for (const auto& [key, tensor] : contents.tensors) {
    const size_t slash = key.rfind('/');
    const std::string role = slash == std::string::npos ? key : key.substr(slash + 1);
    const std::string name = slash == std::string::npos ? "" : key.substr(0, slash);
    if (role.starts_with("in") && role.size() > 2) {
      ins[name][std::stoll(role.substr(2))] = tensor;
    } else if (role.starts_with("out") && role.size() > 3) {
      outs[name][std::stoll(role.substr(3))] = tensor;
    } else {
      file.error = "unexpected tensor name \"" + key + "\" (expected CASE/inN or CASE/outN)";
      return file;
    }
  }
  for (const auto& [name, numbered] : outs) {
    const std::string gap = append_dense(name, numbered, file.cases[name].outputs);
    if (!gap.empty()) file.error = gap;
  }
  for (const auto& [name, numbered] : ins) {
    if (!outs.count(name)) file.error = "case " + name + " has inputs but no outputs";
    const std::string gap = append_dense(name, numbered, file.cases[name].inputs);
    if (!gap.empty()) file.error = gap;
  }
  return file;
}

std::string golden_mismatch(const Tensor& got, const Tensor& want, Tolerance tol) {
  std::ostringstream os;
  os << std::setprecision(9);
  if (!got.defined()) return "stride returned an undefined tensor";
  if (got.dtype() != want.dtype()) {
    os << "dtype " << to_string(got.dtype()) << ", expected " << to_string(want.dtype());
    return os.str();
  }
  if (!(got.sizes() == want.sizes())) {
    os << "shape " << got.sizes() << ", expected " << want.sizes();
    return os.str();
  }
  const Tensor g = got.contiguous(), w = want.contiguous();
  const std::vector<double> gv = g.to_vector<double>(), wv = w.to_vector<double>();
  const size_t size = g.element_size();
  const auto* gb = static_cast<const char*>(g.data_ptr());
  const auto* wb = static_cast<const char*>(w.data_ptr());
  double max_abs = 0, max_rel = 0;
  int64_t bad = 0, first_bad = -1;
  for (size_t i = 0; i < wv.size(); ++i) {
    const double a = gv[i], b = wv[i];
    bool ok;
    if (std::isnan(a) || std::isnan(b)) {
      ok = std::isnan(a) && std::isnan(b);
    } else if (tol.exact) {
      ok = std::memcmp(gb + i * size, wb + i * size, size) == 0;
      if (!ok) max_abs = std::max(max_abs, std::fabs(a - b));
    } else if (std::isinf(a) || std::isinf(b)) {
      ok = a == b;
      if (!ok) max_abs = std::numeric_limits<double>::infinity();
    } else {
      const double diff = std::fabs(a - b);
      max_abs = std::max(max_abs, diff);
      if (b != 0) max_rel = std::max(max_rel, diff / std::fabs(b));
      ok = diff <= tol.atol + tol.rtol * std::fabs(b);
    }
    if (!ok && bad++ == 0) first_bad = int64_t(i);
  }
  if (bad == 0) return "";
  os << bad << " of " << wv.size() << " elements differ (";
  if (tol.exact) {
    os << "exact";
  } else {
    os << "rtol " << tol.rtol << ", atol " << tol.atol;
  }
  os << "); max abs diff " << max_abs << ", max rel diff " << max_rel << "; first at flat index "
     << first_bad << " of shape " << want.sizes() << ": got " << gv[size_t(first_bad)] << " ("
     << hex_bits(g, first_bad) << "), expected " << wv[size_t(first_bad)] << " ("
     << hex_bits(w, first_bad) << ")";
  return os.str();
}

std::vector<Tensor> value_and_grads(const std::vector<Tensor>& in,
                                    const std::vector<size_t>& wrt,
                                    const std::function<Tensor(const std::vector<Tensor>&)>& fn) {
  std::vector<Tensor> leaves(in.begin(), in.end() - 1);
  std::vector<Tensor> params;
  for (size_t i : wrt) {
    leaves[i] = in[i].detach().clone().requires_grad_();
    params.push_back(leaves[i]);
  }
  const Tensor y = fn(leaves);
  std::vector<Tensor> out{y.detach()};
  for (const Tensor& d : autograd::grad({y}, params, {in.back()})) out.push_back(d);
  return out;
}

}  // namespace stride::testing
