// stride::nn layers: the torch.nn modules a transformer and its baselines
// need, with PyTorch's constructor arguments, parameter names, default
// initialisation and numerics. Shapes: N batch, C channels (features), L
// length, D features of the last dim; "..." any number of leading dims.
//
// Random initialisation draws from the Generator given to the constructor
// (the default generator when null), so `manual_seed(s)` before building a
// model fixes its weights. The distributions are PyTorch's; the numbers are
// stride's own Philox streams, not PyTorch's.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ranges>
#include <string>
#include <utility>
#include <vector>

#include "stride/generator.h"
#include "stride/nn/module.h"
#include "stride/tensor.h"
#include "stride/weight_format.h"

namespace stride::nn {

// y = x W^T + b. x (..., in_features) -> (..., out_features).
// weight (out_features, in_features): kaiming_uniform_(a = sqrt(5)), i.e.
// U(-1/sqrt(in), 1/sqrt(in)); bias (out_features): U(-1/sqrt(in), 1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  // Re-draws weight and bias with PyTorch's default initialisation.
  void reset_parameters(Generator* gen = nullptr) override;
  std::string extra_repr() const override;
  // Stores the weight in `format` for inference (Note [Weight formats]):
  // "weight" becomes a buffer holding pack_weight(weight, format), which
  // forward multiplies through linear_packed; the layer's input still gets
  // its gradient, the weight none. A layer is packed once (ValueError for
  // another format then: its weights would be rounded twice); ShapeError
  // when a blocked format does not divide in_features.
  void pack_weight(WeightFormat format);
  // Takes `stored`, a weight already in `format` (pack_weight's form, e.g.
  // a GGUF file's Q8_0 blocks mapped from the file), as the layer's weight.
  // ShapeError or DTypeError when it is not that format's (out, in) form.
  void set_packed_weight(const Tensor& stored, WeightFormat format);
  WeightFormat weight_format() const { return weight_format_; }

  int64_t in_features;
  int64_t out_features;
  Tensor weight;
  Tensor bias;  // undefined without bias

 private:
  WeightFormat weight_format_ = WeightFormat::Float32;
};

// A lookup table: integer ids of any shape (...) -> (..., embedding_dim).
// weight (num_embeddings, embedding_dim) ~ N(0, 1). An id outside
// [0, num_embeddings) throws IndexError naming the id and num_embeddings.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, Generator* gen = nullptr);
  Tensor forward(const Tensor& ids) override;
  void reset_parameters(Generator* gen = nullptr) override;
  std::string extra_repr() const override;

  int64_t num_embeddings;
  int64_t embedding_dim;
  Tensor weight;
};

// Root-mean-square norm over the last dim, per token (torch.nn.RMSNorm with
// normalized_shape = dim): x (..., dim) -> x / sqrt(mean(x^2) + eps) * weight.
// weight (dim) = ones. The default eps (1e-6) is Llama's; PyTorch's default
// is the dtype's machine epsilon.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  Tensor forward(const Tensor& x) override;
  void reset_parameters(Generator* gen = nullptr) override;  // weight = ones
  std::string extra_repr() const override;

  int64_t dim;
  double eps;
  Tensor weight;
};

// (x - mean) / sqrt(var + eps) * weight + bias, with mean and biased var over
// the trailing dims given by normalized_shape: x (..., *normalized_shape).
// weight = ones and bias = zeros of normalized_shape when
// elementwise_affine; `bias` = false leaves out the bias only.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::vector<int64_t> normalized_shape,
                     double eps = 1e-5,
                     bool elementwise_affine = true,
                     bool bias = true);
  explicit LayerNorm(int64_t normalized_size,
                     double eps = 1e-5,
                     bool elementwise_affine = true,
                     bool bias = true);
  Tensor forward(const Tensor& x) override;
  void reset_parameters(Generator* gen = nullptr) override;  // ones and zeros
  std::string extra_repr() const override;

  std::vector<int64_t> normalized_shape;
  double eps;
  bool elementwise_affine;
  Tensor weight;  // undefined without elementwise_affine
  Tensor bias;    // undefined without elementwise_affine or bias
};

// Batch normalisation of x (N, C) or (N, C, L) per channel C.
//
// Training (or track_running_stats = false): normalises with the batch's mean
// and biased variance over N (and L), and — when tracking — updates
//   running_mean = (1 - momentum) * running_mean + momentum * mean
//   running_var  = (1 - momentum) * running_var + momentum * unbiased var
// and increments num_batches_tracked. With momentum = nullopt the running
// stats are the cumulative average (momentum 1 / num_batches_tracked).
// Evaluation with tracked stats normalises with running_mean/running_var.
// Buffers: running_mean (C) = 0, running_var (C) = 1, num_batches_tracked ()
// int64 = 0. Parameters (affine): weight (C) = 1, bias (C) = 0.
class BatchNorm1d : public Module {
 public:
  explicit BatchNorm1d(int64_t num_features,
                       double eps = 1e-5,
                       std::optional<double> momentum = 0.1,
                       bool affine = true,
                       bool track_running_stats = true);
  Tensor forward(const Tensor& x) override;
  // Resets running stats to (0, 1) and num_batches_tracked to 0.
  void reset_running_stats();
  std::string extra_repr() const override;

  int64_t num_features;
  double eps;
  std::optional<double> momentum;
  bool affine;
  bool track_running_stats;
  Tensor weight, bias;                                    // undefined without affine
  Tensor running_mean, running_var, num_batches_tracked;  // undefined without tracking
};

// Zeroes each element with probability p and scales the others by 1/(1-p)
// in training mode; the identity in eval mode (and for p = 0).
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  double p;
  Generator* generator;  // null: the default generator
};

// Elementwise activations; any shape.
class ReLU : public Module {
 public:
  ReLU() = default;
  Tensor forward(const Tensor& x) override;
};
class SiLU : public Module {
 public:
  SiLU() = default;
  Tensor forward(const Tensor& x) override;
};
// The exact (erf) form, PyTorch's default.
class GELU : public Module {
 public:
  GELU() = default;
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override { return "approximate='none'"; }
};

// Calls its modules in order, each on the previous one's output; the input
// itself when empty. Children are named "0", "1", ... (or as given to the
// named push_back), exactly as torch.nn.Sequential names them.
//   auto mlp = std::make_shared<nn::Sequential>(
//       std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
//       std::make_shared<nn::Linear>(8, 2));
class Sequential : public Module {
 public:
  Sequential() = default;
  template <class... Ms>
  explicit Sequential(std::shared_ptr<Ms>... modules) {
    (push_back(std::move(modules)), ...);
  }
  Tensor forward(const Tensor& x) override;

  // Appends `module` under the name str(size()) (or `name`); returns it.
  template <class M>
  std::shared_ptr<M> push_back(std::shared_ptr<M> module) {
    return push_back(std::to_string(size()), std::move(module));
  }
  template <class M>
  std::shared_ptr<M> push_back(std::string name, std::shared_ptr<M> module) {
    return register_module(std::move(name), std::move(module));
  }
  // Module i; negative i counts from the end. IndexError when out of range.
  const std::shared_ptr<Module>& operator[](int64_t i) const;
  // Module i as an M; ValueError when it is not one.
  template <class M>
  std::shared_ptr<M> at(int64_t i) const {
    auto typed = std::dynamic_pointer_cast<M>((*this)[i]);
    if (!typed) throw_wrong_type(i);
    return typed;
  }
  size_t size() const { return own_children().size(); }
  bool empty() const { return own_children().empty(); }
  // Iterates the modules (std::shared_ptr<Module>) in order.
  auto begin() const { return std::views::values(own_children().items()).begin(); }
  auto end() const { return std::views::values(own_children().items()).end(); }

 private:
  [[noreturn]] void throw_wrong_type(int64_t i) const;
};

// A list of modules, registered as "0", "1", ... It has no forward(): the
// owner iterates it (torch.nn.ModuleList).
class ModuleList : public Module {
 public:
  ModuleList() = default;
  template <class... Ms>
  explicit ModuleList(std::shared_ptr<Ms>... modules) {
    (push_back(std::move(modules)), ...);
  }

  template <class M>
  std::shared_ptr<M> push_back(std::shared_ptr<M> module) {
    return register_module(std::to_string(size()), std::move(module));
  }
  const std::shared_ptr<Module>& operator[](int64_t i) const;
  template <class M>
  std::shared_ptr<M> at(int64_t i) const {
    auto typed = std::dynamic_pointer_cast<M>((*this)[i]);
    if (!typed) throw_wrong_type(i);
    return typed;
  }
  size_t size() const { return own_children().size(); }
  bool empty() const { return own_children().empty(); }
  // Iterates the modules (std::shared_ptr<Module>) in order.
  auto begin() const { return std::views::values(own_children().items()).begin(); }
  auto end() const { return std::views::values(own_children().items()).end(); }

 private:
  [[noreturn]] void throw_wrong_type(int64_t i) const;
};

// Modules by name, in insertion order (torch.nn.ModuleDict); no forward().
class ModuleDict : public Module {
 public:
  ModuleDict() = default;
  ModuleDict(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> modules);

  // Adds `module` under `name` (a new name: ValueError when taken).
  template <class M>
  std::shared_ptr<M> insert(std::string name, std::shared_ptr<M> module) {
    return register_module(std::move(name), std::move(module));
  }
  bool contains(const std::string& name) const { return own_children().contains(name); }
  // IndexError listing the names when absent.
  const std::shared_ptr<Module>& operator[](const std::string& name) const;
  template <class M>
  std::shared_ptr<M> at(const std::string& name) const {
    auto typed = std::dynamic_pointer_cast<M>((*this)[name]);
    if (!typed) throw_wrong_type(name);
    return typed;
  }
  std::vector<std::string> keys() const { return own_children().keys(); }
  size_t size() const { return own_children().size(); }
  bool empty() const { return own_children().empty(); }
  // Iterates (name, module) pairs in insertion order.
  auto begin() const { return own_children().begin(); }
  auto end() const { return own_children().end(); }

 private:
  [[noreturn]] void throw_wrong_type(const std::string& name) const;
};

}  // namespace stride::nn
