#include "stride/nn/layers.h"

#include <cmath>
#include <sstream>

#include "core/check.h"
#include "stride/autograd.h"
#include "stride/nn/functional.h"
#include "stride/nn/init.h"
#include "stride/ops.h"

namespace stride::nn {

namespace F = functional;

namespace {

using ::stride::detail::str_cat;

const char* py_bool(bool b) {
  return b ? "True" : "False";
}

// Python's repr of a tuple of ints: "(8,)", "(2, 3)".
std::string py_tuple(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << (v.size() == 1 ? ",)" : ")");
  return os.str();
}

void check_size(int64_t n, const char* layer, const char* what) {
  STRIDE_CHECK(n >= 0, ValueError, "[", layer, "] ", what, " must be >= 0; got ", n, ".");
}

// PyTorch refuses mixed dtypes in layers ("mat1 and mat2 must have the same
// dtype"); stride's ops would promote silently, so the layers check.
void check_dtype_matches(const Tensor& x, const Tensor& weight, const char* layer) {
  if (!weight.defined() || x.dtype() == weight.dtype()) return;
  STRIDE_CHECK(false, DTypeError, "[", layer, "] expected a ", to_string(weight.dtype()),
               " input like the layer's parameters; got ", to_string(x.dtype()),
               ". Hint: convert the input to ", to_string(weight.dtype()), ", or the model to ",
               to_string(x.dtype()), " with ->to().");
}

int64_t wrap_index(int64_t i, size_t size, const char* container) {
  const auto n = int64_t(size);
  STRIDE_CHECK(i >= -n && i < n, IndexError, "[", container, "] index ", i, " is out of range for ",
               n, " modules.");
  return i < 0 ? i + n : i;
}

}  // namespace

// ---- Linear ----

Linear::Linear(int64_t in, int64_t out, bool with_bias, Generator* gen)
    : in_features(in), out_features(out) {
  check_size(in, "Linear", "in_features");
  check_size(out, "Linear", "out_features");
  weight = register_parameter("weight", empty({out, in}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  reset_parameters(gen);
}

// PyTorch's Linear.reset_parameters, step for step; a packed weight is
// drawn in float32 and packed again.
void Linear::reset_parameters(Generator* gen) {
  Tensor w = weight_format_ == WeightFormat::Float32
                 ? weight
                 : empty({out_features, in_features}, weight.options().dtype(kFloat32));
  init::kaiming_uniform_(w, std::sqrt(5.0), init::FanMode::FanIn, init::Nonlinearity::LeakyReLU,
                         gen);
  if (weight_format_ != WeightFormat::Float32) {
    NoGradGuard no_grad;
    weight.copy_(F::pack_weight(w, weight_format_));
  }
  if (bias.defined()) {
    const int64_t fan_in = in_features;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound, gen);
  }
}

Tensor Linear::forward(const Tensor& x) {
  STRIDE_CHECK(x.dim() >= 1 && x.size(-1) == in_features, ShapeError,
               "[Linear] expected input (..., ", in_features, "); got ", shape_str(x.sizes()),
               ". Hint: Linear(", in_features, ", ", out_features, ") maps (..., ", in_features,
               ") to (..., ", out_features, "); the last dim of the input must be in_features.");
  if (weight_format_ != WeightFormat::Float32) {
    const Tensor y = F::linear_packed(x, weight, weight_format_, in_features);
    return bias.defined() ? y + bias : y;
  }
  check_dtype_matches(x, weight, "Linear");
  return F::linear(x, weight, bias);
}

void Linear::pack_weight(WeightFormat format) {
  if (format == weight_format_) return;
  STRIDE_CHECK(weight_format_ == WeightFormat::Float32, ValueError, "[Linear] pack_weight: the ",
               "weight is stored as ", to_string(weight_format_), " already; packing it as ",
               to_string(format), " would round it twice. Hint: load the float32 weights again ",
               "and pack those.");
  NoGradGuard no_grad;
  set_packed_weight(F::pack_weight(weight, format), format);
}

void Linear::set_packed_weight(const Tensor& stored, WeightFormat format) {
  STRIDE_CHECK(weight_format_ == WeightFormat::Float32, ValueError,
               "[Linear] set_packed_weight: the weight is stored as ", to_string(weight_format_),
               " already.");
  STRIDE_CHECK(format != WeightFormat::Float32, ValueError,
               "[Linear] set_packed_weight: float32 is the parameter itself; assign weight "
               "instead.");
  STRIDE_CHECK(!is_blocked(format) || in_features % kWeightBlock == 0, ShapeError,
               "[Linear] set_packed_weight: ", to_string(format), " weights are blocks of ",
               kWeightBlock, " along a row; in_features ", in_features, " is not a multiple of ",
               kWeightBlock, ".");
  STRIDE_CHECK(stored.dtype() == storage_dtype(format), DTypeError,
               "[Linear] set_packed_weight: a ", to_string(format), " weight is stored as ",
               to_string(storage_dtype(format)), "; got ", to_string(stored.dtype()), ".");
  const int64_t row = stored_row_size(format, in_features);
  STRIDE_CHECK(stored.dim() == 2 && stored.size(0) == out_features && stored.size(1) == row,
               ShapeError, "[Linear] set_packed_weight: a ", to_string(format),
               " weight of Linear(", in_features, ", ", out_features, ") is stored as (",
               out_features, ", ", row, "); got ", shape_str(stored.sizes()), ".");
  weight = parameter_to_buffer("weight", stored);
  weight_format_ = format;
}

std::string Linear::extra_repr() const {
  return str_cat("in_features=", in_features, ", out_features=", out_features,
                 ", bias=", py_bool(bias.defined()),
                 weight_format_ == WeightFormat::Float32
                     ? std::string()
                     : str_cat(", weight_format=", to_string(weight_format_)));
}

// ---- Embedding ----

Embedding::Embedding(int64_t num, int64_t dim, Generator* gen)
    : num_embeddings(num), embedding_dim(dim) {
  check_size(num, "Embedding", "num_embeddings");
  check_size(dim, "Embedding", "embedding_dim");
  weight = register_parameter("weight", empty({num, dim}));
  reset_parameters(gen);
}

void Embedding::reset_parameters(Generator* gen) {
  init::normal_(weight, 0.0, 1.0, gen);
}

Tensor Embedding::forward(const Tensor& ids) {
  STRIDE_CHECK(ids.dtype() == kInt64 || ids.dtype() == kInt32, DTypeError,
               "[Embedding] expected integer ids (int64 or int32); got ", to_string(ids.dtype()),
               ". Hint: token ids index rows of the table; convert with .to(kInt64).");
  return F::embedding(ids, weight);
}

std::string Embedding::extra_repr() const {
  return str_cat(num_embeddings, ", ", embedding_dim);
}

// ---- RMSNorm ----

RMSNorm::RMSNorm(int64_t dim_, double eps_) : dim(dim_), eps(eps_) {
  check_size(dim_, "RMSNorm", "dim");
  weight = register_parameter("weight", ones({dim_}));
}

void RMSNorm::reset_parameters(Generator*) {
  NoGradGuard no_grad;
  weight.fill_(1);
}

Tensor RMSNorm::forward(const Tensor& x) {
  STRIDE_CHECK(x.dim() >= 1 && x.size(-1) == dim, ShapeError, "[RMSNorm] expected input (..., ",
               dim, "); got ", shape_str(x.sizes()),
               ". Hint: RMSNorm normalises the last dim, which must equal its dim.");
  check_dtype_matches(x, weight, "RMSNorm");
  return F::rms_norm(x, weight, eps);
}

std::string RMSNorm::extra_repr() const {
  return str_cat(py_tuple({dim}), ", eps=", eps, ", elementwise_affine=True");
}

// ---- LayerNorm ----

LayerNorm::LayerNorm(std::vector<int64_t> shape, double eps_, bool affine, bool with_bias)
    : normalized_shape(std::move(shape)), eps(eps_), elementwise_affine(affine) {
  for (int64_t n : normalized_shape) check_size(n, "LayerNorm", "normalized_shape");
  if (affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    if (with_bias) bias = register_parameter("bias", zeros(normalized_shape));
  }
}

LayerNorm::LayerNorm(int64_t normalized_size, double eps_, bool affine, bool with_bias)
    : LayerNorm(std::vector<int64_t>{normalized_size}, eps_, affine, with_bias) {}

void LayerNorm::reset_parameters(Generator*) {
  NoGradGuard no_grad;
  if (weight.defined()) weight.fill_(1);
  if (bias.defined()) bias.zero_();
}

Tensor LayerNorm::forward(const Tensor& x) {
  const auto k = int64_t(normalized_shape.size());
  bool fits = x.dim() >= k;
  for (int64_t i = 0; fits && i < k; ++i) {
    fits = x.size(x.dim() - k + i) == normalized_shape[size_t(i)];
  }
  std::string expected = "(...";
  for (int64_t n : normalized_shape) expected += ", " + std::to_string(n);
  STRIDE_CHECK(fits, ShapeError, "[LayerNorm] expected input ", expected, "); got ",
               shape_str(x.sizes()),
               ". Hint: LayerNorm normalises the trailing dims, which must equal its "
               "normalized_shape.");
  check_dtype_matches(x, weight, "LayerNorm");
  return F::layer_norm(x, normalized_shape, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  return str_cat(py_tuple(normalized_shape), ", eps=", eps,
                 ", elementwise_affine=", py_bool(elementwise_affine));
}

// ---- BatchNorm1d ----

BatchNorm1d::BatchNorm1d(
    int64_t features, double eps_, std::optional<double> momentum_, bool affine_, bool track)
    : num_features(features),
      eps(eps_),
      momentum(momentum_),
      affine(affine_),
      track_running_stats(track) {
  check_size(features, "BatchNorm1d", "num_features");
  if (affine) {
    weight = register_parameter("weight", ones({features}));
    bias = register_parameter("bias", zeros({features}));
  }
  if (track) {
    running_mean = register_buffer("running_mean", zeros({features}));
    running_var = register_buffer("running_var", ones({features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

void BatchNorm1d::reset_running_stats() {
  if (!track_running_stats) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

Tensor BatchNorm1d::forward(const Tensor& x) {
  STRIDE_CHECK((x.dim() == 2 || x.dim() == 3) && x.size(1) == num_features, ShapeError,
               "[BatchNorm1d] expected input (N, ", num_features, ") or (N, ", num_features,
               ", L); got ", shape_str(x.sizes()),
               ". Hint: channels are dim 1; a (N, L, C) sequence needs .transpose(1, 2) first.");
  check_dtype_matches(x, track_running_stats ? running_mean : weight, "BatchNorm1d");
  const bool batch_stats = is_training() || !track_running_stats;
  // PyTorch's exponential_average_factor: momentum, or the cumulative
  // average (1 / batches seen) when momentum is None.
  double factor = 0.0;
  if (is_training() && track_running_stats) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    factor = momentum ? *momentum : 1.0 / double(num_batches_tracked.item<int64_t>());
  }
  // Untracked statistics are not passed, so that batch_norm neither reads
  // nor updates them.
  return F::batch_norm(x, track_running_stats ? running_mean : Tensor(),
                       track_running_stats ? running_var : Tensor(), weight, bias, batch_stats,
                       factor, eps);
}

std::string BatchNorm1d::extra_repr() const {
  std::ostringstream os;
  os << num_features << ", eps=" << eps << ", momentum=";
  if (momentum) {
    os << *momentum;
  } else {
    os << "None";
  }
  os << ", affine=" << py_bool(affine) << ", track_running_stats=" << py_bool(track_running_stats);
  return os.str();
}

// ---- Dropout and activations ----

Dropout::Dropout(double p_, Generator* gen) : p(p_), generator(gen) {
  STRIDE_CHECK(p_ >= 0.0 && p_ <= 1.0, ValueError,
               "[Dropout] p is the probability of zeroing an element and must be in [0, 1]; got ",
               p_, ".");
}

Tensor Dropout::forward(const Tensor& x) {
  return F::dropout(x, p, is_training(), generator);
}

std::string Dropout::extra_repr() const {
  return str_cat("p=", p, ", inplace=False");
}

Tensor ReLU::forward(const Tensor& x) {
  return F::relu(x);
}

Tensor SiLU::forward(const Tensor& x) {
  return F::silu(x);
}

Tensor GELU::forward(const Tensor& x) {
  return F::gelu(x);
}

// ---- containers ----

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (const auto& m : *this) h = m->call(h);
  return h;
}

const std::shared_ptr<Module>& Sequential::operator[](int64_t i) const {
  return own_children().items()[size_t(wrap_index(i, size(), "Sequential"))].second;
}

void Sequential::throw_wrong_type(int64_t i) const {
  throw ValueError(str_cat("[Sequential] module ", i, " is a ", (*this)[i]->name(),
                           ", not the type requested from at<>()."));
}

const std::shared_ptr<Module>& ModuleList::operator[](int64_t i) const {
  return own_children().items()[size_t(wrap_index(i, size(), "ModuleList"))].second;
}

void ModuleList::throw_wrong_type(int64_t i) const {
  throw ValueError(str_cat("[ModuleList] module ", i, " is a ", (*this)[i]->name(),
                           ", not the type requested from at<>()."));
}

ModuleDict::ModuleDict(
    std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> modules) {
  for (const auto& [name, module] : modules) insert(name, module);
}

const std::shared_ptr<Module>& ModuleDict::operator[](const std::string& name) const {
  if (const auto* m = own_children().find(name)) return *m;
  detail::throw_missing_key(name, own_children().keys(), "ModuleDict");
}

void ModuleDict::throw_wrong_type(const std::string& name) const {
  throw ValueError(str_cat("[ModuleDict] module '", name, "' is a ", (*this)[name]->name(),
                           ", not the type requested from at<>()."));
}

}  // namespace stride::nn
