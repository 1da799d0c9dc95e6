// stride::nn recurrent layers: the one-step cells (torch.rnn_tanh_cell,
// rnn_relu_cell, lstm_cell, gru_cell), the whole-sequence functions with
// ATen's arguments (at::rnn_tanh, rnn_relu, lstm, gru) and the modules
// nn::RNN, LSTM, GRU, RNNCell, LSTMCell and GRUCell with PyTorch's
// constructor arguments, parameter names, registration order and
// initialisation. Everything is composed of stride's ops, so autograd gives
// the gradients through time.
//
// Shapes: L sequence length, N batch, H hidden_size, D 2 when bidirectional
// else 1. Gates are stacked in PyTorch's order: LSTM (i, f, g, o), GRU
// (r, z, n), so w_ih is (gates * H, input_size) and w_hh (gates * H, H).
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "stride/generator.h"
#include "stride/nn/module.h"
#include "stride/tensor.h"

namespace stride::nn {

namespace functional {

// One time step. input (N, input_size), hx (N, H) -> h' (N, H):
// tanh / relu(input w_ih^T + b_ih + hx w_hh^T + b_hh). Biases may be
// undefined (no bias).
Tensor rnn_tanh_cell(const Tensor& input,
                     const Tensor& hx,
                     const Tensor& w_ih,
                     const Tensor& w_hh,
                     const Tensor& b_ih = {},
                     const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input,
                     const Tensor& hx,
                     const Tensor& w_ih,
                     const Tensor& w_hh,
                     const Tensor& b_ih = {},
                     const Tensor& b_hh = {});
// hx = (h, c), each (N, H) -> (h', c').
std::pair<Tensor, Tensor> lstm_cell(const Tensor& input,
                                    const std::pair<Tensor, Tensor>& hx,
                                    const Tensor& w_ih,
                                    const Tensor& w_hh,
                                    const Tensor& b_ih = {},
                                    const Tensor& b_hh = {});
// h' = (1 - z) * n + z * h with n = tanh(x_n + r * (h w_hn^T + b_hn)).
Tensor gru_cell(const Tensor& input,
                const Tensor& hx,
                const Tensor& w_ih,
                const Tensor& w_hh,
                const Tensor& b_ih = {},
                const Tensor& b_hh = {});

// The arguments at::lstm and its siblings share after `params`: dropout
// (drawn from `generator`) applies to the outputs of every layer but the
// last, and only when `train`.
struct RecurrentOptions {
  bool has_biases = true;
  int64_t num_layers = 1;
  double dropout = 0.0;
  bool train = false;
  bool bidirectional = false;
  bool batch_first = false;
  Generator* generator = nullptr;
};

// Whole sequences. input (L, N, input_size) ((N, L, input_size) with
// batch_first; (L, input_size) unbatched); hx (num_layers * D, N, H)
// ((num_layers * D, H) unbatched), zeros when undefined; params every
// layer's and direction's (w_ih, w_hh[, b_ih, b_hh]) in that order, the
// reverse direction after the forward one. Returns output
// (L, N, D * H) (laid out as the input) and h_n (num_layers * D, N, H).
std::pair<Tensor, Tensor> rnn_tanh(const Tensor& input,
                                   const Tensor& hx,
                                   const std::vector<Tensor>& params,
                                   const RecurrentOptions& options = {});
std::pair<Tensor, Tensor> rnn_relu(const Tensor& input,
                                   const Tensor& hx,
                                   const std::vector<Tensor>& params,
                                   const RecurrentOptions& options = {});
// hx = (h_0, c_0) -> (output, h_n, c_n).
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input,
                                        const std::pair<Tensor, Tensor>& hx,
                                        const std::vector<Tensor>& params,
                                        const RecurrentOptions& options = {});
std::pair<Tensor, Tensor> gru(const Tensor& input,
                              const Tensor& hx,
                              const std::vector<Tensor>& params,
                              const RecurrentOptions& options = {});

}  // namespace functional

// The parameters of RNN, LSTM and GRU: weight_ih_l{k}[_reverse],
// weight_hh_l{k}[_reverse] and, with bias, bias_ih_l{k}[_reverse],
// bias_hh_l{k}[_reverse], registered in PyTorch's order and drawn from
// U(-1/sqrt(H), 1/sqrt(H)). PackedSequence and proj_size are not supported.
class RNNBase : public Module {
 public:
  void reset_parameters(Generator* gen = nullptr) override;
  std::string extra_repr() const override;
  // The weights in the order the sequence functions take them.
  const std::vector<Tensor>& flat_weights() const { return flat_weights_; }
  // The options of a forward call: training mode decides the dropout.
  functional::RecurrentOptions options() const;

  int64_t input_size;
  int64_t hidden_size;
  int64_t num_layers;
  bool bias;
  bool batch_first;
  double dropout;
  bool bidirectional;
  Generator* generator;  // draws the initial weights and the dropout masks

 protected:
  RNNBase(const char* layer,
          int64_t gates,
          int64_t in_size,
          int64_t hidden,
          int64_t layers,
          bool with_bias,
          bool first_batch,
          double dropout_p,
          bool both_directions,
          Generator* gen);

 private:
  std::vector<Tensor> flat_weights_;
};

// Elman RNN; nonlinearity "tanh" or "relu". forward -> (output, h_n).
class RNN : public RNNBase {
 public:
  RNN(int64_t input_size,
      int64_t hidden_size,
      int64_t num_layers = 1,
      const std::string& nonlinearity = "tanh",
      bool bias = true,
      bool batch_first = false,
      double dropout = 0.0,
      bool bidirectional = false,
      Generator* gen = nullptr);
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});

  std::string nonlinearity;
};

// forward -> (output, (h_n, c_n)); hx = (h_0, c_0), zeros when undefined.
class LSTM : public RNNBase {
 public:
  LSTM(int64_t input_size,
       int64_t hidden_size,
       int64_t num_layers = 1,
       bool bias = true,
       bool batch_first = false,
       double dropout = 0.0,
       bool bidirectional = false,
       Generator* gen = nullptr);
  std::pair<Tensor, std::pair<Tensor, Tensor>> forward(const Tensor& input,
                                                       const std::pair<Tensor, Tensor>& hx = {});
};

// forward -> (output, h_n).
class GRU : public RNNBase {
 public:
  GRU(int64_t input_size,
      int64_t hidden_size,
      int64_t num_layers = 1,
      bool bias = true,
      bool batch_first = false,
      double dropout = 0.0,
      bool bidirectional = false,
      Generator* gen = nullptr);
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
};

// The parameters of the cells: weight_ih (gates * H, input_size), weight_hh
// (gates * H, H) and, with bias, bias_ih and bias_hh (gates * H), drawn from
// U(-1/sqrt(H), 1/sqrt(H)). Input (N, input_size) or unbatched
// (input_size); the state zeros when undefined.
class RNNCellBase : public Module {
 public:
  void reset_parameters(Generator* gen = nullptr) override;
  std::string extra_repr() const override;

  int64_t input_size;
  int64_t hidden_size;
  Tensor weight_ih;
  Tensor weight_hh;
  Tensor bias_ih;  // undefined without bias
  Tensor bias_hh;  // undefined without bias

 protected:
  RNNCellBase(const char* cell,
              int64_t gates,
              int64_t in_size,
              int64_t hidden,
              bool with_bias,
              Generator* gen);
  // input as (N, input_size), checked against input_size.
  Tensor batched_input(const Tensor& input) const;
  // A state of the batched input as (N, H): zeros when undefined.
  Tensor batched_state(const Tensor& batched, const Tensor& state) const;
};

class RNNCell : public RNNCellBase {
 public:
  RNNCell(int64_t input_size,
          int64_t hidden_size,
          bool bias = true,
          const std::string& nonlinearity = "tanh",
          Generator* gen = nullptr);
  Tensor forward(const Tensor& input) override;
  Tensor forward(const Tensor& input, const Tensor& hx);
  std::string extra_repr() const override;

  std::string nonlinearity;
};

// forward -> (h', c').
class LSTMCell : public RNNCellBase {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true, Generator* gen = nullptr);
  std::pair<Tensor, Tensor> forward(const Tensor& input, const std::pair<Tensor, Tensor>& hx = {});
};

class GRUCell : public RNNCellBase {
 public:
  GRUCell(int64_t input_size, int64_t hidden_size, bool bias = true, Generator* gen = nullptr);
  Tensor forward(const Tensor& input) override;
  Tensor forward(const Tensor& input, const Tensor& hx);
};

}  // namespace stride::nn
