// Custom functions (torch.autograd.Function): the carrier layout described in custom.hpp,
// built on record() alone.
#include "custom.hpp"

#include <mutex>
#include <unordered_set>

#include "../ops/creation.hpp"
#include "functions.hpp"

namespace tide::autograd {

namespace {

// Node names outlive any one graph (FunctionNode keeps a pointer), so each distinct name of
// a custom function is kept for the life of the process; a program defines few.
const char* interned(const std::string& name) {
  static std::mutex mu;
  static auto* names = new std::unordered_set<std::string>();  // never destroyed
  std::lock_guard<std::mutex> lock(mu);
  return names->insert(name).first->c_str();
}

struct OutputMeta {
  Dims sizes;
  DType dtype;
  Device device;
  int64_t offset = -1;  // where its gradient lies in the carrier; -1: not differentiable
};

// Whether a tensor of shape `in` broadcasts to shape `to` (a gradient of shape `to` then
// sums back to `in`).
bool expandable(const Dims& in, const Dims& to) {
  if (in.size() > to.size()) return false;
  for (int i = 1; i <= in.size(); ++i) {
    int64_t a = in[in.size() - i], b = to[to.size() - i];
    if (a != b && a != 1) return false;
  }
  return true;
}

}  // namespace

class CustomState {
 public:
  const char* op = nullptr;  // "<name>", the node is "<Name>Backward"
  std::shared_ptr<CustomBackward> backward;
  std::vector<OutputMeta> outputs;
  std::vector<Device> input_devices;
  int64_t carrier_numel = 0;
  DType carrier_dtype = DType::Float32;
  Device device;
  std::vector<SavedTensor> saved;
  std::vector<int> saved_output;  // the output a saved tensor is (-1: none)
  std::weak_ptr<Node> node;       // the function's node, which owns this state

  // A tensor of the carrier's shape and dtype, without history (zero strides: it owns one
  // element of memory). record() makes it the function's result.
  Tensor blank_carrier() const {
    return Tensor::make_view(ops::empty(Dims{1}, carrier_dtype, device).storage(), Dims{carrier_numel}, Dims{0}, 0,
                             carrier_dtype);
  }

  // Makes `out` (output k's data, without history) a result of the function: a node that
  // puts out's gradient at its slice of the carrier, zeros elsewhere.
  void route(Tensor& out, const Tensor& carrier, size_t k) const {
    const int64_t offset = outputs[k].offset, numel = out.numel(), total = carrier_numel;
    const DType dtype = carrier_dtype;
    record(op, out, {&carrier}, [offset, numel, total, dtype](const Tensor& g, const Node&) -> std::vector<Tensor> {
      Tensor flat = ag::reshape(g.dtype() == dtype ? g : ag::cast(g, dtype), Dims{numel});
      if (numel == total) return {flat};
      std::vector<Tensor> parts;
      if (offset > 0) parts.push_back(ops::zeros(Dims{offset}, dtype, g.device()));
      parts.push_back(flat);
      if (offset + numel < total) parts.push_back(ops::zeros(Dims{total - offset - numel}, dtype, g.device()));
      return {ag::cat(parts, 0)};
    });
  }

  // The function's backward: the carrier's gradient cut into one gradient per output, the
  // callback, and its results checked against the inputs.
  std::vector<Tensor> run(const Tensor& g, const Node& node) const {
    std::vector<Tensor> grads;
    grads.reserve(outputs.size());
    for (const OutputMeta& o : outputs) {
      if (o.offset < 0) {
        grads.push_back(ops::zeros(o.sizes, o.dtype, o.device));
        continue;
      }
      Tensor part = ag::reshape(ag::narrow(g, 0, o.offset, shape_numel(o.sizes)), o.sizes);
      grads.push_back(part.dtype() == o.dtype ? part : ag::cast(part, o.dtype));
    }
    std::vector<Tensor> r = backward->backward(grads);
    TIDE_ASSERT(r.size() == node.next.size());
    for (size_t i = 0; i < r.size(); ++i) {
      if (!r[i].defined()) continue;
      if (!node.needs_grad(i)) {
        r[i] = Tensor();  // an input that needs no gradient: PyTorch drops it too
        continue;
      }
      const Dims& want = node.inputs[i].sizes;
      TIDE_CHECK(r[i].sizes() == want || expandable(want, r[i].sizes()), node.name(),
                 ": backward returned a gradient of shape ", r[i].sizes().str(), " for input ", i + 1,
                 ", which has shape ", want.str());
      TIDE_CHECK(r[i].device() == input_devices[i], node.name(), ": backward returned a gradient on ",
                 r[i].device().str(), " for input ", i + 1, ", which is on ", input_devices[i].str());
      TIDE_CHECK(is_floating(r[i].dtype()), node.name(), ": backward returned a ", dtype_name(r[i].dtype()),
                 " gradient for input ", i + 1, " (gradients are floating-point)");
    }
    return r;
  }
};

CustomRecord record_custom(const std::string& name, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& outputs, const std::vector<bool>& differentiable,
                           const std::vector<Tensor>& saved, std::shared_ptr<CustomBackward> backward) {
  TIDE_ASSERT(differentiable.size() == outputs.size());
  auto s = std::make_shared<CustomState>();
  s->op = interned(name);
  s->backward = std::move(backward);
  CustomRecord rec;
  bool any = false;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& o = outputs[k];
    // Fresh tensors on the outputs' storage: an output that is an input, or a view of one,
    // gets its own identity and history.
    rec.outputs.push_back(Tensor::make_view(o.storage(), o.sizes(), o.strides(), o.offset(), o.dtype()));
    OutputMeta m{o.sizes(), o.dtype(), o.device()};
    if (differentiable[k] && is_floating(o.dtype())) {
      if (!any) {
        s->device = o.device();
        s->carrier_dtype = o.dtype();
      }
      TIDE_CHECK(o.device() == s->device, "autograd.Function: ", name, " returned differentiable outputs on ",
                 s->device.str(), " and ", o.device().str(), "; they must share one device");
      s->carrier_dtype = promote_types(s->carrier_dtype, o.dtype());
      m.offset = s->carrier_numel;
      s->carrier_numel += o.numel();
      any = true;
    }
    s->outputs.push_back(m);
  }
  if (!any || !needs_recording(inputs)) return rec;
  for (const Tensor& t : saved) {
    int out = -1;
    for (size_t k = 0; k < outputs.size() && out < 0; ++k)
      if (outputs[k].impl() == t.impl()) out = int(k);
    // An output is kept as a view of its own, without history (which would hold this node:
    // a cycle).
    s->saved.push_back(SavedTensor::input(out < 0 ? t : Tensor::make_view(t.storage(), t.sizes(), t.strides(),
                                                                          t.offset(), t.dtype())));
    s->saved_output.push_back(out);
  }
  std::vector<const Tensor*> in;
  for (const Tensor& t : inputs) {
    in.push_back(&t);
    s->input_devices.push_back(t.device());
  }
  Tensor carrier = s->blank_carrier();
  record(s->op, carrier, in, [s](const Tensor& g, const Node& node) { return s->run(g, node); });
  s->node = grad_fn(carrier);
  for (size_t k = 0; k < outputs.size(); ++k)
    if (s->outputs[k].offset >= 0) s->route(rec.outputs[k], carrier, k);
  rec.state = s;
  return rec;
}

std::vector<Tensor> saved_tensors(const std::weak_ptr<CustomState>& state, const std::string& name) {
  std::shared_ptr<CustomState> s = state.lock();
  std::shared_ptr<Node> node = s ? s->node.lock() : nullptr;
  TIDE_CHECK(node, name, ": the saved tensors were freed by a backward through this function; pass "
             "{retain_graph=true} to that backward to use them again");
  std::vector<Tensor> out;
  for (size_t i = 0; i < s->saved.size(); ++i) {
    Tensor t = s->saved[i].unpack(*node);
    int k = s->saved_output[i];
    if (k >= 0 && grad_enabled()) {
      // Under create_graph: the saved output as a result of this function again.
      Tensor carrier = s->blank_carrier();
      AutogradMeta& m = meta(carrier);
      m.requires_grad = true;
      m.grad_fn = node;
      t = Tensor::make_view(t.storage(), t.sizes(), t.strides(), t.offset(), t.dtype());
      s->route(t, carrier, size_t(k));
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace tide::autograd
