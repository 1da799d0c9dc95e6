// The shape ops (stacks, splits, dim moves, diagonals, grids, repeats) and
// the composite products of include/stride/ops.h as Tensor methods and
// stride.* functions, with PyTorch's argument names and its variadic forms
// (`atleast_1d(a, b)`, `meshgrid(a, b)` as well as `meshgrid([a, b])`).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <variant>

#include "bindings.h"
#include "op_docs.h"

namespace stride::python {

namespace {

using TensorClass = nb::class_<Tensor>;

nb::tuple as_tuple(const std::vector<Tensor>& tensors) {
  nb::list out;
  for (const Tensor& t : tensors) out.append(nb::cast(t));
  return nb::tuple(out);
}

// The tensors of `f(a, b, c)` or of `f([a, b, c])`, as PyTorch's variadic
// functions take them.
std::vector<Tensor> variadic_tensors(const nb::tuple& args, const char* op) {
  nb::handle items = args;
  if (args.size() == 1 && !nb::isinstance<Tensor>(args[0])) {
    items = args[0];
    if (!nb::isinstance<nb::list>(items) && !nb::isinstance<nb::tuple>(items)) {
      throw nb::type_error((std::string(op) +
                            "() takes tensors, or one list or tuple of them; got a " +
                            nb::cast<std::string>(nb::str(items.type())) + ".")
                               .c_str());
    }
  }
  std::vector<Tensor> out;
  for (nb::handle h : items) {
    if (!nb::isinstance<Tensor>(h)) {
      throw nb::type_error((std::string(op) + "() takes tensors, or one sequence of them; got a " +
                            nb::cast<std::string>(nb::str(h.type())) + ".")
                               .c_str());
    }
    out.push_back(nb::cast<Tensor>(h));
  }
  return out;
}

// An int, a sequence of ints, or an integer tensor (0-d: an int; 1-d: the
// sequence), as tensor_split's indices_or_sections.
std::variant<int64_t, std::vector<int64_t>> sections_or_indices(nb::handle h, const char* op) {
  if (nb::isinstance<Tensor>(h)) {
    const Tensor& t = nb::cast<const Tensor&>(h);
    if (t.is_floating_point() || t.dtype() == kBool || t.dim() > 1) {
      throw nb::type_error((std::string(op) +
                            "(): indices_or_sections as a tensor must be a 0-d or 1-d integer "
                            "tensor; got " +
                            std::string(to_string(t.dtype())) + " of " + std::to_string(t.dim()) +
                            " dims.")
                               .c_str());
    }
    const std::vector<int64_t> v = t.to(kInt64).to_vector<int64_t>();
    if (t.dim() == 0) return v[0];
    return v;
  }
  if (const std::optional<int64_t> n = index_value(h, "indices_or_sections")) return *n;
  return int_list(h, "indices_or_sections");
}

// An int or a sequence of ints (movedim's source and destination, rot90's
// dims).
std::vector<int64_t> one_or_many(nb::handle h, const char* what) {
  if (const std::optional<int64_t> v = index_value(h, what)) return {*v};
  return int_list(h, what);
}

template <class Sections, class Indices>
void def_split(
    nb::module_& m, TensorClass& cls, const char* name, Sections by_sections, Indices at_indices) {
  def_both(
      m, cls, name,
      [name, by_sections, at_indices](const Tensor& t, nb::handle how) {
        const auto s = sections_or_indices(how, name);
        return as_tuple(std::holds_alternative<int64_t>(s)
                            ? by_sections(t, std::get<int64_t>(s))
                            : at_indices(t, std::get<std::vector<int64_t>>(s)));
      },
      nb::arg("indices_or_sections"));
}

// A subscript of einsum's sublist form: 0-25 are A-Z, 26-51 a-z, as PyTorch's.
char sublist_letter(int64_t i) {
  if (i < 0 || i >= 52) {
    throw nb::value_error(
        ("einsum(): sublist subscripts are ints in [0, 52); got " + std::to_string(i) + ".")
            .c_str());
  }
  return char(i < 26 ? 'A' + i : 'a' + (i - 26));
}

std::string sublist_term(nb::handle sublist) {
  std::string term;
  for (nb::handle item : sublist) {
    term += item.is(nb::ellipsis()) ? std::string("...")
                                    : std::string(1, sublist_letter(nb::cast<int64_t>(item)));
  }
  return term;
}

// einsum(equation, *operands), einsum(equation, [operands]) or the sublist
// form einsum(op0, [0, 1], op1, [1, 2], [0, 2]); TypeError for anything else.
Tensor einsum_parsed(const nb::args& args);
Tensor einsum_call(const nb::args& args) {
  try {
    return einsum_parsed(args);
  } catch (const nb::cast_error&) {
    throw nb::type_error(
        "einsum() takes an equation and tensors, or tensors each followed by a sublist of ints "
        "(and an output sublist).");
  }
}

Tensor einsum_parsed(const nb::args& args) {
  if (args.size() == 0) throw nb::type_error("einsum() takes an equation and operands.");
  if (nb::isinstance<nb::str>(args[0])) {
    const std::string equation = nb::cast<std::string>(args[0]);
    nb::list rest;
    for (size_t i = 1; i < args.size(); ++i) rest.append(args[i]);
    return einsum(equation, variadic_tensors(nb::tuple(rest), "einsum"));
  }
  std::vector<Tensor> operands;
  std::string equation;
  size_t i = 0;
  for (; i + 1 < args.size(); i += 2) {
    operands.push_back(nb::cast<Tensor>(args[i]));
    equation += (operands.size() > 1 ? "," : "") + sublist_term(args[i + 1]);
  }
  if (i < args.size()) equation += "->" + sublist_term(args[i]);
  return einsum(equation, operands);
}

void bind_stacks_and_splits(nb::module_& m, TensorClass& cls) {
  using Unary = Tensor (*)(const Tensor&);
  for (const auto& [name, f] : {std::pair<const char*, Unary>{"atleast_1d", &atleast_1d},
                                {"atleast_2d", &atleast_2d},
                                {"atleast_3d", &atleast_3d}}) {
    def_function(m, name, [name, f](nb::args args) -> nb::object {
      if (args.size() == 1 && nb::isinstance<Tensor>(args[0])) {
        return nb::cast(f(nb::cast<const Tensor&>(args[0])));
      }
      std::vector<Tensor> out = variadic_tensors(args, name);
      for (Tensor& t : out) t = f(t);
      return as_tuple(out);
    });
  }
  using Joining = Tensor (*)(const std::vector<Tensor>&);
  for (const auto& [name, f] : {std::pair<const char*, Joining>{"hstack", &hstack},
                                {"vstack", &vstack},
                                {"row_stack", &vstack},
                                {"dstack", &dstack},
                                {"column_stack", &column_stack}}) {
    def_function(m, name, f, nb::arg("tensors"));
  }
  def_both(
      m, cls, "tensor_split",
      [](const Tensor& t, nb::handle how, int64_t dim) {
        const auto s = sections_or_indices(how, "tensor_split");
        return as_tuple(std::holds_alternative<int64_t>(s)
                            ? tensor_split(t, std::get<int64_t>(s), dim)
                            : tensor_split_at(t, std::get<std::vector<int64_t>>(s), dim));
      },
      nb::arg("indices_or_sections"), nb::arg("dim") = 0);
  def_split(m, cls, "hsplit", &hsplit,
            [](const Tensor& t, IntArrayRef i) { return hsplit_at(t, i); });
  def_split(m, cls, "vsplit", &vsplit,
            [](const Tensor& t, IntArrayRef i) { return vsplit_at(t, i); });
  def_split(m, cls, "dsplit", &dsplit,
            [](const Tensor& t, IntArrayRef i) { return dsplit_at(t, i); });
  def_both(
      m, cls, "split_with_sizes",
      [](const Tensor& t, nb::handle sizes, int64_t dim) {
        return as_tuple(split_with_sizes(t, int_list(sizes, "split_sizes"), dim));
      },
      nb::arg("split_sizes"), nb::arg("dim") = 0);
  def_function(m, "broadcast_tensors", [](nb::args args) {
    return as_tuple(broadcast_tensors(variadic_tensors(args, "broadcast_tensors")));
  });
  def_function(m, "broadcast_shapes", [](nb::args shapes) {
    DimVector shape;
    for (nb::handle s : shapes) {
      const std::vector<int64_t> one = one_or_many(s, "broadcast_shapes(): shape");
      shape = broadcast_shapes(shape, one, "broadcast_shapes");
    }
    nb::list out;
    for (const int64_t d : shape) out.append(d);
    return nb::tuple(out);
  });
  def_both(
      m, cls, "broadcast_to",
      [](const Tensor& t, nb::handle size) {
        return broadcast_to(t, int_list(size, "broadcast_to(): size"));
      },
      nb::arg("size"));
}

void bind_dim_moves(nb::module_& m, TensorClass& cls) {
  for (const char* name : {"movedim", "moveaxis"}) {
    def_both(
        m, cls, name,
        [](const Tensor& t, nb::handle source, nb::handle destination) {
          return movedim(t, one_or_many(source, "source"), one_or_many(destination, "destination"));
        },
        nb::arg("source"), nb::arg("destination"));
  }
  def_both(
      m, cls, "swapaxes", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
      nb::arg("axis0"), nb::arg("axis1"));
  def_both(
      m, cls, "swapdims", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
      nb::arg("dim0"), nb::arg("dim1"));
  def_both(m, cls, "ravel", &ravel);
  def_both(m, cls, "fliplr", &fliplr);
  def_both(m, cls, "flipud", &flipud);
  def_both(
      m, cls, "rot90",
      [](const Tensor& t, int64_t k, nb::handle dims) {
        return rot90(t, k, int_list(dims, "rot90(): dims"));
      },
      nb::arg("k") = 1, nb::arg("dims") = nb::make_tuple(0, 1));
  def_both(
      m, cls, "unflatten",
      [](const Tensor& t, int64_t dim, nb::handle sizes) {
        return unflatten(t, dim, int_list(sizes, "unflatten(): sizes"));
      },
      nb::arg("dim"), nb::arg("sizes"));
  def_method(cls, "sum_to_size", [](const Tensor& t, nb::args size) {
    return sum_to_size(t, shape_from_args(size, "sum_to_size(): size"));
  });
  def_method(cls, "repeat", [](const Tensor& t, nb::args repeats) {
    return repeat(t, shape_from_args(repeats, "repeat(): repeats"));
  });
  def_both(
      m, cls, "tile",
      [](const Tensor& t, nb::handle dims) { return tile(t, int_list(dims, "tile(): dims")); },
      nb::arg("dims"));
  def_both(
      m, cls, "repeat_interleave",
      [](const Tensor& t, nb::handle repeats, std::optional<int64_t> dim,
         std::optional<int64_t> /*output_size: a hint only*/) {
        if (nb::isinstance<Tensor>(repeats)) {
          return repeat_interleave(t, nb::cast<const Tensor&>(repeats), dim);
        }
        const std::optional<int64_t> n = index_value(repeats, "repeats");
        if (!n) throw nb::type_error("repeat_interleave(): repeats must be an int or a tensor.");
        return repeat_interleave(t, *n, dim);
      },
      nb::arg("repeats"), nb::arg("dim") = nb::none(), nb::kw_only(),
      nb::arg("output_size") = nb::none());
  // torch.repeat_interleave(repeats): index i repeated repeats[i] times.
  def_function(
      m, "repeat_interleave",
      [](const Tensor& repeats, std::optional<int64_t> /*output_size*/) {
        return repeat_interleave(arange(repeats.numel()).to(repeats.device()), repeats, 0);
      },
      nb::arg("repeats"), nb::kw_only(), nb::arg("output_size") = nb::none());
  const auto matrix_transpose = [](const Tensor& t) {
    if (t.dim() < 2) {
      throw nb::value_error(
          ("Tensor.mT takes a tensor of at least 2 dims; got shape " + shape_str(t.sizes()) + ".")
              .c_str());
    }
    return t.transpose(-2, -1);
  };
  cls.def_prop_ro("mT", matrix_transpose,
                  "A view with the last two dims swapped (the transpose of each matrix).");
  cls.def_prop_ro("mH", matrix_transpose,
                  "The conjugate transpose of each matrix: mT, for stride's real dtypes.");
  cls.def_prop_ro(
      "H",
      [](const Tensor& t) {
        if (t.dim() != 2 && t.dim() != 0) {
          throw nb::value_error(("Tensor.H takes a matrix (2 dims) or a 0-d tensor; got shape " +
                                 shape_str(t.sizes()) + ". Use mH for batches of matrices.")
                                    .c_str());
        }
        return t.dim() == 2 ? t.t() : t;
      },
      "The conjugate transpose of a matrix: its transpose, for stride's real dtypes.");
}

void bind_diagonals_and_grids(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "diag", [](const Tensor& t, int64_t d) { return diag(t, d); },
      nb::arg("diagonal") = 0);
  def_both(
      m, cls, "diag_embed",
      [](const Tensor& t, int64_t o, int64_t a, int64_t b) { return diag_embed(t, o, a, b); },
      nb::arg("offset") = 0, nb::arg("dim1") = -2, nb::arg("dim2") = -1);
  def_both(
      m, cls, "diagflat", [](const Tensor& t, int64_t o) { return diagflat(t, o); },
      nb::arg("offset") = 0);
  def_function(m, "block_diag",
               [](nb::args args) { return block_diag(variadic_tensors(args, "block_diag")); });
  def_function(m, "cartesian_prod", [](nb::args args) {
    return cartesian_prod(variadic_tensors(args, "cartesian_prod"));
  });
  def_function(
      m, "meshgrid",
      [](nb::args args, std::optional<std::string> indexing) {
        return as_tuple(meshgrid(variadic_tensors(args, "meshgrid"), indexing.value_or("ij")));
      },
      nb::arg("tensors"), nb::arg("indexing") = nb::none());
  def_function(
      m, "combinations",
      [](const Tensor& t, int64_t r, bool with_replacement) {
        return combinations(t, r, with_replacement);
      },
      nb::arg("input"), nb::arg("r") = 2, nb::arg("with_replacement") = false);
}

void bind_products(nb::module_& m, TensorClass& cls) {
  def_both(m, cls, "dot", &dot, nb::arg("tensor"));
  def_both(m, cls, "vdot", &dot, nb::arg("other"));  // conjugating is a no-op on real dtypes
  def_both(m, cls, "inner", &inner, nb::arg("other"));
  def_both(m, cls, "mv", &mv, nb::arg("vec"));
  def_both(m, cls, "kron", &kron, nb::arg("other"));
  def_both(
      m, cls, "addmv",
      [](const Tensor& t, const Tensor& mat, const Tensor& vec, const Scalar& beta,
         const Scalar& alpha) { return addmv(t, mat, vec, beta, alpha); },
      nb::arg("mat"), nb::arg("vec"), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
  def_both(
      m, cls, "addr",
      [](const Tensor& t, const Tensor& v1, const Tensor& v2, const Scalar& beta,
         const Scalar& alpha) { return addr(t, v1, v2, beta, alpha); },
      nb::arg("vec1"), nb::arg("vec2"), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
  def_function(
      m, "tensordot",
      [](const Tensor& a, const Tensor& b, nb::handle dims) {
        if (const std::optional<int64_t> n = index_value(dims, "dims")) return tensordot(a, b, *n);
        if (nb::len(dims) != 2)
          throw nb::type_error("tensordot(): dims takes an int or two lists of dims.");
        return tensordot(a, b, one_or_many(dims[0], "dims"), one_or_many(dims[1], "dims"));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("dims") = 2);
  cls.def("__rmatmul__", [](const Tensor& a, const Tensor& b) { return matmul(b, a); });
  def_both(
      m, cls, "addbmm",
      [](const Tensor& t, const Tensor& b1, const Tensor& b2, const Scalar& beta,
         const Scalar& alpha) { return addbmm(t, b1, b2, beta, alpha); },
      nb::arg("batch1"), nb::arg("batch2"), nb::kw_only(), nb::arg("beta") = 1,
      nb::arg("alpha") = 1);
  def_function(m, "chain_matmul", [](nb::args matrices) {
    return chain_matmul(variadic_tensors(matrices, "chain_matmul"));
  });
  def_function(
      m, "cdist",
      [](const Tensor& x1, const Tensor& x2, double p, nb::handle /*compute_mode: a speed hint*/) {
        return cdist(x1, x2, p);
      },
      nb::arg("x1"), nb::arg("x2"), nb::arg("p") = 2.0, nb::arg("compute_mode") = nb::none());
  def_both(
      m, cls, "dist", [](const Tensor& a, const Tensor& b, double p) { return dist(a, b, p); },
      nb::arg("other"), nb::arg("p") = 2.0);
  def_function(m, "einsum", [](nb::args args) { return einsum_call(args); });
}

}  // namespace

void bind_shape_ops(nb::module_& m, TensorClass& cls) {
  bind_stacks_and_splits(m, cls);
  bind_dim_moves(m, cls);
  bind_diagonals_and_grids(m, cls);
  bind_products(m, cls);
}

}  // namespace stride::python
