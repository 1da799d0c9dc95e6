// The recurrent modules (torch.nn.RNN, LSTM, GRU and their cells): the
// parameters with PyTorch's names, order and initialisation, over the ops of
// src/nn/rnn.cpp.
#include <cmath>
#include <string>

#include "core/check.h"
#include "stride/nn/init.h"
#include "stride/nn/rnn.h"
#include "stride/ops.h"

namespace stride::nn {

namespace F = functional;

namespace {

using ::stride::detail::str_cat;

void check_sizes(const char* layer, int64_t in, int64_t hidden) {
  STRIDE_CHECK(in >= 0, ValueError, "[", layer, "] input_size must be >= 0; got ", in, ".");
  STRIDE_CHECK(hidden > 0, ValueError, "[", layer, "] hidden_size must be positive; got ", hidden,
               ".");
}

void check_nonlinearity(const char* layer, const std::string& nonlinearity) {
  STRIDE_CHECK(nonlinearity == "tanh" || nonlinearity == "relu", ValueError, "[", layer,
               "] nonlinearity must be 'tanh' or 'relu'; got '", nonlinearity, "'.");
}

void check_input_size(const std::string& layer, const Tensor& input, int64_t input_size) {
  STRIDE_CHECK(input.dim() >= 1 && input.size(-1) == input_size, ShapeError, "[", layer,
               "] expected input (..., ", input_size, ") for input_size ", input_size,
               "; got shape ", shape_str(input.sizes()), ".");
}

// PyTorch's reset_parameters of every recurrent module: U(-1/sqrt(H), 1/sqrt(H)).
void uniform_by_hidden(const std::vector<Tensor>& params, int64_t hidden, Generator* gen) {
  const double bound = 1.0 / std::sqrt(double(hidden));
  for (const Tensor& p : params) init::uniform_(p, -bound, bound, gen);
}

}  // namespace

// ---- RNN, LSTM, GRU ----

RNNBase::RNNBase(const char* layer,
                 int64_t gates,
                 int64_t in_size,
                 int64_t hidden,
                 int64_t layers,
                 bool with_bias,
                 bool first_batch,
                 double dropout_p,
                 bool both_directions,
                 Generator* gen)
    : input_size(in_size),
      hidden_size(hidden),
      num_layers(layers),
      bias(with_bias),
      batch_first(first_batch),
      dropout(dropout_p),
      bidirectional(both_directions),
      generator(gen) {
  check_sizes(layer, in_size, hidden);
  STRIDE_CHECK(layers > 0, ValueError, "[", layer, "] num_layers must be positive; got ", layers,
               ".");
  STRIDE_CHECK(dropout_p >= 0 && dropout_p <= 1, ValueError, "[", layer,
               "] dropout must be in [0, 1]; got ", dropout_p, ".");
  const int64_t rows = gates * hidden;
  const int64_t directions = both_directions ? 2 : 1;
  // PyTorch's order (layer, direction, ih/hh, weight/bias), which is also
  // the order the sequence ops take the weights in.
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t layer_input = l == 0 ? in_size : hidden * directions;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const std::string suffix = str_cat("_l", l, direction ? "_reverse" : "");
      flat_weights_.push_back(register_parameter("weight_ih" + suffix, empty({rows, layer_input})));
      flat_weights_.push_back(register_parameter("weight_hh" + suffix, empty({rows, hidden})));
      if (!with_bias) continue;
      flat_weights_.push_back(register_parameter("bias_ih" + suffix, empty({rows})));
      flat_weights_.push_back(register_parameter("bias_hh" + suffix, empty({rows})));
    }
  }
  reset_parameters(gen);
}

void RNNBase::reset_parameters(Generator* gen) {
  uniform_by_hidden(flat_weights_, hidden_size, gen);
}

F::RecurrentOptions RNNBase::options() const {
  return {bias, num_layers, dropout, is_training(), bidirectional, batch_first, generator};
}

std::string RNNBase::extra_repr() const {
  std::string s = str_cat(input_size, ", ", hidden_size);
  if (num_layers != 1) s += str_cat(", num_layers=", num_layers);
  if (!bias) s += ", bias=False";
  if (batch_first) s += ", batch_first=True";
  if (dropout != 0) s += str_cat(", dropout=", dropout);
  if (bidirectional) s += ", bidirectional=True";
  return s;
}

RNN::RNN(int64_t in,
         int64_t hidden,
         int64_t layers,
         const std::string& activation,
         bool with_bias,
         bool first_batch,
         double dropout_p,
         bool both_directions,
         Generator* gen)
    : RNNBase(
          "RNN", 1, in, hidden, layers, with_bias, first_batch, dropout_p, both_directions, gen),
      nonlinearity(activation) {
  check_nonlinearity("RNN", activation);
}

std::pair<Tensor, Tensor> RNN::forward(const Tensor& input, const Tensor& hx) {
  check_input_size(name(), input, input_size);
  if (nonlinearity == "tanh") return F::rnn_tanh(input, hx, flat_weights(), options());
  return F::rnn_relu(input, hx, flat_weights(), options());
}

LSTM::LSTM(int64_t in,
           int64_t hidden,
           int64_t layers,
           bool with_bias,
           bool first_batch,
           double dropout_p,
           bool both_directions,
           Generator* gen)
    : RNNBase(
          "LSTM", 4, in, hidden, layers, with_bias, first_batch, dropout_p, both_directions, gen) {}

std::pair<Tensor, std::pair<Tensor, Tensor>> LSTM::forward(const Tensor& input,
                                                           const std::pair<Tensor, Tensor>& hx) {
  check_input_size(name(), input, input_size);
  auto [output, h, c] = F::lstm(input, hx, flat_weights(), options());
  return {output, {h, c}};
}

GRU::GRU(int64_t in,
         int64_t hidden,
         int64_t layers,
         bool with_bias,
         bool first_batch,
         double dropout_p,
         bool both_directions,
         Generator* gen)
    : RNNBase(
          "GRU", 3, in, hidden, layers, with_bias, first_batch, dropout_p, both_directions, gen) {}

std::pair<Tensor, Tensor> GRU::forward(const Tensor& input, const Tensor& hx) {
  check_input_size(name(), input, input_size);
  return F::gru(input, hx, flat_weights(), options());
}

// ---- RNNCell, LSTMCell, GRUCell ----

RNNCellBase::RNNCellBase(const char* cell,
                         int64_t gates,
                         int64_t in_size,
                         int64_t hidden,
                         bool with_bias,
                         Generator* gen)
    : input_size(in_size), hidden_size(hidden) {
  check_sizes(cell, in_size, hidden);
  weight_ih = register_parameter("weight_ih", empty({gates * hidden, in_size}));
  weight_hh = register_parameter("weight_hh", empty({gates * hidden, hidden}));
  if (with_bias) {
    bias_ih = register_parameter("bias_ih", empty({gates * hidden}));
    bias_hh = register_parameter("bias_hh", empty({gates * hidden}));
  }
  reset_parameters(gen);
}

void RNNCellBase::reset_parameters(Generator* gen) {
  uniform_by_hidden(parameters(), hidden_size, gen);
}

std::string RNNCellBase::extra_repr() const {
  return str_cat(input_size, ", ", hidden_size, bias_ih.defined() ? "" : ", bias=False");
}

Tensor RNNCellBase::batched_input(const Tensor& input) const {
  STRIDE_CHECK(input.dim() == 1 || input.dim() == 2, ShapeError, "[", name(),
               "] expected input (N, input_size) or unbatched (input_size); got shape ",
               shape_str(input.sizes()), ".");
  check_input_size(name(), input, input_size);
  return input.dim() == 1 ? input.unsqueeze(0) : input;
}

Tensor RNNCellBase::batched_state(const Tensor& batched, const Tensor& state) const {
  if (!state.defined()) {
    return zeros({batched.size(0), hidden_size},
                 TensorOptions(batched.dtype()).device(batched.device()));
  }
  return state.dim() == 1 ? state.unsqueeze(0) : state;
}

RNNCell::RNNCell(
    int64_t in, int64_t hidden, bool with_bias, const std::string& activation, Generator* gen)
    : RNNCellBase("RNNCell", 1, in, hidden, with_bias, gen), nonlinearity(activation) {
  check_nonlinearity("RNNCell", activation);
}

Tensor RNNCell::forward(const Tensor& input) {
  return forward(input, Tensor());
}

Tensor RNNCell::forward(const Tensor& input, const Tensor& hx) {
  const Tensor x = batched_input(input);
  const Tensor h = batched_state(x, hx);
  const Tensor out = nonlinearity == "tanh"
                         ? F::rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                         : F::rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return input.dim() == 1 ? out.squeeze(0) : out;
}

std::string RNNCell::extra_repr() const {
  std::string s = RNNCellBase::extra_repr();
  if (nonlinearity != "tanh") s += ", nonlinearity=" + nonlinearity;
  return s;
}

LSTMCell::LSTMCell(int64_t in, int64_t hidden, bool with_bias, Generator* gen)
    : RNNCellBase("LSTMCell", 4, in, hidden, with_bias, gen) {}

std::pair<Tensor, Tensor> LSTMCell::forward(const Tensor& input,
                                            const std::pair<Tensor, Tensor>& hx) {
  const Tensor x = batched_input(input);
  auto [h, c] = F::lstm_cell(x, {batched_state(x, hx.first), batched_state(x, hx.second)},
                             weight_ih, weight_hh, bias_ih, bias_hh);
  if (input.dim() == 1) return {h.squeeze(0), c.squeeze(0)};
  return {h, c};
}

GRUCell::GRUCell(int64_t in, int64_t hidden, bool with_bias, Generator* gen)
    : RNNCellBase("GRUCell", 3, in, hidden, with_bias, gen) {}

Tensor GRUCell::forward(const Tensor& input) {
  return forward(input, Tensor());
}

Tensor GRUCell::forward(const Tensor& input, const Tensor& hx) {
  const Tensor x = batched_input(input);
  const Tensor out = F::gru_cell(x, batched_state(x, hx), weight_ih, weight_hh, bias_ih, bias_hh);
  return input.dim() == 1 ? out.squeeze(0) : out;
}

}  // namespace stride::nn
