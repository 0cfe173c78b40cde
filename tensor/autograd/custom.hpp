// Functions whose backward is written outside the engine: torch.autograd.Function, whose
// forward and backward are Lua (bindings/bind_function.cpp supplies the backward as an
// opaque CustomBackward object; the engine never sees Lua).
//
// A custom function has several inputs and outputs but the engine's nodes have one output
// each, so it is recorded as one node over the inputs whose "output" is a flat carrier: the
// differentiable outputs laid end to end. Each output gets a small node that places its
// gradient at its slice of the carrier; the engine sums those at the function's node, which
// cuts the sum into one gradient per output (zeros where none arrived) and calls backward
// once, as PyTorch does.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "autograd.hpp"

namespace tide::autograd {

struct CustomBackward {
  virtual ~CustomBackward() = default;
  // Gradients of the inputs (one per input given to record_custom, undefined: none) from
  // one gradient per output (zeros for an output that received none or is not
  // differentiable). May throw; runs with grad mode on under create_graph.
  virtual std::vector<Tensor> backward(const std::vector<Tensor>& grads) = 0;
};

class CustomState;

// What record_custom returns: the outputs with their history, and the function's state,
// which the binding holds weakly (the graph owns it) to reach the saved tensors.
struct CustomRecord {
  std::vector<Tensor> outputs;
  std::weak_ptr<CustomState> state;
};

// Records outputs = name(inputs) (the forward ran without recording). Outputs marked not
// differentiable, and integer or bool ones, get no history (their gradients are zeros);
// the others become results of a node named "<name>Backward" that calls `backward`.
// `saved` (ctx:save_for_backward) are kept with their versions: an input or any other
// tensor as it is, an output without its own history (no cycle). Outputs that require grad
// must share one device. Returns fresh output tensors sharing the outputs' storage.
CustomRecord record_custom(const std::string& name, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& outputs, const std::vector<bool>& differentiable,
                           const std::vector<Tensor>& saved, std::shared_ptr<CustomBackward> backward);

// ctx.saved_tensors: the saved tensors, each checked against in-place changes since it was
// saved. Under create_graph a saved output is connected to the function again, so the
// gradient computed from it is differentiable. An error once backward has freed them.
std::vector<Tensor> saved_tensors(const std::weak_ptr<CustomState>& state, const std::string& name);

}  // namespace tide::autograd
