// The recurrent ops: one time step (rnn_tanh_cell, rnn_relu_cell, lstm_cell,
// gru_cell) and whole sequences (rnn_tanh, rnn_relu, lstm, gru), composed of
// stride's ops as PyTorch composes them (CompositeImplicitAutograd), so that
// autograd gives the gradients through time. A layer's input-to-hidden
// products for every time step are one matmul; only the hidden-to-hidden
// product runs per step.
#include "stride/nn/rnn.h"

#include <string>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using ::stride::detail::check_dtype_rule;
using ::stride::detail::Op;

enum class Cell { Tanh, Relu, Lstm, Gru };

int64_t gate_count(Cell cell) {
  switch (cell) {
    case Cell::Lstm:
      return 4;
    case Cell::Gru:
      return 3;
    default:
      return 1;
  }
}

// The recurrent state: (h) or, for the LSTM, (h, c).
using State = std::vector<Tensor>;

// One layer's and direction's weights; the biases may be undefined.
struct Weights {
  Tensor w_ih, w_hh, b_ih, b_hh;
};

void check_same_dtype(const char* op, const char* what, const Tensor& t, const Tensor& input) {
  if (!t.defined()) return;
  STRIDE_CHECK(t.dtype() == input.dtype(), DTypeError, "[", op, "] ", what, " is ",
               to_string(t.dtype()), " but input is ", to_string(input.dtype()),
               ". Hint: convert them to one dtype.");
}

// w_ih (gates * H, input_size), w_hh (gates * H, H), biases (gates * H).
void check_weights(const char* op,
                   Cell cell,
                   const Weights& w,
                   int64_t input_size,
                   int64_t hidden,
                   const Tensor& input) {
  const int64_t rows = gate_count(cell) * hidden;
  STRIDE_CHECK(w.w_ih.dim() == 2 && w.w_ih.size(0) == rows && w.w_ih.size(1) == input_size,
               ShapeError, "[", op, "] w_ih must be (", rows, ", ", input_size, ") for ",
               gate_count(cell), " gate(s) of hidden size ", hidden, " and input size ", input_size,
               "; got shape ", shape_str(w.w_ih.sizes()), ".");
  STRIDE_CHECK(w.w_hh.dim() == 2 && w.w_hh.size(0) == rows && w.w_hh.size(1) == hidden, ShapeError,
               "[", op, "] w_hh must be (", rows, ", ", hidden, ") for ", gate_count(cell),
               " gate(s) of hidden size ", hidden, "; got shape ", shape_str(w.w_hh.sizes()), ".");
  for (const Tensor* b : {&w.b_ih, &w.b_hh}) {
    STRIDE_CHECK(!b->defined() || (b->dim() == 1 && b->size(0) == rows), ShapeError, "[", op,
                 "] the biases must be (", rows, "); got shape ", shape_str(b->sizes()), ".");
  }
  check_same_dtype(op, "w_ih", w.w_ih, input);
  check_same_dtype(op, "w_hh", w.w_hh, input);
  check_same_dtype(op, "b_ih", w.b_ih, input);
  check_same_dtype(op, "b_hh", w.b_hh, input);
}

// Each state tensor must be `shape`, as the input's batch and the weights'
// hidden size give it.
void check_state(
    const char* op, const char* what, const Tensor& state, IntArrayRef shape, const Tensor& input) {
  STRIDE_CHECK(state.sizes() == shape, ShapeError, "[", op, "] ", what, " must be ",
               shape_str(shape), " for this input and these weights; got shape ",
               shape_str(state.sizes()), ".");
  check_same_dtype(op, what, state, input);
}

// One step from the input's projection gi = input w_ih^T + b_ih (N, gates * H).
State step(
    Cell cell, const Tensor& gi, const State& state, const Tensor& w_hh, const Tensor& b_hh) {
  const Tensor gh = linear(state[0], w_hh, b_hh);
  switch (cell) {
    case Cell::Tanh:
      return {(gi + gh).tanh()};
    case Cell::Relu:
      return {(gi + gh).relu()};
    case Cell::Lstm: {
      const std::vector<Tensor> gates = (gi + gh).chunk(4, 1);
      const Tensor c = gates[1].sigmoid() * state[1] + gates[0].sigmoid() * gates[2].tanh();
      return {gates[3].sigmoid() * c.tanh(), c};
    }
    case Cell::Gru: {
      const std::vector<Tensor> x = gi.chunk(3, 1);
      const std::vector<Tensor> h = gh.chunk(3, 1);
      const Tensor r = (x[0] + h[0]).sigmoid();
      const Tensor z = (x[1] + h[1]).sigmoid();
      // PyTorch's placement of b_hn: inside r * (h w_hn^T + b_hn).
      const Tensor n = (x[2] + r * h[2]).tanh();
      return {(state[0] - n) * z + n};
    }
  }
  return {};
}

// A cell op: input (N, input_size) and the state's tensors (N, H).
State run_cell(Op op, Cell cell, const Tensor& input, const State& state, const Weights& w) {
  check_dtype_rule(op, input);
  const char* name = ::stride::detail::op_name(op);
  STRIDE_CHECK(input.dim() == 2, ShapeError, "[", name,
               "] input must be (N, input_size); got shape ", shape_str(input.sizes()),
               ". Hint: unsqueeze(0) an unbatched input.");
  const int64_t hidden = w.w_hh.dim() == 2 ? w.w_hh.size(1) : 0;
  check_weights(name, cell, w, input.size(1), hidden, input);
  for (const Tensor& s : state) check_state(name, "hx", s, {input.size(0), hidden}, input);
  return step(cell, linear(input, w.w_ih, w.b_ih), state, w.w_hh, w.b_hh);
}

// One direction of one layer: x (L, N, in) from `state` -> the outputs
// (L, N, H) and the final state.
std::pair<Tensor, State> run_direction(
    Cell cell, const Tensor& x, State state, const Weights& w, bool reverse) {
  const Tensor projected = linear(x, w.w_ih, w.b_ih);  // every time step in one matmul
  const int64_t steps = x.size(0);
  std::vector<Tensor> outputs(static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t t = reverse ? steps - 1 - i : i;
    state = step(cell, projected.select(0, t), state, w.w_hh, w.b_hh);
    outputs[size_t(t)] = state[0];
  }
  return {stack(outputs, 0), state};
}

Weights weights_of(const std::vector<Tensor>& params, size_t first, bool has_biases) {
  if (!has_biases) return {params[first], params[first + 1], {}, {}};
  return {params[first], params[first + 1], params[first + 2], params[first + 3]};
}

// The checks of a sequence op's arguments that do not depend on a layer.
void check_sequence_args(const char* op,
                         const Tensor& input,
                         const std::vector<Tensor>& params,
                         const RecurrentOptions& o) {
  STRIDE_CHECK(input.dim() == 2 || input.dim() == 3, ShapeError, "[", op,
               "] input must be (L, N, input_size), (N, L, input_size) with batch_first, or "
               "unbatched (L, input_size); got shape ",
               shape_str(input.sizes()), ".");
  STRIDE_CHECK(input.size(o.batch_first && input.dim() == 3 ? 1 : 0) > 0, ShapeError, "[", op,
               "] the sequence is empty (input shape ", shape_str(input.sizes()),
               "). Hint: pass at least one time step.");
  STRIDE_CHECK(o.num_layers > 0, ValueError, "[", op, "] num_layers must be positive; got ",
               o.num_layers, ".");
  STRIDE_CHECK(o.dropout >= 0 && o.dropout <= 1, ValueError, "[", op,
               "] dropout must be in [0, 1]; got ", o.dropout, ".");
  const int64_t expected = o.num_layers * (o.bidirectional ? 2 : 1) * (o.has_biases ? 4 : 2);
  STRIDE_CHECK(int64_t(params.size()) == expected, ValueError, "[", op, "] params must hold ",
               expected, " tensors (w_ih, w_hh", o.has_biases ? ", b_ih, b_hh" : "",
               " per layer and direction); got ", params.size(), ".");
}

// at::lstm and its siblings: every layer and direction over the whole
// sequence; returns the output and the final states, laid out as the input.
std::pair<Tensor, State> run_sequence(Op op,
                                      Cell cell,
                                      const Tensor& input,
                                      State hx,
                                      const std::vector<Tensor>& params,
                                      const RecurrentOptions& o) {
  check_dtype_rule(op, input);
  const char* name = ::stride::detail::op_name(op);
  check_sequence_args(name, input, params, o);
  const bool batched = input.dim() == 3;
  Tensor x = !batched ? input.unsqueeze(1) : o.batch_first ? input.transpose(0, 1) : input;
  const int64_t directions = o.bidirectional ? 2 : 1;
  const int64_t hidden = params[1].dim() == 2 ? params[1].size(1) : 0;
  const int64_t batch = x.size(1);
  const DimVector state_shape{o.num_layers * directions, batch, hidden};
  for (Tensor& h : hx) {
    if (!h.defined()) {
      h = zeros(state_shape, TensorOptions(x.dtype()).device(x.device()));
    } else {
      check_state(name, "hx", h, batched ? state_shape : DimVector{state_shape[0], hidden}, input);
      if (!batched) h = h.unsqueeze(1);
    }
  }
  const size_t per_direction = o.has_biases ? 4 : 2;
  std::vector<State> finals(hx.size());
  for (int64_t layer = 0; layer < o.num_layers; ++layer) {
    std::vector<Tensor> outputs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t index = layer * directions + direction;
      const Weights w = weights_of(params, size_t(index) * per_direction, o.has_biases);
      check_weights(name, cell, w, x.size(2), hidden, input);
      State state;
      for (const Tensor& h : hx) state.push_back(h.select(0, index));
      auto [out, last] = run_direction(cell, x, std::move(state), w, direction == 1);
      outputs.push_back(out);
      for (size_t k = 0; k < last.size(); ++k) finals[k].push_back(last[k]);
    }
    x = directions == 1 ? outputs[0] : cat(outputs, 2);
    if (layer + 1 < o.num_layers) x = dropout(x, o.dropout, o.train, o.generator);
  }
  State final_states;
  for (const State& f : finals) {
    const Tensor s = stack(f, 0);
    final_states.push_back(batched ? s : s.squeeze(1));
  }
  if (!batched) return {x.squeeze(1), final_states};
  return {o.batch_first ? x.transpose(0, 1) : x, final_states};
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input,
                     const Tensor& hx,
                     const Tensor& w_ih,
                     const Tensor& w_hh,
                     const Tensor& b_ih,
                     const Tensor& b_hh) {
  return run_cell(Op::rnn_tanh_cell, Cell::Tanh, input, {hx}, {w_ih, w_hh, b_ih, b_hh})[0];
}

Tensor rnn_relu_cell(const Tensor& input,
                     const Tensor& hx,
                     const Tensor& w_ih,
                     const Tensor& w_hh,
                     const Tensor& b_ih,
                     const Tensor& b_hh) {
  return run_cell(Op::rnn_relu_cell, Cell::Relu, input, {hx}, {w_ih, w_hh, b_ih, b_hh})[0];
}

std::pair<Tensor, Tensor> lstm_cell(const Tensor& input,
                                    const std::pair<Tensor, Tensor>& hx,
                                    const Tensor& w_ih,
                                    const Tensor& w_hh,
                                    const Tensor& b_ih,
                                    const Tensor& b_hh) {
  const State s =
      run_cell(Op::lstm_cell, Cell::Lstm, input, {hx.first, hx.second}, {w_ih, w_hh, b_ih, b_hh});
  return {s[0], s[1]};
}

Tensor gru_cell(const Tensor& input,
                const Tensor& hx,
                const Tensor& w_ih,
                const Tensor& w_hh,
                const Tensor& b_ih,
                const Tensor& b_hh) {
  return run_cell(Op::gru_cell, Cell::Gru, input, {hx}, {w_ih, w_hh, b_ih, b_hh})[0];
}

std::pair<Tensor, Tensor> rnn_tanh(const Tensor& input,
                                   const Tensor& hx,
                                   const std::vector<Tensor>& params,
                                   const RecurrentOptions& options) {
  auto [output, h] = run_sequence(Op::rnn_tanh, Cell::Tanh, input, {hx}, params, options);
  return {output, h[0]};
}

std::pair<Tensor, Tensor> rnn_relu(const Tensor& input,
                                   const Tensor& hx,
                                   const std::vector<Tensor>& params,
                                   const RecurrentOptions& options) {
  auto [output, h] = run_sequence(Op::rnn_relu, Cell::Relu, input, {hx}, params, options);
  return {output, h[0]};
}

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input,
                                        const std::pair<Tensor, Tensor>& hx,
                                        const std::vector<Tensor>& params,
                                        const RecurrentOptions& options) {
  auto [output, hc] =
      run_sequence(Op::lstm, Cell::Lstm, input, {hx.first, hx.second}, params, options);
  return {output, hc[0], hc[1]};
}

std::pair<Tensor, Tensor> gru(const Tensor& input,
                              const Tensor& hx,
                              const std::vector<Tensor>& params,
                              const RecurrentOptions& options) {
  auto [output, h] = run_sequence(Op::gru, Cell::Gru, input, {hx}, params, options);
  return {output, h[0]};
}

}  // namespace stride::nn::functional
