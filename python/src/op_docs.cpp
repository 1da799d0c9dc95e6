// The op docstrings (op_docs.h), in PyTorch's wording. A method and its
// stride.* function share the text: "input" is self for the method.
#include "op_docs.h"

#include <utility>

namespace stride::python {

namespace {

constexpr std::pair<std::string_view, const char*> kOpDocs[] = {
    // Elementwise, from the op list (STRIDE_*_OPS in src/core/op_list.h).
    {"exp", "The exponential e^x of each element of input."},
    {"log", "The natural logarithm of each element of input."},
    {"sqrt", "The square root of each element of input."},
    {"rsqrt", "The reciprocal of the square root, 1 / sqrt(x), of each element of input."},
    {"sin", "The sine of each element of input (in radians)."},
    {"cos", "The cosine of each element of input (in radians)."},
    {"tanh", "The hyperbolic tangent of each element of input."},
    {"sigmoid", "The logistic sigmoid 1 / (1 + e^-x) of each element of input."},
    {"silu", "SiLU (swish), x * sigmoid(x), of each element of input."},
    {"gelu", "GELU, x * Phi(x) with Phi the standard normal CDF (the exact erf form)."},
    {"reciprocal", "The reciprocal 1 / x of each element of input."},
    {"neg", "The negative -x of each element of input."},
    {"abs", "The absolute value |x| of each element of input."},
    {"square", "The square x * x of each element of input."},
    {"relu", "ReLU, max(x, 0), of each element of input."},
    {"expm1", "e^x - 1 of each element of input, exact near 0."},
    {"log1p", "The natural logarithm of 1 + x of each element of input, exact near 0."},
    {"log2", "The base-2 logarithm of each element of input."},
    {"log10", "The base-10 logarithm of each element of input."},
    {"exp2", "2^x of each element of input."},
    {"tan", "The tangent of each element of input (in radians)."},
    {"asin", "The arcsine of each element of input, in radians."},
    {"acos", "The arccosine of each element of input, in radians."},
    {"atan", "The arctangent of each element of input, in radians."},
    {"sinh", "The hyperbolic sine of each element of input."},
    {"cosh", "The hyperbolic cosine of each element of input."},
    {"asinh", "The inverse hyperbolic sine of each element of input."},
    {"acosh", "The inverse hyperbolic cosine of each element of input (defined for x >= 1)."},
    {"atanh", "The inverse hyperbolic tangent of each element of input (defined on [-1, 1])."},
    {"erf", "The error function of each element of input."},
    {"erfc", "The complementary error function 1 - erf(x) of each element of input."},
    {"sign", "The sign (-1, 0 or 1) of each element of input; 0 for zeros and NaN."},
    {"floor", "The largest integer not above each element of input."},
    {"ceil", "The smallest integer not below each element of input."},
    {"round", "Each element of input rounded to the nearest integer, halves to even."},
    {"trunc", "Each element of input rounded toward zero."},
    {"frac", "The fractional part x - trunc(x) of each element of input."},
    {"mul",
     "input * other elementwise; the two broadcast together and the dtype is promoted as in "
     "PyTorch."},
    {"maximum", "The elementwise maximum of input and other (broadcast); NaN propagates."},
    {"minimum", "The elementwise minimum of input and other (broadcast); NaN propagates."},
    {"atan2",
     "The angle atan(input / other) in (-pi, pi], from the signs of both (other a tensor or a "
     "number)."},
    {"hypot", "sqrt(input^2 + other^2) elementwise, without overflow."},
    {"logaddexp", "log(e^input + e^other) elementwise, without overflow."},
    {"logaddexp2", "log2(2^input + 2^other) elementwise, without overflow."},
    {"copysign", "The magnitude of input with the sign of other, elementwise."},
    {"xlogy", "input * log(other) elementwise, 0 where input is 0 (unless other is NaN)."},
    {"eq", "input == other elementwise (other a tensor or a number), as a bool tensor."},
    {"ne", "input != other elementwise (other a tensor or a number), as a bool tensor."},
    {"lt", "input < other elementwise (other a tensor or a number), as a bool tensor."},
    {"le", "input <= other elementwise (other a tensor or a number), as a bool tensor."},
    {"gt", "input > other elementwise (other a tensor or a number), as a bool tensor."},
    {"ge", "input >= other elementwise (other a tensor or a number), as a bool tensor."},

    {"floor_divide", "input / other rounded down (div with rounding_mode='floor')."},
    {"unbind", "The views input.select(dim, i) for every i, as a tuple."},
    // Sorting, sampling and scans.
    {"sort",
     "(values, indices) of input sorted along dim (ascending unless descending=True); NaN sorts "
     "above every number and equal elements keep their order."},
    {"argsort", "The indices that sort input along dim, as sort(...).indices."},
    {"topk",
     "(values, indices) of the k largest elements along dim (smallest with largest=False), in "
     "order."},
    {"multinomial",
     "num_samples category indices drawn from each row of input, a 1-d or 2-d tensor of "
     "non-negative weights (with or without replacement)."},
    // Complex numbers (src/ops/complex.cpp).
    {"view_as_real",
     "A real view of a complex input sharing its storage, with a last dim of size 2 holding the "
     "real and imaginary parts."},
    {"view_as_complex",
     "A complex view of a float32 or float64 input whose last dim has size 2 and stride 1, "
     "sharing its storage."},
    {"real", "The real part of input, a view (input itself when it is real)."},
    {"imag", "The imaginary part of a complex input, a view."},
    {"conj",
     "The complex conjugate of input (a new tensor: stride has no lazy conjugate bit; input "
     "itself when it is real)."},
    {"conj_physical", "The complex conjugate of input (input itself when it is real)."},
    {"resolve_conj", "input itself: stride's conjugates are always materialised."},
    {"angle", "The argument atan2(imag, real) of each element of input, in radians."},
    {"isreal", "Whether each element of input has a zero imaginary part, as bool."},
    {"is_complex", "Whether input's dtype is complex64 or complex128."},
    {"complex", "real + i imag of two float32 or float64 tensors of one dtype (broadcast)."},
    {"polar", "abs * (cos(angle) + i sin(angle)) of two float32 or float64 tensors of one dtype."},
    // torch.fft (src/ops/fft.cpp).
    {"fft.fft", "The one-dimensional discrete Fourier transform of input along dim."},
    {"fft.ifft", "The one-dimensional inverse discrete Fourier transform of input along dim."},
    {"fft.rfft",
     "The one-dimensional Fourier transform of a real input: its n // 2 + 1 non-negative "
     "frequencies."},
    {"fft.irfft",
     "The inverse of rfft: the real signal of length n (2 (m - 1) by default) whose non-negative "
     "frequencies are input."},
    {"fft.hfft",
     "The one-dimensional Fourier transform of a Hermitian-symmetric signal given by its first "
     "half: a real output of length n."},
    {"fft.ihfft", "The inverse of hfft: the first half of the Hermitian spectrum of a real input."},
    {"fft.fft2", "The two-dimensional discrete Fourier transform of input (dims -2 and -1)."},
    {"fft.ifft2", "The two-dimensional inverse discrete Fourier transform of input."},
    {"fft.rfft2", "The two-dimensional Fourier transform of a real input, the last dim halved."},
    {"fft.irfft2", "The inverse of rfft2: a real output."},
    {"fft.hfft2", "The two-dimensional hfft: a real output from a half-Hermitian input."},
    {"fft.ihfft2", "The inverse of hfft2: the half-Hermitian spectrum of a real input."},
    {"fft.fftn",
     "The n-dimensional discrete Fourier transform of input over dim (every dim by default)."},
    {"fft.ifftn", "The n-dimensional inverse discrete Fourier transform of input."},
    {"fft.rfftn", "The n-dimensional Fourier transform of a real input, the last dim halved."},
    {"fft.irfftn", "The inverse of rfftn: a real output."},
    {"fft.hfftn", "The n-dimensional hfft: a real output from a half-Hermitian input."},
    {"fft.ihfftn", "The inverse of hfftn: the half-Hermitian spectrum of a real input."},
    {"fft.fftfreq",
     "The sample frequencies of an n-point transform with sample spacing d: [0, 1, ..., -1] / "
     "(d n)."},
    {"fft.rfftfreq",
     "The non-negative sample frequencies of an n-point rfft: [0, ..., n // 2] / (d n)."},
    {"fft.fftshift", "input rolled so that frequency 0 is in the middle of each of dim."},
    {"fft.ifftshift", "The inverse of fftshift."},
    {"cumsum", "The running sums of input along dim (int64 for integer input unless dtype=)."},
    {"cumprod", "The running products of input along dim (int64 for integer input unless dtype=)."},
    {"all", "Whether every element (along dim) is non-zero, as bool; true for no elements."},
    {"any", "Whether any element (along dim) is non-zero, as bool; false for no elements."},
    {"isnan", "Whether each element of input is NaN, as bool."},
    {"isinf", "Whether each element of input is +inf or -inf, as bool."},
    {"isfinite", "Whether each element of input is finite (not inf, not NaN), as bool."},
    {"flip", "A copy of input with the order of its elements reversed along dims."},
    {"roll",
     "input with its elements moved shifts places along dims, wrapping around (the flattened "
     "tensor without dims)."},
    {"outer", "The outer product of two 1-d tensors: out[i, j] = input[i] * vec2[j]."},
    {"addmm", "beta * input + alpha * (mat1 @ mat2); beta=0 ignores input's values."},
    {"baddbmm", "beta * input + alpha * bmm(batch1, batch2); beta=0 ignores input's values."},

    // Arithmetic.
    {"add", "input + alpha * other elementwise (other a tensor, broadcast, or a number)."},
    {"sub", "input - alpha * other elementwise (other a tensor, broadcast, or a number)."},
    {"div", "input / other elementwise (true division: integers give a float result)."},
    {"pow", "input raised to the power exponent (a tensor, broadcast, or a number)."},
    {"lerp", "Linear interpolation input + weight * (end - input), elementwise."},
    {"clamp", "Each element of input clamped into [min, max] (either bound may be None)."},
    {"masked_fill", "A copy of input with value where mask (bool, broadcast to input) is True."},
    {"tril",
     "The lower triangle of the last two dims: elements above diagonal `diagonal` are zeroed."},
    {"triu",
     "The upper triangle of the last two dims: elements below diagonal `diagonal` are zeroed."},
    {"where",
     "Elements of input (self for the method) where condition is True, else of other; the "
     "three broadcast together."},
    {"addcmul_", "In place: self += value * tensor1 * tensor2 (broadcast); returns self."},
    {"addcdiv_", "In place: self += value * tensor1 / tensor2 (broadcast); returns self."},
    {"fill_", "Fills self with value, in place; returns self."},
    {"zero_", "Fills self with zeros, in place; returns self."},
    {"fill", "A new tensor of input's shape and dtype filled with value."},
    {"uniform_",
     "Fills self in place with samples uniform in [from, to), from generator= or the default "
     "generator; returns self."},
    {"normal_",
     "Fills self in place with normal samples N(mean, std^2), from generator= or the default "
     "generator; returns self."},
    {"bernoulli_",
     "Fills self in place with 1 (probability p) or 0, from generator= or the default "
     "generator; returns self."},
    {"copy_",
     "Copies src (broadcast to self, its dtype converted) into self, in place; returns self."},

    // Reductions.
    {"sum",
     "The sum of input's elements over dim (None: all; an int or a sequence of ints); "
     "keepdim keeps the reduced dims as size 1, dtype= accumulates in that dtype."},
    {"mean", "The mean of input's elements over dim (None: all); keepdim keeps reduced dims."},
    {"std",
     "The standard deviation over dim (None: all), with Bessel's correction by default "
     "(correction= or unbiased=)."},
    {"var",
     "The variance over dim (None: all), with Bessel's correction by default (correction= or "
     "unbiased=)."},
    {"max",
     "The largest element (dim None), or the tuple (values, indices) of the maxima along dim."},
    {"min",
     "The smallest element (dim None), or the tuple (values, indices) of the minima along dim."},
    {"amax", "The maxima over dim (None: all; an int or a sequence of ints), values only."},
    {"amin", "The minima over dim (None: all; an int or a sequence of ints), values only."},
    {"argmax", "The index of the largest element: over the flattened input, or along dim."},
    {"argmin", "The index of the smallest element: over the flattened input, or along dim."},
    {"logsumexp", "log(sum(exp(input))) over dim, computed without overflow."},
    {"norm",
     "The p-norm over dim (None: all elements), e.g. p=2 the Euclidean norm, "
     "p=float('inf') the largest |x|."},
    {"softmax", "exp(x) / sum(exp(x)) along dim: each slice along dim sums to 1."},
    {"log_softmax", "log(softmax(input, dim)), computed stably."},

    // Views (sharing input's memory) and copies.
    {"view",
     "A view of the same memory with another shape (one dim may be -1); RuntimeError if the "
     "strides do not allow it (reshape copies instead)."},
    {"reshape",
     "input with another shape (one dim may be -1): a view when the strides allow it, else a "
     "copy."},
    {"view_as", "self.view(other.shape)."},
    {"reshape_as", "self.reshape(other.shape)."},
    {"permute", "A view with the dims reordered: dim i of the result is dim dims[i] of input."},
    {"expand",
     "A view with size-1 dims repeated (stride 0) to the given size; -1 keeps a dim. No "
     "copy: write to the result with care."},
    {"expand_as", "self.expand(other.shape)."},
    {"transpose", "A view with dims dim0 and dim1 swapped."},
    {"t", "The transpose of a 2-d tensor (a 0-d or 1-d one is returned as is), as a view."},
    {"unsqueeze", "A view with a new dim of size 1 inserted at position dim."},
    {"squeeze", "A view without the dims of size 1 (only dim, if given)."},
    {"flatten", "input with dims start_dim..end_dim merged into one (a view when possible)."},
    {"narrow", "A view of input[start:start + length] along dim."},
    {"select", "A view of input at index along dim, without that dim."},
    {"chunk", "input split into `chunks` views along dim (the last may be smaller)."},
    {"split", "input split into views of split_size along dim (the last may be smaller)."},
    {"diagonal", "A view of the diagonal `offset` of the dims dim1 and dim2 (moved last)."},
    {"as_strided",
     "A view of input's memory with the given size, stride and storage_offset (IndexError if "
     "it reaches outside the storage)."},
    {"contiguous", "self in contiguous memory: the same memory when it already is, else a copy."},
    {"clone", "A copy of input with its own memory; the copy is differentiable."},
    {"detach",
     "A new tensor sharing self's memory, cut from the autograd graph (requires_grad False)."},
    {"detach_", "Cuts self from the autograd graph in place (requires_grad False); returns self."},
    {"to",
     "self converted to a dtype and/or device (to(dtype), to('cpu'), to(other) or dtype=, "
     "device=); the same memory, not a copy, when nothing changes."},
    {"float", "self.to(stride.float32)."},
    {"double", "self.to(stride.float64)."},
    {"half", "self.to(stride.float16)."},
    {"bfloat16", "self.to(stride.bfloat16)."},
    {"long", "self.to(stride.int64)."},
    {"int", "self.to(stride.int32)."},
    {"bool", "self.to(stride.bool)."},
    {"byte", "self.to(stride.uint8)."},
    {"char", "int8, which stride does not have: raises TypeError."},
    {"short", "int16, which stride does not have: raises TypeError."},
    {"cpu", "self on the CPU (the same memory when it is already there)."},
    {"cuda",
     "self on CUDA device `device` (the same memory when it is already there); a RuntimeError "
     "says why when there is no such device (stride.cuda.unavailable_reason())."},
    {"type_as", "self.to(other.dtype)."},

    // Linear algebra, joining and indexing ops.
    {"matmul",
     "The matrix product of input and other as torch.matmul: 1-d operands are vectors, "
     "batch dims broadcast."},
    {"mm", "The matrix product of input (n, m) and mat2 (m, p): (n, p)."},
    {"bmm", "The batched matrix product of input (b, n, m) and mat2 (b, m, p): (b, n, p)."},
    {"cat", "The tensors joined along an existing dim (same shape elsewhere)."},
    {"stack", "The tensors (all of one shape) joined along a new dim."},
    // Elementwise composites and aliases (python/src/elementwise_composites.cpp).
    {"logical_and", "Elementwise AND of input and other, nonzero as true (a bool tensor)."},
    {"logical_or", "Elementwise OR of input and other, nonzero as true (a bool tensor)."},
    {"logical_xor", "Elementwise XOR of input and other, nonzero as true (a bool tensor)."},
    {"logical_not", "Elementwise NOT of input, zero as true (a bool tensor)."},
    {"fmax", "The elementwise maximum, taking the other operand where one is NaN."},
    {"fmin", "The elementwise minimum, taking the other operand where one is NaN."},
    {"isclose",
     "Where |input - other| <= atol + rtol * |other| (exact equality for infinities; NaNs equal "
     "with equal_nan), as a bool tensor."},
    {"addcmul", "input + value * tensor1 * tensor2 (broadcast)."},
    {"addcdiv", "input + value * tensor1 / tensor2 (broadcast)."},
    {"clamp_min", "The elementwise maximum of input and min (clamp with a lower bound only)."},
    {"clamp_max", "The elementwise minimum of input and max (clamp with an upper bound only)."},
    {"positive", "input itself (unary plus)."},
    {"rsub", "other - alpha * input: sub with its operands swapped."},
    {"true_divide", "input / other, true (floating-point) division."},
    {"linspace", "steps points evenly spaced from start to end, both included."},
    {"logspace", "steps points base ** x for x evenly spaced from start to end."},
    // Shape ops and composite products (python/src/shape.cpp).
    {"atleast_1d", "Each tensor viewed with at least 1 dim (a 0-d tensor as shape (1,))."},
    {"atleast_2d", "Each tensor viewed with at least 2 dims (leading dims of size 1 added)."},
    {"atleast_3d",
     "Each tensor viewed with at least 3 dims: (n,) as (1, n, 1), (m, n) as (m, n, 1)."},
    {"hstack", "The tensors joined along dim 1 (dim 0 for 1-d tensors)."},
    {"vstack", "The tensors, made at least 2-d, joined along dim 0."},
    {"row_stack", "The tensors, made at least 2-d, joined along dim 0 (vstack)."},
    {"dstack", "The tensors, made at least 3-d, joined along dim 2."},
    {"column_stack", "The tensors joined as columns: 0-d and 1-d ones as (n, 1), along dim 1."},
    {"tensor_split",
     "Views of input along dim: indices_or_sections equal parts (sizes differing by at most "
     "one), or the pieces between the given indices."},
    {"hsplit", "tensor_split along dim 1 (dim 0 of a 1-d tensor); sections must divide it."},
    {"vsplit", "tensor_split along dim 0 of a tensor of at least 2 dims."},
    {"dsplit", "tensor_split along dim 2 of a tensor of at least 3 dims."},
    {"split_with_sizes", "Views of input along dim, of the given sizes (which add up to it)."},
    {"broadcast_tensors", "The tensors expanded (as views) to their common broadcast shape."},
    {"broadcast_shapes", "The shape that tensors of the given shapes broadcast to."},
    {"broadcast_to", "A view of input expanded to size (broadcasting rules)."},
    {"movedim",
     "A view with the dims source moved to the places destination, the others in their order."},
    {"moveaxis", "movedim: the dims source moved to the places destination."},
    {"swapaxes", "A view with dims axis0 and axis1 swapped (transpose)."},
    {"swapdims", "A view with dims dim0 and dim1 swapped (transpose)."},
    {"ravel", "input flattened to 1-d: a view when the strides allow, else a copy."},
    {"fliplr", "A copy of input reversed along dim 1."},
    {"flipud", "A copy of input reversed along dim 0."},
    {"rot90", "input rotated by k quarter turns in the plane of dims, from dims[0] to dims[1]."},
    {"unflatten", "A view with dim split into the dims sizes (one of them may be -1)."},
    {"sum_to_size", "input summed down to size, a shape that input broadcasts from."},
    {"repeat", "input tiled repeats[i] times along dim i (extra leading repeats add dims)."},
    {"tile", "input tiled dims[i] times along dim i (dims padded with leading ones)."},
    {"repeat_interleave",
     "Each element repeated `repeats` times (or repeats[i] times) along dim, or along the "
     "flattened input without a dim. Given only repeats: each index i repeated repeats[i] times."},
    {"diag",
     "A 1-d input on the diagonal `diagonal` of a square matrix, or that diagonal of a 2-d "
     "input (a copy)."},
    {"diag_embed",
     "The last dim of input on the diagonal `offset` of the new dims dim1 and dim2, zeros "
     "elsewhere."},
    {"diagflat", "input flattened, on the diagonal `offset` of a square matrix."},
    {"block_diag",
     "The tensors (at most 2-d) on the diagonal blocks of a matrix, zeros elsewhere."},
    {"cartesian_prod", "The cartesian product of the 1-d tensors, one tuple per row."},
    {"meshgrid",
     "Coordinate grids: output i varies along dim i (indexing='ij'; 'xy' swaps the first two), "
     "as expanded views."},
    {"combinations",
     "The combinations of r elements of a 1-d input, one per row, in lexicographic order "
     "(with_replacement allows repeats)."},
    {"dot", "The dot product of two 1-d tensors of one dtype (a 0-d tensor)."},
    {"vdot", "The dot product of two 1-d tensors (the first conjugated: dot for real dtypes)."},
    {"inner", "The products of input and other summed over their last dims."},
    {"mv", "The matrix-vector product of input (n, k) and vec (k,)."},
    {"kron", "The Kronecker product of input and other."},
    {"addmv", "beta * input + alpha * (mat @ vec); beta = 0 ignores input."},
    {"addr", "beta * input + alpha * outer(vec1, vec2); beta = 0 ignores input."},
    {"addbmm", "beta * input + alpha * the sum over i of batch1[i] @ batch2[i]."},
    {"chain_matmul", "The product of the matrices, left to right."},
    {"cdist", "The p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M)."},
    {"dist", "The p-norm of input - other (broadcast)."},
    {"einsum",
     "Einstein summation: einsum('ij,jk->ik', a, b); '...' for broadcast dims, a repeated "
     "subscript for a diagonal, or the sublist form einsum(a, [0, 1], b, [1, 2], [0, 2])."},
    {"tensordot",
     "a and b contracted over dims: the last dims of a with the first of b, or the two lists "
     "pairwise."},
    {"index_select", "The slices of input at index (1-d, integer) along dim, as a copy."},
    {"gather", "out[i][j] = input[index[i][j]][j] for dim 0 (index's shape; likewise for dim)."},
    {"scatter_add",
     "A copy of input with src added at index along dim (duplicates add up), as "
     "torch.scatter_add."},
    {"scatter",
     "A copy of input with src (or value) written at index along dim, as torch.scatter; "
     "reduce='add' or 'multiply' combines instead."},
    {"scatter_reduce",
     "A copy of input with src reduced at index along dim (sum, prod, mean, amax, amin); "
     "include_self=False leaves input's values out, as torch.scatter_reduce."},
    {"index_add", "A copy of input with alpha * source added at index (1-d) along dim."},
    {"index_copy", "A copy of input with the slices of source copied to index (1-d) along dim."},
    {"index_fill", "A copy of input with the slices at index (1-d) along dim set to value."},
    {"index_reduce",
     "A copy of input with the slices of source reduced (prod, mean, amax, amin) into index "
     "(1-d) along dim."},
    {"take", "The elements of input at the flat indices index, as if input were 1-d."},
    {"put", "A copy of input with source written (or added) at the flat indices index."},
    {"take_along_dim",
     "gather along dim with indices broadcast against input; without dim, of input flattened."},
    {"masked_select", "The elements of input where mask (broadcast) is True, as a 1-d tensor."},
    {"masked_scatter",
     "A copy of input with source's leading elements written where mask is True, in order."},
    {"nonzero",
     "The indices of input's non-zero elements, (count, input.dim()) int64; as_tuple=True gives "
     "one tensor per dim."},
    {"argwhere", "The indices of input's non-zero elements, (count, input.dim()) int64."},
    {"select_scatter", "A copy of input with src written into input.select(dim, index)."},
    {"slice_scatter", "A copy of input with src written into the slice start:end:step of dim."},
    {"diagonal_scatter",
     "A copy of input with src written into input.diagonal(offset, dim1, dim2)."},
    {"prod",
     "The product of input's elements (or along dim), int64 for integers unless dtype= is "
     "given."},
    {"nansum", "The sum of input's elements with NaN read as zero."},
    {"nanmean", "The mean of input's non-NaN elements."},
    {"var_mean", "(var, mean) of input over dim, with correction= as torch.var."},
    {"std_mean", "(std, mean) of input over dim, with correction= as torch.std."},
    {"count_nonzero", "The number of non-zero elements of input (over dim), int64."},
    {"aminmax", "(min, max) of input's elements, or along dim, as a named tuple."},
    {"median",
     "The lower median of input's elements; with dim, (values, indices) along it. NaN "
     "propagates."},
    {"nanmedian", "median with NaNs left out (NaN only when every element is NaN)."},
    {"kthvalue", "(values, indices) of the k-th smallest element (1-based) along dim."},
    {"mode", "(values, indices) of the most frequent value along dim (the smallest of ties)."},
    {"quantile",
     "The q-quantiles of input (over dim), interpolation linear, lower, higher, nearest or "
     "midpoint; NaN propagates."},
    {"nanquantile", "quantile with NaNs left out."},
    {"msort", "input sorted along dim 0."},
    {"cummax", "(values, indices) of the running maximum of input along dim."},
    {"cummin", "(values, indices) of the running minimum of input along dim."},
    {"logcumsumexp", "log(cumsum(exp(input))) along dim, computed without overflow."},
    {"searchsorted",
     "For each value of input, the index in the last dim of sorted_sequence where it would be "
     "inserted (right=True or side='right': after equal elements); sorter= orders it."},
    {"bucketize", "The bucket of each element of input among the 1-d boundaries (searchsorted)."},
    {"bincount",
     "The count of each value 0..max of input (1-d, non-negative), weighted by weights=, at "
     "least minlength bins."},
    {"histc", "A histogram of input in bins equal bins over [min, max] (both 0: input's range)."},
    {"unique",
     "The sorted distinct elements of input (or slices along dim), with the inverse and counts "
     "when asked for."},
    {"unique_consecutive",
     "input with each run of equal neighbours kept once, with the inverse and counts when asked "
     "for."},
    {"isin", "Whether each element of elements is among test_elements (invert=True: is not)."},
    {"allclose", "True if |input - other| <= atol + rtol * |other| everywhere (bool)."},
    {"equal", "True if input and other have the same shape and elements (bool)."},

    // The random factories (generator.cpp).
    {"rand",
     "Samples uniform in [0, 1) of shape size (rand(2, 3) or rand((2, 3))), from generator= or "
     "the default generator."},
    {"randn",
     "Standard normal samples of shape size (randn(2, 3) or randn((2, 3))), from generator= or "
     "the default generator."},
    {"randint",
     "Integers uniform in [low, high) of shape size: randint(10, (2, 3)) or "
     "randint(0, 10, (2, 3)); int64 unless dtype= is given."},
    {"normal",
     "Normal samples: normal(mean, std) with tensors or numbers broadcast together, or "
     "normal(mean, std, size) with numbers."},
    {"bernoulli", "1 with probability input (or p), else 0, in input's dtype."},
    {"exponential_", "Fills self with exponential samples of rate lambd; returns self."},
    {"geometric_",
     "Fills self with geometric samples (trials to the first success of probability p)."},
    {"cauchy_", "Fills self with Cauchy samples of the given median and sigma; returns self."},
    {"log_normal_",
     "Fills self with exp of normal samples of the given mean and std; returns self."},
    {"randint_like",
     "randint with input's shape, dtype and device: randint_like(input, high) or "
     "randint_like(input, low, high)."},
    {"rand_like", "rand with input's shape, dtype and device."},
    {"randn_like", "randn with input's shape, dtype and device."},
};

}  // namespace

std::string op_doc(std::string_view name) {
  for (const auto& [key, doc] : kOpDocs) {
    if (key == name) return doc;
  }
  if (name.size() > 1 && name.back() == '_') {
    const std::string_view base = name.substr(0, name.size() - 1);
    for (const auto& [key, doc] : kOpDocs) {
      if (key == base) return "In-place version of " + std::string(base) + "(); returns self.";
    }
  }
  return "";
}

}  // namespace stride::python
