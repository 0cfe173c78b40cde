// Binding of the recurrent layers' time loop (tensor/autograd/rnn.hpp), which
// bindings/lua/torch_nn_rnn.lua calls once per layer and direction (and once per cell step).
#include "../tensor/autograd/rnn.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

// _rnn_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, reverse) -> output, h_n[, c_n]
int rnn_layer_fn(lua_State* L, Args& a) {
  const std::string m = a.string(1);
  ag::RnnMode mode;
  if (m == "RNN_TANH") mode = ag::RnnMode::Tanh;
  else if (m == "RNN_RELU") mode = ag::RnnMode::Relu;
  else if (m == "LSTM") mode = ag::RnnMode::Lstm;
  else if (m == "GRU") mode = ag::RnnMode::Gru;
  else a.error("mode must be \"RNN_TANH\", \"RNN_RELU\", \"LSTM\" or \"GRU\", got \"" + m + "\"");
  auto optional = [&](int i) -> const Tensor* { return a.has(i) ? &a.tensor(i) : nullptr; };
  const Tensor* c0 = optional(4);
  const Tensor *b_ih = optional(7), *b_hh = optional(8), *w_hr = optional(9);
  ag::RnnLayerResult r = ag::rnn_layer(mode, a.tensor(2), a.tensor(3), c0, a.tensor(5), a.tensor(6), b_ih, b_hh, w_hr,
                                       a.has(10) && a.boolean(10));
  push_tensor(L, std::move(r.output));
  push_tensor(L, std::move(r.h_n));
  if (!r.c_n.defined()) return 2;
  push_tensor(L, std::move(r.c_n));
  return 3;
}

const Binding kRnnBindings[] = {
    {"_rnn_layer", rnn_layer_fn, TORCH,
     "_rnn_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, reverse) -> output, h_n[, c_n]: one "
     "recurrent layer in one direction over x (T, B, in) from h0 (B, out) and, for mode \"LSTM\", c0 (B, hidden); "
     "c0, the biases and w_hr (the LSTM projection) may be nil; mode \"RNN_TANH\", \"RNN_RELU\", \"LSTM\" or \"GRU\"; the time loop and its backward run in the engine "
     "(CPU float32/float64; composed from tensor ops on other devices and dtypes); nn.RNN, nn.LSTM, nn.GRU and the "
     "cells call it."},
};

}  // namespace

void register_rnn_bindings() { register_bindings(kRnnBindings, std::size(kRnnBindings)); }

}  // namespace tide::lua
