// index and index_put (advanced indexing): against an element-by-element
// reference on every layout of self, values and indices, PyTorch's rule for
// where the broadcast index dims go, gradcheck, and the errors.
#include <gtest/gtest.h>

#include <map>

#include <stride/stride.h>

#include "support/error_message.h"
#include "support/layouts.h"

namespace stride::testing {
namespace {

using Positions = std::map<int64_t, std::vector<int64_t>>;  // dim -> 1-d index values

// The result's shape and, per result element (row-major), the flat
// row-major position in self it comes from: PyTorch's rule with 1-d
// indices of one length n on the dims of `pos`.
std::pair<DimVector, std::vector<int64_t>> reference_positions(IntArrayRef shape,
                                                               const Positions& pos) {
  std::vector<int64_t> dims;
  for (const auto& [d, _] : pos) dims.push_back(d);
  const int64_t n = int64_t(pos.begin()->second.size());
  const bool adjacent = dims.back() - dims.front() + 1 == int64_t(dims.size());
  std::vector<int64_t> rest;  // the whole dims, in order
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (!pos.count(d)) rest.push_back(d);
  }
  // Result dims: -1 stands for the index dim.
  std::vector<int64_t> layout;
  if (adjacent) {
    for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
      if (d == dims.front()) layout.push_back(-1);
      if (!pos.count(d)) layout.push_back(d);
    }
  } else {
    layout.push_back(-1);
    layout.insert(layout.end(), rest.begin(), rest.end());
  }
  DimVector out_shape;
  for (int64_t d : layout) out_shape.push_back(d < 0 ? n : shape[size_t(d)]);
  std::vector<int64_t> flat_of;
  std::vector<int64_t> coord(layout.size(), 0);
  const int64_t total = numel_of(out_shape);
  for (int64_t e = 0; e < total; ++e) {
    int64_t rem = e;
    for (size_t k = layout.size(); k-- > 0;) {
      coord[k] = rem % out_shape[k];
      rem /= out_shape[k];
    }
    std::vector<int64_t> src(shape.size(), 0);
    for (size_t k = 0; k < layout.size(); ++k) {
      if (layout[k] >= 0) {
        src[size_t(layout[k])] = coord[k];
        continue;
      }
      for (const auto& [d, values] : pos) {
        const int64_t v = values[size_t(coord[k])];
        src[size_t(d)] = v < 0 ? v + shape[size_t(d)] : v;
      }
    }
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + src[d];
    flat_of.push_back(flat);
  }
  return {out_shape, flat_of};
}

// An int64 index tensor of `values`, non-contiguous (every other element of
// a larger buffer) when `strided`.
Tensor index_tensor(const std::vector<int64_t>& values, bool strided) {
  if (!strided) return tensor<int64_t>(values, {int64_t(values.size())});
  std::vector<int64_t> spread;
  for (int64_t v : values) spread.insert(spread.end(), {v, 99});
  return tensor<int64_t>(spread, {int64_t(spread.size())}).slice(0, 0, int64_t(spread.size()), 2);
}

std::vector<Tensor> indices_of(const Positions& pos, int64_t ndim, bool strided) {
  std::vector<Tensor> out(static_cast<size_t>(ndim));
  for (const auto& [d, values] : pos) out[size_t(d)] = index_tensor(values, strided);
  return out;
}

const std::vector<Positions> kPatterns = {
    {{0, {2, 0, -1}}},
    {{1, {3, -4, 1}}},
    {{2, {4, 0, 4}}},
    {{0, {1, 2, 0}}, {1, {0, 3, -1}}},
    {{1, {0, 2, 1}}, {2, {4, 0, -5}}},
    {{0, {2, 1, 0}}, {2, {1, 3, 0}}},  // separated by a whole dim: B goes first
    {{0, {0, 1, 2}}, {1, {3, 2, 1}}, {2, {0, 4, 2}}},
};

TEST(AdvancedIndexing, IndexMatchesTheReferenceOnEveryLayout) {
  Generator gen(3);
  const DimVector shape{3, 4, 5};
  for (Layout layout : kAllLayouts) {
    Tensor x = make_input(shape, kFloat64, layout, Domain::Any, gen);
    const std::vector<double> xs = x.contiguous().to_vector<double>();
    for (const Positions& pos : kPatterns) {
      for (bool strided : {false, true}) {
        auto [want_shape, flat] = reference_positions(shape, pos);
        Tensor got = index(x, indices_of(pos, 3, strided));
        ASSERT_EQ(got.sizes(), IntArrayRef(want_shape)) << layout_name(layout);
        std::vector<double> want;
        for (int64_t f : flat) want.push_back(xs[size_t(f)]);
        EXPECT_EQ(got.contiguous().to_vector<double>(), want) << layout_name(layout);
      }
    }
  }
}

TEST(AdvancedIndexing, IndexPutMatchesTheReferenceOnEveryLayout) {
  Generator gen(4);
  const DimVector shape{3, 4, 5};
  for (Layout self_layout : kOutputLayouts) {
    for (Layout values_layout : kAllLayouts) {
      for (const Positions& pos : kPatterns) {
        for (bool accumulate : {false, true}) {
          Tensor x = make_input(shape, kFloat64, self_layout, Domain::Any, gen);
          std::vector<double> want = x.contiguous().to_vector<double>();
          auto [result_shape, flat] = reference_positions(shape, pos);
          Tensor v = make_input(result_shape, kFloat64, values_layout, Domain::Any, gen);
          const std::vector<double> vs = v.contiguous().to_vector<double>();
          for (size_t e = 0; e < flat.size(); ++e) {
            double& slot = want[size_t(flat[e])];
            slot = accumulate ? slot + vs[e] : vs[e];
          }
          x.index_put_(indices_of(pos, 3, values_layout == Layout::Step2), v, accumulate);
          EXPECT_TRUE(close(x.contiguous(), tensor<double>(want, shape)))
              << layout_name(self_layout) << " self, " << layout_name(values_layout)
              << " values, accumulate " << accumulate;
        }
      }
    }
  }
}

TEST(AdvancedIndexing, IndicesBroadcastAndMasksSelectTrueEntries) {
  Tensor x = arange(60, kFloat64).view({3, 4, 5});
  Tensor rows = tensor<int64_t>({0, 2}, {2, 1});
  Tensor cols = tensor<int64_t>({1, 2, 3}, {3});
  Tensor got = x.index({rows, cols});
  ASSERT_EQ(got.sizes(), IntArrayRef({2, 3, 5}));
  EXPECT_EQ(got.select(0, 1).select(0, 2).select(0, 4).item<double>(), 2 * 20 + 3 * 5 + 4);
  // A 2-d mask consumes two dims: their true entries become one dim.
  Tensor mask = x.select(2, 0).gt(30.0);
  Tensor masked = x.index({mask});
  ASSERT_EQ(masked.sizes(), IntArrayRef({5, 5}));
  EXPECT_EQ(masked.select(1, 0).contiguous().to_vector<double>(),
            (std::vector<double>{35, 40, 45, 50, 55}));
  // Assignment through a mask, of values of the selected shape.
  Tensor y = zeros({2, 3}, kFloat64);
  y.index_put_({tensor<bool>({true, false, true, false, true, true}, {2, 3})},
               tensor<double>({1, 2, 3, 4}));
  EXPECT_EQ(y.contiguous().to_vector<double>(), (std::vector<double>{1, 0, 2, 0, 3, 4}));
}

TEST(AdvancedIndexing, AccumulateAddsDuplicatesAndValuesBroadcast) {
  Tensor x = zeros({4}, kFloat64);
  x.index_put_({tensor<int64_t>({1, 1, -1, 1})}, tensor<double>({1.0}), /*accumulate=*/true);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 3, 0, 1}));
  Tensor m = zeros({3, 2}, kFloat64);
  m.index_put_({tensor<int64_t>({2, 0})}, tensor<double>({5, 6}, {1, 1, 2}));  // leading 1s
  EXPECT_EQ(m.contiguous().to_vector<double>(), (std::vector<double>{5, 6, 0, 0, 5, 6}));
}

TEST(AdvancedIndexing, ValuesThatAliasSelfAreReadBeforeTheyAreWritten) {
  Tensor x = tensor<double>({1, 2, 3, 4});
  x.index_put_({tensor<int64_t>({1, 2, 3})}, x.slice(0, 0, 3));
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{1, 1, 2, 3}));
}

TEST(AdvancedIndexing, Gradcheck) {
  Generator gen(5);
  const Tensor i = tensor<int64_t>({2, 0, 2});  // a duplicate: gradients add up
  const Tensor j = tensor<int64_t>({1, -1, 0});
  const std::vector<std::pair<std::string, std::function<Tensor(const std::vector<Tensor>&)>>> fns =
      {
          {"index",
           [&](const std::vector<Tensor>& x) {
             return x[0].index({i, Tensor(), j});
           }},
          {"index_adjacent",
           [&](const std::vector<Tensor>& x) {
             return x[0].index({Tensor(), i, j}).square();
           }},
          {"index_put",
           [&](const std::vector<Tensor>& x) {
             return x[0].index_put({Tensor(), j}, x[1].select(1, 0).unsqueeze(1)) * x[0];
           }},
          {"index_put_accumulate",
           [&](const std::vector<Tensor>& x) {
             return x[0].index_put({i}, x[1].select(0, 0).unsqueeze(0), true).square();
           }},
          {"index_put_broadcast_values",
           [&](const std::vector<Tensor>& x) {
             return x[0].index_put({Tensor(), Tensor(), j},
                                   x[1].select(0, 0).select(0, 0).narrow(0, 0, 3));
           }},
      };
  for (const auto& [name, f] : fns) {
    std::vector<Tensor> in = {
        make_input({3, 4, 5}, kFloat64, Layout::Transposed, Domain::Any, gen)
            .detach()
            .requires_grad_(),
        make_input({3, 4, 5}, kFloat64, Layout::Step2, Domain::Any, gen).detach().requires_grad_()};
    try {
      EXPECT_TRUE(autograd::gradcheck(f, in)) << name;
      auto first_grad = [&f](const std::vector<Tensor>& x) {
        auto g = autograd::grad({f(x).square().sum()}, x, {}, std::nullopt, true, true);
        return g[0] + (g[1].defined() ? g[1] : zeros_like(x[1]));
      };
      EXPECT_TRUE(autograd::gradcheck(first_grad, in)) << name << " (second order)";
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

TEST(AdvancedIndexing, InPlaceAssignmentIsRecorded) {
  Tensor v = tensor<double>({1.0, 2.0}).requires_grad_();
  Tensor base = tensor<double>({0, 0, 0}).requires_grad_();
  Tensor y = base * 2.0;
  y.index_put_({tensor<int64_t>({0, 2})}, v * 3.0);
  EXPECT_EQ(y.grad_fn()->name(), "IndexPutBackward");
  y.sum().backward();
  EXPECT_TRUE(close(v.grad(), tensor<double>({3.0, 3.0})));
  EXPECT_TRUE(close(base.grad(), tensor<double>({0.0, 2.0, 0.0})));
}

using testing::message_of;

TEST(AdvancedIndexing, ErrorsNameTheIndexTheDimAndTheSize) {
  Tensor x = zeros({3, 4});
  EXPECT_THROW(x.index({Tensor(), tensor<int64_t>({4})}), IndexError);
  EXPECT_NE(message_of([&] {
              x.index({Tensor(), tensor<int64_t>({-5})});
            }).find("index -5 is out of bounds for dimension 1 with size 4"),
            std::string::npos);
  EXPECT_THROW(x.index_put_({tensor<int64_t>({3})}, zeros({4})), IndexError);
  EXPECT_THROW(x.index({tensor<double>({0.0})}), IndexError);
  EXPECT_THROW(x.index({tensor<int64_t>({0, 1}), tensor<int64_t>({0, 1, 2})}), IndexError);
  EXPECT_THROW(x.index({tensor<int64_t>({0}), tensor<int64_t>({0}), tensor<int64_t>({0})}),
               IndexError);
  EXPECT_THROW(x.index({tensor<bool>({true, false})}), IndexError);  // mask of the wrong size
  EXPECT_THROW(x.index_put_({tensor<int64_t>({0, 1})}, zeros({3})), ShapeError);
  EXPECT_THROW(x.index_put_({tensor<int64_t>({0})}, zeros({4}, kFloat64)), DTypeError);
  Tensor leaf = zeros({3}).requires_grad_();
  EXPECT_THROW(leaf.index_put_({tensor<int64_t>({0})}, ones({1})), Error);
}

TEST(AdvancedIndexing, RunsOnMetaWithTheCpusShapes) {
  Tensor x = empty({3, 4, 5}, TensorOptions(kFloat32).device(kMeta));
  Tensor i = empty({2, 1}, TensorOptions(kInt64).device(kMeta));
  Tensor j = empty({6}, TensorOptions(kInt64).device(kMeta));
  EXPECT_EQ(x.index({i, Tensor(), j}).sizes(), IntArrayRef({2, 6, 4}));
  EXPECT_EQ(x.index({Tensor(), i, j}).sizes(), IntArrayRef({3, 2, 6}));
  EXPECT_NO_THROW(x.index_put_({i, Tensor(), j}, empty({4}, TensorOptions().device(kMeta))));
}

}  // namespace
}  // namespace stride::testing
