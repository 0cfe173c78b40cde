// The time loop of a recurrent layer (nn.RNN, nn.LSTM, nn.GRU) in the engine: one layer in
// one direction over a whole sequence, as one autograd node. The input projection of every
// step is one matrix product; each step adds h W_hh^T (one product) and applies the gates in
// one pass; backward runs back through time in C++ and forms the weight gradients of all
// steps as one product each. That for CPU float32 and float64; on other devices and dtypes
// the same steps are composed from tensor ops (as backward with create_graph=true does).
#pragma once
#include "../tensor.hpp"

namespace tide::ag {

// The cell of a layer: gate order as in PyTorch (LSTM i, f, g, o; GRU r, z, n with
// n = tanh(x W_in + b_in + r * (h W_hn + b_hn))).
enum class RnnMode { Tanh, Relu, Lstm, Gru };

// The number of gate blocks of hidden_size rows in weight_ih: 1, 4 or 3.
int rnn_gates(RnnMode mode);

struct RnnLayerResult {
  Tensor output;  // (T, B, out), out = proj_size or hidden_size
  Tensor h_n;     // (B, out): the state after the last step processed
  Tensor c_n;     // (B, hidden) for LSTM, else undefined
};

// Runs x (T, B, in) from h0 (B, out) (and c0 (B, hidden) for LSTM) through the steps
// t = 1..T, or T..1 when `reverse`. w_ih (gates * hidden, in), w_hh (gates * hidden, out),
// the biases (gates * hidden) or null, w_hr (out, hidden) the LSTM projection or null.
// On the CPU in float32/float64 records one node when autograd records (the results are
// views of its one output).
RnnLayerResult rnn_layer(RnnMode mode, const Tensor& x, const Tensor& h0, const Tensor* c0, const Tensor& w_ih,
                         const Tensor& w_hh, const Tensor* b_ih, const Tensor* b_hh, const Tensor* w_hr, bool reverse);

}  // namespace tide::ag
