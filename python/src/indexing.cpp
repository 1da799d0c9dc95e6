// Indexing as Python code writes it. Ints, slices (any positive step), None
// and ... give views of the same memory, as in PyTorch; integer tensors
// (and lists of ints) and boolean masks are advanced indices: they gather a
// copy (stride::index, through which the gradient flows back), broadcast
// together when there are several, with PyTorch's rule for where their dims
// go. Assignment writes through the view, or through stride::index_put_.
#include <nanobind/stl/vector.h>

#include <numeric>
#include <string>

#include "bindings.h"

namespace stride::python {

namespace {

enum class Kind { Int, Slice, None, Ellipsis, IntTensor, Mask };

struct Item {
  Kind kind;
  nb::handle obj;
  Tensor index;         // IntTensor, Mask, and Int given as a 0-d tensor
  int64_t integer = 0;  // Int given as a Python int
};

Item classify(nb::handle h) {
  if (h.is_none()) return {Kind::None, h, {}};
  if (h.ptr() == Py_Ellipsis) return {Kind::Ellipsis, h, {}};
  if (PySlice_Check(h.ptr())) return {Kind::Slice, h, {}};
  // NumPy's values index as the tensors they convert to (a NumPy integer
  // as a 0-d one), not through __index__, which a NumPy array has too.
  if (!nb::isinstance<Tensor>(h) && !is_numpy(h)) {
    if (const std::optional<int64_t> i = index_value(h, "an index")) return {Kind::Int, h, {}, *i};
  }
  Tensor index;
  if (nb::isinstance<Tensor>(h)) {
    index = nb::cast<Tensor>(h);
  } else if (PyList_Check(h.ptr()) || is_numpy(h)) {
    index = tensor_from_data(h, std::nullopt, "tensor[index]: index");
  } else if (PyBool_Check(h.ptr())) {
    index = scalar_tensor(Scalar(h.ptr() == Py_True), kBool);
  } else {
    throw nb::index_error(("only integers, slices (`:`), ellipsis (`...`), None and integer or "
                           "boolean tensors are valid indices; got " +
                           std::string(nb::inst_name(h).c_str()) + ".")
                              .c_str());
  }
  if (index.dtype() == kBool || index.dtype() == kUInt8) return {Kind::Mask, h, index.to(kBool)};
  if (index.is_floating_point()) {
    throw nb::index_error(("tensors used as indices must be integer or boolean; got a " +
                           std::string(to_string(index.dtype())) + " tensor.")
                              .c_str());
  }
  // A 0-d integer tensor indexes as the int it holds (a view), as in PyTorch.
  if (index.dim() == 0) return {Kind::Int, h, index};
  return {Kind::IntTensor, h, index.to(kInt64)};
}

std::vector<Item> parse(nb::handle index) {
  std::vector<Item> items;
  if (PyTuple_Check(index.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(index)) items.push_back(classify(h));
  } else {
    items.push_back(classify(index));
  }
  return items;
}

int64_t dims_consumed(const Item& item) {
  switch (item.kind) {
    case Kind::Int:
    case Kind::Slice:
    case Kind::IntTensor:
      return 1;
    case Kind::Mask:
      return item.index.dim();
    default:
      return 0;
  }
}

struct Indexed {
  Tensor view;              // after ints, slices, None and ...
  std::vector<Item> rest;   // the tensor indices, with `dim` set
  std::vector<int64_t> at;  // the dim of `view` each tensor index applies to
};

// Applies the basic indices, leaving the tensor ones for gather_advanced.
Indexed apply_basic(const Tensor& t, const std::vector<Item>& items) {
  int64_t consumed = 0, ellipses = 0;
  for (const Item& item : items) {
    consumed += dims_consumed(item);
    ellipses += item.kind == Kind::Ellipsis;
  }
  if (ellipses > 1) throw nb::index_error("an index can only have a single ellipsis ('...').");
  if (consumed > t.dim()) {
    throw nb::index_error(("too many indices for tensor of dimension " + std::to_string(t.dim()) +
                           " (got " + std::to_string(consumed) + ")")
                              .c_str());
  }
  Indexed out{t, {}, {}};
  int64_t d = 0;
  for (const Item& item : items) {
    switch (item.kind) {
      case Kind::None:
        out.view = out.view.unsqueeze(d++);
        break;
      case Kind::Ellipsis:
        d += t.dim() - consumed;
        break;
      case Kind::Int:
        out.view =
            out.view.select(d, item.index.defined() ? item.index.item<int64_t>() : item.integer);
        break;
      case Kind::Slice: {
        Py_ssize_t start = 0, stop = 0, step = 0;
        if (PySlice_Unpack(item.obj.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
        if (step <= 0) throw nb::value_error("slice step must be positive.");
        PySlice_AdjustIndices(Py_ssize_t(out.view.size(d)), &start, &stop, step);
        out.view = out.view.slice(d, start, std::max(start, stop), step);
        ++d;
        break;
      }
      case Kind::IntTensor:
      case Kind::Mask:
        out.rest.push_back(item);
        out.at.push_back(d);
        d += dims_consumed(item);
        break;
    }
  }
  return out;
}

// The view and the index list of stride::index / index_put for the tensor
// indices: one entry per dim up to the last indexed one, undefined for the
// dims taken whole; a mask's entry covers as many dims as it has.
struct IndexList {
  Tensor view;
  std::vector<Tensor> indices;
};

IndexList index_list(const Indexed& indexed) {
  IndexList out{indexed.view, {}};
  int64_t shift = 0;  // dims added for 0-d masks so far
  int64_t dim = 0;    // the dim the next entry of the list applies to
  for (size_t i = 0; i < indexed.rest.size(); ++i) {
    Tensor index = indexed.rest[i].index;
    const int64_t at = indexed.at[i] + shift;
    if (index.dim() == 0 && index.dtype() == kBool) {
      // x[True] adds a dim of 1 and x[False] one of 0, as a mask over a new dim.
      out.view = out.view.unsqueeze(at);
      index = index.reshape({1});
      ++shift;
    }
    for (; dim < at; ++dim) out.indices.emplace_back();
    out.indices.push_back(index);
    dim += index.dtype() == kBool ? index.dim() : 1;
  }
  return out;
}

Tensor getitem(const Tensor& t, nb::handle index) {
  const Indexed indexed = apply_basic(t, parse(index));
  if (indexed.rest.empty()) return indexed.view;
  const IndexList list = index_list(indexed);
  return stride::index(list.view, list.indices);
}

// The value of x[...] = value as a tensor of x's dtype: a tensor is
// converted, a number, nested lists or a NumPy value becomes one.
Tensor values_for(const Tensor& t, nb::handle value, const std::optional<Scalar>& number) {
  if (number) return scalar_tensor(*number, t.options());
  if (nb::isinstance<Tensor>(value)) {
    const Tensor& v = nb::cast<const Tensor&>(value);
    return v.dtype() == t.dtype() ? v : v.to(t.dtype());
  }
  return tensor_from_data(value, t.dtype(), "tensor[index] = value: value");
}

void setitem(Tensor& t, nb::handle index, nb::handle value) {
  const Indexed indexed = apply_basic(t, parse(index));
  std::optional<Scalar> number;
  if (Scalar s; !nb::isinstance<Tensor>(value) && nb::try_cast(value, s)) number = s;
  if (indexed.rest.empty()) {
    Tensor view = indexed.view;
    if (number) {
      view.fill_(*number);
    } else if (nb::isinstance<Tensor>(value)) {
      view.copy_(nb::cast<const Tensor&>(value));
    } else {
      view.copy_(values_for(t, value, number));
    }
    return;
  }
  const Item& item = indexed.rest[0];
  const bool number_through_whole_mask = number && indexed.rest.size() == 1 &&
                                         item.kind == Kind::Mask && item.index.dim() > 0 &&
                                         indexed.at[0] + item.index.dim() == indexed.view.dim();
  if (number_through_whole_mask) {  // no positions to find: a masked fill
    Tensor view = indexed.view;
    view.masked_fill_(item.index, *number);
    return;
  }
  IndexList list = index_list(indexed);
  list.view.index_put_(list.indices, values_for(t, value, number));
}

// Python's sequence of index tensors (None for a dim taken whole).
std::vector<Tensor> index_tensors(nb::handle indices, const char* op) {
  const auto refuse = [op](nb::handle got) {
    return nb::type_error((std::string(op) +
                           ": indices must be a tuple of tensors (or None); got " +
                           nb::inst_name(got).c_str() + ".")
                              .c_str());
  };
  nb::object items = nb::steal(PyObject_GetIter(indices.ptr()));
  if (!items.is_valid()) {
    PyErr_Clear();
    throw refuse(indices);
  }
  std::vector<Tensor> out;
  for (nb::handle h : items) {
    if (h.is_none()) {
      out.emplace_back();
    } else if (nb::isinstance<Tensor>(h)) {
      out.push_back(nb::cast<Tensor>(h));
    } else {
      throw refuse(h);
    }
  }
  return out;
}

constexpr const char* kIndexPutDoc =
    "self with self[indices] = values (accumulate: +=, duplicates adding up), as "
    "torch.index_put: indices is a tuple of integer or boolean tensors (None takes a dim "
    "whole), broadcast together; values broadcast to the indexed shape.";

}  // namespace

void bind_indexing(nb::class_<Tensor>& cls) {
  cls.def("__getitem__", &getitem, nb::arg("index"));
  cls.def("__setitem__", &setitem, nb::arg("index"), nb::arg("value"));
  cls.def(
      "index_put_",
      [](nb::object self, nb::handle indices, const Tensor& values, bool accumulate) {
        nb::cast<Tensor&>(self).index_put_(index_tensors(indices, "index_put_()"), values,
                                           accumulate);
        return self;
      },
      nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false,
      "In place: self[indices] = values (or += when accumulate), as torch.Tensor.index_put_.");
  cls.def(
      "index_put",
      [](const Tensor& self, nb::handle indices, const Tensor& values, bool accumulate) {
        return self.index_put(index_tensors(indices, "index_put()"), values, accumulate);
      },
      nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false, kIndexPutDoc);
}

void bind_indexing_functions(nb::module_& m) {
  m.def(
      "index",
      [](const Tensor& self, nb::handle indices) {
        return index(self, index_tensors(indices, "index()"));
      },
      nb::arg("input"), nb::arg("indices"),
      "input[indices] for a tuple of integer or boolean tensors (None takes a dim whole), "
      "broadcast together, as PyTorch's advanced indexing (torch.ops.aten.index): a copy, "
      "differentiable.");
  m.def(
      "index_put",
      [](const Tensor& self, nb::handle indices, const Tensor& values, bool accumulate) {
        return self.index_put(index_tensors(indices, "index_put()"), values, accumulate);
      },
      nb::arg("input"), nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false,
      kIndexPutDoc);
}

}  // namespace stride::python
