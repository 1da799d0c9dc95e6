// collate: stacking tensors, numbers, pairs, tuples, vectors, maps, nested
// structures and a user struct through the Collate customization point.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "stride/data.h"
#include "stride/ops.h"

// A user's example type and its batch, collated member by member.
struct LabeledImage {
  stride::Tensor image;
  int64_t label;
  std::pair<stride::Tensor, double> extra;
};
struct LabeledImageBatch {
  stride::Tensor images;
  stride::Tensor labels;
  std::pair<stride::Tensor, stride::Tensor> extra;
};
template <>
struct stride::data::Collate<LabeledImage> {
  using Output = LabeledImageBatch;
  static Output apply(std::vector<LabeledImage>&& xs) {
    return {collate_member(xs, &LabeledImage::image), collate_member(xs, &LabeledImage::label),
            collate_member(xs, &LabeledImage::extra)};
  }
};

namespace stride::data {
namespace {

TEST(Collate, StacksTensorsAlongANewFirstDim) {
  Tensor a = arange(6, kFloat32).view({2, 3});
  Tensor b = a.add(10);
  Tensor out = collate(std::vector<Tensor>{a, b});
  EXPECT_EQ(out.sizes(), IntArrayRef({2, 2, 3}));
  EXPECT_TRUE(equal(out[0], a));
  EXPECT_TRUE(equal(out[1], b));
  // Strided inputs are fine: stack reads any layout.
  Tensor t = a.t();
  EXPECT_TRUE(equal(collate(std::vector<Tensor>{t, t})[1], t));
}

TEST(Collate, MismatchedShapesNameTheExample) {
  try {
    collate(std::vector<Tensor>{zeros({2}), zeros({2}), zeros({3})});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("example 2 has shape (3) but example 0 has (2)"), std::string::npos) << msg;
  }
  EXPECT_THROW(collate(std::vector<Tensor>{zeros({2}), zeros({2}, kInt64)}), DTypeError);
  EXPECT_THROW(collate(std::vector<Tensor>{}), ValueError);
}

TEST(Collate, NumbersBecomeOneDimTensors) {
  Tensor i = collate(std::vector<int>{1, 2, 3});
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(collate(std::vector<float>{1.5f}).dtype(), kFloat32);
  Tensor d = collate(std::vector<double>{0.25, 0.5});
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{0.25, 0.5}));
  Tensor b = collate(std::vector<bool>{true, false});
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(Collate, PairsTuplesVectorsAndMapsRecurse) {
  using Ex = std::tuple<Tensor, std::pair<int64_t, std::vector<Tensor>>>;
  std::vector<Ex> xs;
  for (int64_t i = 0; i < 3; ++i) {
    xs.emplace_back(
        full({2}, double(i)),
        std::make_pair(i * 10, std::vector<Tensor>{full({1}, double(i)), ones({2, 2})}));
  }
  auto [t, p] = collate(std::move(xs));
  EXPECT_EQ(t.sizes(), IntArrayRef({3, 2}));
  EXPECT_EQ(p.first.to_vector<int64_t>(), (std::vector<int64_t>{0, 10, 20}));
  ASSERT_EQ(p.second.size(), 2u);
  EXPECT_EQ(p.second[0].sizes(), IntArrayRef({3, 1}));
  EXPECT_EQ(p.second[1].sizes(), IntArrayRef({3, 2, 2}));

  std::vector<std::map<std::string, Tensor>> dicts = {{{"x", zeros({2})}, {"y", ones({1})}},
                                                      {{"x", ones({2})}, {"y", zeros({1})}}};
  auto d = collate(std::move(dicts));
  EXPECT_EQ(d.at("x").sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(d.at("y").sizes(), IntArrayRef({2, 1}));

  std::vector<std::vector<Tensor>> ragged = {{zeros({1})}, {zeros({1}), zeros({1})}};
  EXPECT_THROW(collate(std::move(ragged)), ShapeError);
  std::vector<std::map<std::string, Tensor>> keys = {{{"x", zeros({1})}}, {{"z", zeros({1})}}};
  EXPECT_THROW(collate(std::move(keys)), ValueError);
}

TEST(Collate, UserStructThroughTheCustomizationPoint) {
  std::vector<LabeledImage> xs;
  for (int64_t i = 0; i < 4; ++i)
    xs.push_back({full({1, 2, 2}, double(i)), i % 2, {zeros({3}), 0.5}});
  LabeledImageBatch b = collate(std::move(xs));
  EXPECT_EQ(b.images.sizes(), IntArrayRef({4, 1, 2, 2}));
  EXPECT_EQ(b.labels.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(b.extra.first.sizes(), IntArrayRef({4, 3}));
  EXPECT_EQ(b.extra.second.dtype(), kFloat64);

  // And through a DataLoader, with workers.
  auto ds = make_dataset(6, [](int64_t i, Generator& gen) {
    return LabeledImage{rand({1, 2, 2}, kFloat32, &gen), i, {zeros({3}), double(i)}};
  });
  DataLoader loader(ds, {.batch_size = 3, .num_workers = 2});
  std::vector<int64_t> labels;
  for (LabeledImageBatch& batch : loader) {
    EXPECT_EQ(batch.images.sizes(), IntArrayRef({3, 1, 2, 2}));
    for (int64_t l : batch.labels.to_vector<int64_t>()) labels.push_back(l);
  }
  EXPECT_EQ(labels, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

static_assert(collatable<Tensor>);
static_assert(collatable<std::pair<Tensor, int>>);
static_assert(!collatable<std::string>);

}  // namespace
}  // namespace stride::data
