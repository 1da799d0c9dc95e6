// Indexing as Python code writes it. Ints, slices (any positive step), None
// and ... give views of the same memory, as in PyTorch; integer tensors
// (and lists of ints) and boolean masks gather a copy (index_select, so the
// gradient flows back). Assignment writes through the view, or through the
// mask.
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
  Tensor index;  // IntTensor, Mask
};

bool is_int_like(nb::handle h) {
  return !nb::isinstance<Tensor>(h) && PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr());
}

Item classify(nb::handle h) {
  if (h.is_none()) return {Kind::None, h, {}};
  if (h.ptr() == Py_Ellipsis) return {Kind::Ellipsis, h, {}};
  if (PySlice_Check(h.ptr())) return {Kind::Slice, h, {}};
  if (is_int_like(h)) return {Kind::Int, h, {}};
  Tensor index;
  if (nb::isinstance<Tensor>(h)) {
    index = nb::cast<Tensor>(h);
  } else if (PyList_Check(h.ptr())) {
    index = tensor_from_data(h, std::nullopt);
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

// The flat positions of the true entries of a mask.
Tensor true_positions(const Tensor& mask) {
  const std::vector<uint8_t> bits = mask.contiguous().to_vector<uint8_t>();
  std::vector<int64_t> positions;
  for (size_t i = 0; i < bits.size(); ++i) {
    if (bits[i]) positions.push_back(int64_t(i));
  }
  return tensor(positions, {int64_t(positions.size())});
}

// x[..., index, ...] for one integer tensor at dim d: the index's shape
// replaces that dim.
Tensor gather_dim(const Tensor& x, int64_t d, const Tensor& index) {
  const int64_t size = x.size(d);
  const Tensor flat = index.reshape({index.numel()});
  // Python's negative indices count from the end; index_select's kernel
  // refuses what is still out of range with an IndexError.
  const Tensor wrapped = where(flat.lt(Scalar(int64_t(0))), flat + Scalar(size), flat);
  const Tensor picked = x.index_select(d, wrapped);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + d);
  shape.insert(shape.end(), index.sizes().begin(), index.sizes().end());
  shape.insert(shape.end(), x.sizes().begin() + d + 1, x.sizes().end());
  return picked.reshape(shape);
}

// x with dims [d, d + mask.dim()) selected by `mask`: they become one dim of
// the true entries.
Tensor gather_mask(const Tensor& x, int64_t d, const Tensor& mask) {
  for (int64_t k = 0; k < mask.dim(); ++k) {
    if (mask.size(k) != x.size(d + k)) {
      throw nb::index_error(("the shape of the mask " + shape_str(mask.sizes()) + " at index " +
                             std::to_string(k) +
                             " does not match the shape of the indexed tensor " +
                             shape_str(x.sizes()) + " at dim " + std::to_string(d + k) + ".")
                                .c_str());
    }
  }
  Tensor flat = x;
  if (mask.dim() == 0) {
    flat = x.unsqueeze(d);  // x[True] adds a dim of 1, x[False] one of 0
  } else if (mask.dim() > 1) {
    flat = x.flatten(d, d + mask.dim() - 1);
  }
  return flat.index_select(d, true_positions(mask.reshape({mask.numel()})));
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
        out.view = out.view.select(d, nb::cast<int64_t>(item.obj));
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

Tensor gather_advanced(const Indexed& indexed) {
  if (indexed.rest.empty()) return indexed.view;
  if (indexed.rest.size() == 1) {
    const Item& item = indexed.rest[0];
    return item.kind == Kind::Mask ? gather_mask(indexed.view, indexed.at[0], item.index)
                                   : gather_dim(indexed.view, indexed.at[0], item.index);
  }
  // Several tensor indices: PyTorch broadcasts them together and indexes
  // element by element. One at a time is not the same, so say so.
  throw nb::index_error(
      "stride indexes with one integer or boolean tensor at a time; combine indices with "
      "x.flatten() and linear positions, or index in two steps.");
}

Tensor getitem(const Tensor& t, nb::handle index) {
  return gather_advanced(apply_basic(t, parse(index)));
}

void setitem(Tensor& t, nb::handle index, nb::handle value) {
  const Indexed indexed = apply_basic(t, parse(index));
  const bool is_tensor = nb::isinstance<Tensor>(value);
  if (indexed.rest.empty()) {
    Tensor view = indexed.view;
    if (is_tensor) {
      view.copy_(nb::cast<const Tensor&>(value));
    } else {
      view.fill_(nb::cast<Scalar>(value));
    }
    return;
  }
  const Item& item = indexed.rest[0];
  const bool whole_mask = indexed.rest.size() == 1 && item.kind == Kind::Mask &&
                          indexed.at[0] + item.index.dim() == indexed.view.dim();
  if (whole_mask) {
    Tensor view = indexed.view;
    if (!is_tensor) {
      view.masked_fill_(item.index, nb::cast<Scalar>(value));
      return;
    }
    const Tensor& v = nb::cast<const Tensor&>(value);
    if (v.numel() == 1) {
      view.copy_(where(item.index, v.reshape({}).to(view.dtype()), view));
      return;
    }
  }
  throw nb::index_error(
      "assignment through integer tensors, or of a tensor of values through a mask, is not "
      "supported yet; assign a number or a one-element tensor through a mask "
      "(x[mask] = v), or a tensor through ints and slices (x[:, 1:] = y).");
}

}  // namespace

void bind_indexing(nb::class_<Tensor>& cls) {
  cls.def("__getitem__", &getitem, nb::arg("index"));
  cls.def("__setitem__", &setitem, nb::arg("index"), nb::arg("value"));
}

}  // namespace stride::python
