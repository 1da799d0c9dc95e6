// TensorIter: the one way an elementwise, in-place, out= or reduction kernel
// sees memory (docs/design.md invariant 2).
//
// Note [Output layout]
// ~~~~~~~~~~~~~~~~~~~~
// Outputs are operands like inputs: they come first, and every decision that
// depends on layout — dim order, coalescing, the contiguous fast path — looks
// at the outputs' strides as well as the inputs'. A kernel therefore cannot
// write a strided output as if it were dense: it never sees "the output is
// contiguous" unless it is. A given output keeps its strides; its shape must
// equal the broadcast shape of the inputs (an output with no elements is
// resized instead), and it may not overlap itself (an expanded view) or
// partially overlap an input.
//
// Outputs that build() allocates (undefined ones, and resized empty out=) are
// dense in the dim order chosen for the inputs, as PyTorch's TensorIterator
// does: the first input whose strides tell two dims apart decides their order,
// broadcast dims decide nothing, and undecided dims stay row-major. So
// `a.t() + b.t()` gets a.t()'s column-major strides and every operand is
// walked with unit stride, while contiguous inputs still give a row-major
// contiguous output. Code that needs a contiguous result of an elementwise op
// must therefore ask for it (.contiguous(), .reshape()), not assume it.
// Reduction outputs are allocated by the op.
//
// Iteration order is innermost-first: dim 0 of the iterator is the fastest
// moving. Strides are in bytes, 0 for broadcast dims.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "stride/function_ref.h"
#include "stride/tensor.h"

namespace stride {

inline constexpr int kMaxIterOperands = 6;

class TensorIter;

class TensorIterConfig {
 public:
  explicit TensorIterConfig(const char* op) : op_(op) {}

  // Outputs must be added before inputs. An undefined output is allocated by
  // build() (and assigned to `out`), with dtype `output_dtype` if set, else
  // the inputs' common dtype.
  TensorIterConfig& add_output(Tensor& out);
  TensorIterConfig& add_input(const Tensor& in);
  // By default every operand must share one dtype (ops promote first).
  TensorIterConfig& check_all_same_dtype(bool check) {
    check_same_dtype_ = check;
    return *this;
  }
  TensorIterConfig& output_dtype(ScalarType t) {
    output_dtype_ = t;
    return *this;
  }
  // Skips the self-overlap check of outputs: for scatter kernels whose output
  // is deliberately restrided with a 0 stride, and which run serially.
  TensorIterConfig& check_mem_overlap(bool check) {
    check_overlap_ = check;
    return *this;
  }
  // Reduction: outputs have the input's shape with the reduced dims set to 1
  // (keepdim form); those dims get output stride 0.
  TensorIterConfig& is_reduction(bool r) {
    is_reduction_ = r;
    return *this;
  }
  // Iterate over this shape (fill_, copy_): inputs must broadcast to it.
  TensorIterConfig& static_shape(IntArrayRef shape) {
    static_shape_ = shape.dims();
    return *this;
  }

  TensorIter build();

 private:
  friend class TensorIter;
  const char* op_;
  std::array<Tensor*, kMaxIterOperands> outputs_{};
  std::array<Tensor, kMaxIterOperands> inputs_{};
  int noutputs_ = 0;
  int ninputs_ = 0;
  bool check_same_dtype_ = true;
  bool check_overlap_ = true;
  bool is_reduction_ = false;
  std::optional<ScalarType> output_dtype_;
  std::optional<DimVector> static_shape_;
};

class TensorIter {
 public:
  // A kernel's inner loop: `n` elements; operand k starts at data[k] and
  // advances by strides[k] bytes.
  using Loop = FunctionRef<void(char** data, const int64_t* strides, int64_t n)>;

  int ntensors() const { return ntensors_; }
  int noutputs() const { return noutputs_; }
  int ndim() const { return int(shape_.size()); }
  int64_t numel() const { return numel_; }
  IntArrayRef shape() const { return shape_; }
  const Tensor& output(int i = 0) const { return operands_[size_t(i)]; }
  const Tensor& operand(int i) const { return operands_[size_t(i)]; }
  ScalarType dtype(int i = 0) const { return operands_[size_t(i)].dtype(); }
  // Byte strides of operand k, one per iteration dim.
  const int64_t* strides(int k) const { return strides_[size_t(k)].data(); }

  // True when every operand, outputs included, is walked contiguously (after
  // coalescing: one dim, stride = itemsize).
  bool is_contiguous() const;

  // Runs `loop` over all elements, split across threads (grain = minimum
  // elements per task). Elementwise results do not depend on the split.
  void for_each(Loop loop, int64_t grain = 32768) const;
  // Runs `loop` over the linear range [begin, end) on the calling thread.
  void serial_for_each(Loop loop, int64_t begin, int64_t end) const;

  // ---- reductions (built with is_reduction) ----
  // The elements of the iteration split into output elements (the kept dims)
  // and, for each, a block of reduce_numel() input elements (reduced dims).
  int64_t output_numel() const { return output_numel_; }
  int64_t reduce_numel() const { return reduce_numel_; }
  // Pointers of output element `o` (one per output) and of the first input
  // element of its block.
  void reduction_ptrs(int64_t o, char** out_ptrs, const char** in_ptr) const;
  // Visits the block elements [begin, end) (linear order over the reduced
  // dims, dim order of the input when one dim is reduced) as runs of
  // (pointer, byte stride, count).
  void for_each_run(const char* in_ptr,
                    int64_t begin,
                    int64_t end,
                    FunctionRef<void(const char* p, int64_t stride, int64_t n)> run) const;

 private:
  friend class TensorIterConfig;
  struct Plan;
  TensorIter() = default;
  // The steps of build(), in order.
  void build(TensorIterConfig& config);
  void compute_shape(const TensorIterConfig& c, Plan& plan);
  void compute_device(const TensorIterConfig& c, Plan& plan);
  void compute_types(const TensorIterConfig& c, Plan& plan);
  void check_outputs(const TensorIterConfig& c, Plan& plan);
  void check_overlap(const TensorIterConfig& c, const Plan& plan) const;
  void compute_strides(const TensorIterConfig& c, const Plan& plan);
  void reorder_dimensions(Plan& plan);
  void allocate_or_resize_outputs(TensorIterConfig& c, const Plan& plan);
  void drop_size_one_dimensions();
  void coalesce_dimensions();
  void compute_reduction_sizes();
  // True when iteration dim d is reduced (the output's stride is 0).
  bool is_reduced(size_t d) const;
  int compare_dims(const Plan& plan, size_t a, size_t b) const;

  int ntensors_ = 0;
  int noutputs_ = 0;
  bool is_reduction_ = false;
  std::array<Tensor, kMaxIterOperands> operands_;
  std::array<char*, kMaxIterOperands> data_{};
  DimVector shape_;  // innermost first
  std::array<DimVector, kMaxIterOperands> strides_;
  int64_t numel_ = 0;
  // Reductions: dims [0, nreduce_) of shape_ are reduced, the rest kept.
  int nreduce_ = 0;
  int64_t output_numel_ = 0;
  int64_t reduce_numel_ = 0;
};

}  // namespace stride
