// The recurrent modules (nn::RNN, LSTM, GRU and their cells): PyTorch's
// parameter names, order, shapes and initialisation; the layouts of their
// inputs and outputs; the sequence ops agreeing with stepping their cells;
// and the errors. Values against PyTorch are the goldens' (rnn_tanh_f32,
// lstm_f32, ...) and python/tests/test_nn_recurrent_attention.py's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <stride/nn.h>
#include <stride/stride.h>

#include "support/error_message.h"
#include "support/layouts.h"

namespace stride {
namespace {

namespace F = nn::functional;
using testing::close;
using testing::message_of;

TEST(RnnModules, RegisterPyTorchsParameterNamesInPyTorchsOrder) {
  nn::LSTM lstm(3, 4, 2, true, false, 0.0, true);
  const std::vector<std::string> expected = {
      "weight_ih_l0",         "weight_hh_l0",         "bias_ih_l0",         "bias_hh_l0",
      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse",
      "weight_ih_l1",         "weight_hh_l1",         "bias_ih_l1",         "bias_hh_l1",
      "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"};
  EXPECT_EQ(lstm.named_parameters().keys(), expected);
  const auto params = lstm.named_parameters();
  EXPECT_EQ(params["weight_ih_l0"].sizes(), IntArrayRef({16, 3}));
  EXPECT_EQ(params["weight_hh_l0_reverse"].sizes(), IntArrayRef({16, 4}));
  EXPECT_EQ(params["weight_ih_l1"].sizes(), IntArrayRef({16, 8}));  // both directions' outputs
  EXPECT_EQ(params["bias_hh_l1_reverse"].sizes(), IntArrayRef({16}));

  nn::GRU gru(3, 5, 1, /*bias=*/false);
  EXPECT_EQ(gru.named_parameters().keys(),
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"}));
  EXPECT_EQ(gru.flat_weights()[0].sizes(), IntArrayRef({15, 3}));
}

TEST(RnnModules, DrawEveryParameterWithinOneOverSqrtHidden) {
  manual_seed(3);
  nn::RNN rnn(6, 16, 2);
  nn::LSTMCell cell(6, 16);
  const double bound = 1.0 / std::sqrt(16.0);
  for (const Tensor& p : rnn.parameters()) EXPECT_LE(p.abs().max().item<double>(), bound);
  for (const Tensor& p : cell.parameters()) EXPECT_LE(p.abs().max().item<double>(), bound);
  // Not all zeros: the draw spans the interval.
  EXPECT_GT(rnn.flat_weights()[0].abs().max().item<double>(), bound / 2);
}

TEST(RnnModules, LayOutOutputsAsTheInputAndStatesAsLayersTimesDirections) {
  nn::LSTM lstm(3, 4, 2, true, /*batch_first=*/true, 0.0, /*bidirectional=*/true);
  const auto [out, state] = lstm.forward(randn({5, 7, 3}));
  EXPECT_EQ(out.sizes(), IntArrayRef({5, 7, 8}));
  EXPECT_EQ(state.first.sizes(), IntArrayRef({4, 5, 4}));
  EXPECT_EQ(state.second.sizes(), IntArrayRef({4, 5, 4}));

  nn::GRU gru(3, 4);
  const auto [unbatched, h] = gru.forward(randn({7, 3}));
  EXPECT_EQ(unbatched.sizes(), IntArrayRef({7, 4}));
  EXPECT_EQ(h.sizes(), IntArrayRef({1, 4}));
}

// The sequence op is its cell stepped over time, from the given state.
TEST(RnnModules, LstmIsItsCellSteppedOverTime) {
  nn::LSTM lstm(3, 4);
  const Tensor x = randn({5, 2, 3});
  const Tensor h0 = randn({1, 2, 4});
  const Tensor c0 = randn({1, 2, 4});
  const auto [out, state] = lstm.forward(x, {h0, c0});
  const std::vector<Tensor>& w = lstm.flat_weights();
  std::pair<Tensor, Tensor> hc{h0[0], c0[0]};
  for (int64_t t = 0; t < 5; ++t) {
    hc = F::lstm_cell(x[t], hc, w[0], w[1], w[2], w[3]);
    EXPECT_TRUE(close(out[t], hc.first, 1e-5, 1e-6)) << "step " << t;
  }
  EXPECT_TRUE(close(state.first[0], hc.first, 1e-5, 1e-6));
  EXPECT_TRUE(close(state.second[0], hc.second, 1e-5, 1e-6));
}

// The reverse direction reads the sequence from its end: its output at the
// first step is its final state.
TEST(RnnModules, GruReverseDirectionEndsAtTheFirstStep) {
  nn::GRU gru(3, 4, 1, true, false, 0.0, /*bidirectional=*/true);
  const auto [out, h] = gru.forward(randn({6, 2, 3}));
  EXPECT_TRUE(close(out[0].narrow(1, 4, 4), h[1]));
  EXPECT_TRUE(close(out[5].narrow(1, 0, 4), h[0]));
}

TEST(RnnModules, UnbatchedInputMatchesABatchOfOne) {
  nn::RNN rnn(3, 4, 2, "relu");
  const Tensor x = randn({6, 3});
  const auto [out, h] = rnn.forward(x);
  const auto [batched, hb] = rnn.forward(x.unsqueeze(1));
  EXPECT_TRUE(close(out, batched.squeeze(1)));
  EXPECT_TRUE(close(h, hb.squeeze(1)));
  EXPECT_GE(out.min().item<double>(), 0.0);  // relu
}

TEST(RnnModules, DropoutBetweenLayersOnlyWhenTraining) {
  nn::LSTM lstm(3, 4, 2, true, false, /*dropout=*/0.5);
  const Tensor x = randn({4, 2, 3});
  lstm.eval();
  const Tensor a = lstm.forward(x).first;
  EXPECT_TRUE(close(a, lstm.forward(x).first));
  lstm.train();
  EXPECT_FALSE(close(a, lstm.forward(x).first));
}

TEST(RnnModules, GradientsReachEveryParameterThroughTime) {
  nn::GRU gru(3, 4, 2, true, true, 0.0, true);
  const Tensor x = randn({2, 5, 3}).requires_grad_();
  const auto [out, h] = gru.forward(x);
  (out.sum() + h.square().sum()).backward();
  EXPECT_TRUE(x.grad().defined());
  const auto params = gru.named_parameters();
  for (const auto& [name, p] : params.items()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0.0) << name;
  }
}

TEST(RnnCells, UnbatchedInputsAndADefaultZeroState) {
  nn::GRUCell gru(3, 4);
  const Tensor x = randn({2, 3});
  EXPECT_TRUE(close(gru.forward(x), gru.forward(x, zeros({2, 4}))));
  EXPECT_EQ(gru.forward(randn({3})).sizes(), IntArrayRef({4}));

  nn::LSTMCell lstm(3, 4, /*bias=*/false);
  EXPECT_FALSE(lstm.bias_ih.defined());
  const auto [h, c] = lstm.forward(randn({3}));
  EXPECT_EQ(h.sizes(), IntArrayRef({4}));
  EXPECT_EQ(c.sizes(), IntArrayRef({4}));

  nn::RNNCell rnn(3, 4, true, "relu");
  EXPECT_EQ(rnn.extra_repr(), "3, 4, nonlinearity=relu");
  EXPECT_GE(rnn.call(x).min().item<double>(), 0.0);
}

TEST(RnnErrors, NameTheOpTheArgumentAndTheFix) {
  nn::LSTM lstm(3, 4);
  EXPECT_NE(message_of<ShapeError>([&] {
              lstm.forward(randn({5, 2, 6}));
            }).find("input_size 3"),
            std::string::npos);
  EXPECT_NE(message_of<ShapeError>([&] {
              lstm.forward(randn({5, 2, 3}), {zeros({1, 3, 4}), {}});
            }).find("[lstm] hx must be (1, 2, 4)"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] {
              F::gru(randn({5, 2, 3}), {}, lstm.flat_weights(), {.has_biases = false});
            }).find("[gru] params must hold 2"),
            std::string::npos);
  const Tensor w = randn({4, 3});
  EXPECT_NE(message_of<ShapeError>([&] {
              F::gru_cell(randn({2, 3}), zeros({2, 4}), w, randn({12, 4}));
            }).find("[gru_cell] w_ih must be (12, 3)"),
            std::string::npos);
  EXPECT_NE(message_of<DTypeError>([&] {
              F::rnn_tanh_cell(randn({2, 3}), zeros({2, 4}), w.to(kFloat64), randn({4, 4}));
            }).find("[rnn_tanh_cell] w_ih is float64"),
            std::string::npos);
  EXPECT_THROW(nn::RNN(3, 4, 1, "sigmoid"), ValueError);
  EXPECT_THROW(nn::GRU(3, 0), ValueError);
}

}  // namespace
}  // namespace stride
