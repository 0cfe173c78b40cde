// The autograd core: grad mode, per-tensor meta, recording, saved tensors, the in-place
// protocol, and the dependency-counted backward walk.
#include <atomic>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "../ops/creation.hpp"
#include "../ops/elementwise.hpp"
#include "../ops/shape.hpp"
#include "autograd.hpp"
#include "functions.hpp"

namespace tide {

namespace {

thread_local bool g_grad_enabled = true;
// Callbacks queued during the backward pass running on this thread (queue_callback); a
// backward run from a hook has its own list.
thread_local std::vector<std::function<void()>>* t_callbacks = nullptr;

// The node a differentiable op records: its backward formula as a closure.
struct FunctionNode final : Node {
  const char* op;
  autograd::BackwardFn fn;
  FunctionNode(const char* op_, autograd::BackwardFn fn_) : op(op_), fn(std::move(fn_)) {}
  std::string name() const override {
    std::string n;
    bool up = true;
    for (const char* p = op; *p; ++p) {
      if (*p == '_' || *p == '.') {
        up = true;
        continue;
      }
      n += up ? char(std::toupper(static_cast<unsigned char>(*p))) : *p;
      up = false;
    }
    return n + "Backward";
  }
  std::vector<Tensor> apply(const Tensor& grad) override {
    TIDE_CHECK(fn, "backward: trying to backward through the graph a second time (", name(),
               " already freed its saved tensors); pass {retain_graph=true} to the first backward");
    return fn(grad, *this);
  }
  void release() override { fn = nullptr; }
};

// The node at the end of every path into a leaf: adds the incoming gradient to leaf.grad.
struct AccumulateGrad final : Node {
  std::shared_ptr<TensorImpl> leaf;
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> l) : leaf(std::move(l)) {}
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const Tensor& grad) override {
    AutogradMeta& m = *leaf->autograd;
    if (!m.grad.defined()) {
      // The first gradient becomes .grad itself when nothing else can see it; otherwise a
      // copy, so that accumulating into .grad later never writes into another tensor.
      bool exclusive = grad.impl_ptr().use_count() == 1 && grad.storage().use_count() == 1 &&
                       !grad.impl()->base && grad.is_contiguous();
      m.grad = autograd::grad_enabled() || exclusive ? grad : grad.clone();
    } else if (autograd::grad_enabled()) {
      m.grad = ag::binary(BinaryOp::Add, m.grad, grad);  // create_graph: keep the sum differentiable
    } else {
      ops::binary(BinaryOp::Add, m.grad, grad, &m.grad);
    }
    if (!m.post_accumulate_hooks.empty()) {
      Tensor t(leaf);
      auto hooks = m.post_accumulate_hooks;  // a hook may add or remove hooks
      for (auto& h : hooks) h.second(t);
    }
    return {};
  }
};

std::shared_ptr<Node> accumulator_of(const Tensor& leaf) {
  AutogradMeta& m = autograd::meta(leaf);
  if (auto acc = m.accumulator.lock()) return acc;
  auto acc = std::make_shared<AccumulateGrad>(leaf.impl_ptr());
  m.accumulator = acc;
  return acc;
}

// A view of a base that requires grad gets its history from the base: when it has none yet,
// or when the base was rewritten in place after the view's history was recorded, it is
// (re)derived as an as_strided view of the base's current value. A leaf the user made
// require grad keeps being a leaf.
void refresh_view_history(const Tensor& t) {
  const auto& base = t.impl()->base;
  if (!base || !base->autograd || !base->autograd->requires_grad) return;
  auto& m = t.impl()->autograd;
  if (m && m->requires_grad && !m->grad_fn) return;
  const std::shared_ptr<AutogradMeta>& bm = base->autograd;
  if (m && m->grad_fn && m->view_base == bm && m->base_generation == bm->generation) return;
  Tensor b(base);
  Tensor v = ag::as_strided(b, t.sizes(), t.strides(), t.offset() - b.offset());
  AutogradMeta& tm = autograd::meta(t);
  tm.requires_grad = true;
  tm.grad_fn = autograd::grad_fn(v);
  tm.view_base = bm;
  tm.base_generation = bm->generation;
}

// The edge through which a gradient reaches t: its grad_fn, or its accumulator for a leaf.
std::shared_ptr<Node> gradient_edge(const Tensor& t) {
  refresh_view_history(t);
  const AutogradMeta& m = *t.impl()->autograd;
  return m.grad_fn ? m.grad_fn : accumulator_of(t);
}

// A copy of t's current value that carries t's history (but none of its view relation):
// the stand-in for t's old value when t is about to be overwritten. A copy, so that the
// op's derivative may read the old value (abs_, mul_ by a tensor that requires grad, ...).
Tensor history_snapshot(const Tensor& t) {
  Tensor snap = t.clone();
  if (autograd::is_differentiable(t)) {
    gradient_edge(t);  // brings a view's history up to date
    const AutogradMeta& m = *t.impl()->autograd;
    snap.impl()->autograd = std::make_shared<AutogradMeta>(
        AutogradMeta{m.requires_grad, {}, m.grad_fn, m.accumulator, {}, 0, 0, {}});
  }
  return snap;
}

// A gradient brought to the shape and dtype of the input it belongs to: broadcast dims are
// summed away (the reverse of broadcasting) and the dtype converted.
Tensor conform(Tensor g, const InputMeta& in, const Node& node) {
  if (g.sizes() != in.sizes) g = ag::sum_to(g, in.sizes, node.name().c_str());
  if (g.dtype() != in.dtype) g = ag::cast(g, in.dtype);
  return g;
}

// The gradient of a root: the given one (checked) or ones for a single-element root.
Tensor root_grad(const Tensor& root, const Tensor& given, const char* op) {
  if (!given.defined()) {
    TIDE_CHECK(root.numel() == 1, op, ": grad can be implicitly created only for one-element outputs, but the output has shape ",
               root.sizes().str(), "; pass a gradient of that shape");
    return ops::ones(root.sizes(), root.dtype(), root.device());
  }
  TIDE_CHECK(given.sizes() == root.sizes(), op, ": the gradient has shape ", given.sizes().str(),
             " but the output has shape ", root.sizes().str());
  return given.dtype() == root.dtype() ? given : given.to(root.dtype());
}

// The dependency-counted walk shared by backward and grad. With `capture`, the gradients
// arriving at those nodes are stored in `captured` and leaves are not accumulated into.
void walk_graph(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
                bool create_graph, const char* op, const std::vector<Node*>* capture,
                std::unordered_map<Node*, Tensor>* captured);

// The walk, then the callbacks its hooks queued (in order; a callback may queue more).
void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
                  bool create_graph, const char* op, const std::vector<Node*>* capture,
                  std::unordered_map<Node*, Tensor>* captured) {
  std::vector<std::function<void()>> callbacks;
  auto* outer = t_callbacks;
  t_callbacks = &callbacks;
  try {
    walk_graph(roots, grads, retain_graph, create_graph, op, capture, captured);
    for (size_t i = 0; i < callbacks.size(); ++i) {
      auto fn = std::move(callbacks[i]);
      fn();
    }
  } catch (...) {
    t_callbacks = outer;
    throw;
  }
  t_callbacks = outer;
}

void walk_graph(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
                bool create_graph, const char* op, const std::vector<Node*>* capture,
                std::unordered_map<Node*, Tensor>* captured) {
  TIDE_CHECK(grads.empty() || grads.size() == roots.size(), op, ": got ", grads.size(), " gradients for ", roots.size(),
             " outputs");
  std::vector<std::pair<std::shared_ptr<Node>, Tensor>> starts;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    TIDE_CHECK(r.defined(), op, ": output ", i + 1, " is not a tensor");
    TIDE_CHECK(autograd::requires_grad(r), op, ": output ", i + 1,
               " does not require grad and has no grad_fn (did you compute it under no_grad, or from tensors that do not require grad?)");
    starts.emplace_back(gradient_edge(r), root_grad(r, grads.empty() ? Tensor() : grads[i], op));
  }
  // Dependencies: how many edges lead into each node reachable from the roots.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (auto& s : starts)
    if (seen.insert(s.first.get()).second) stack.push_back(s.first.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next) {
      if (!e.node) continue;
      ++deps[e.node.get()];
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }
  // With capture, only nodes on a path to a captured node need to run.
  std::unordered_set<Node*> useful;
  if (capture) {
    std::unordered_map<Node*, bool> memo;
    std::unordered_set<Node*> targets(capture->begin(), capture->end());
    std::function<bool(Node*)> leads = [&](Node* n) -> bool {
      auto it = memo.find(n);
      if (it != memo.end()) return it->second;
      memo[n] = false;
      bool r = targets.count(n) > 0;
      for (const Edge& e : n->next)
        if (e.node && leads(e.node.get())) r = true;
      memo[n] = r;
      return r;
    };
    for (Node* n : seen)
      if (leads(n)) useful.insert(n);
  }

  autograd::GradModeGuard mode(create_graph);
  std::unordered_map<Node*, Tensor> buffer;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep;  // nodes stay alive while queued
  auto add_grad = [&](const std::shared_ptr<Node>& n, const Tensor& g) {
    Tensor& slot = buffer[n.get()];
    if (!slot.defined())
      slot = g;
    else
      slot = create_graph ? ag::binary(BinaryOp::Add, slot, g) : ops::binary(BinaryOp::Add, slot, g);
    keep[n.get()] = n;
  };
  std::vector<Node*> ready;
  for (auto& s : starts) add_grad(s.first, s.second);
  for (auto& s : starts)
    if (deps[s.first.get()] == 0 && std::find(ready.begin(), ready.end(), s.first.get()) == ready.end())
      ready.push_back(s.first.get());
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    std::shared_ptr<Node> hold = keep[n];
    Tensor g = std::move(buffer[n]);
    buffer.erase(n);
    bool run = true;
    if (capture) {
      if (std::find(capture->begin(), capture->end(), n) != capture->end()) {
        (*captured)[n] = g;
        if (dynamic_cast<AccumulateGrad*>(n)) run = false;
      }
      if (!useful.count(n)) run = false;
    }
    std::vector<Tensor> out;
    if (run && g.defined()) out = n->apply(g);
    if (run && !retain_graph) n->release();
    for (size_t i = 0; i < n->next.size(); ++i) {
      const Edge& e = n->next[i];
      if (!e.node) continue;
      if (i < out.size() && out[i].defined()) add_grad(e.node, conform(out[i], n->inputs[i], *n));
      else keep[e.node.get()] = e.node;
      if (--deps[e.node.get()] == 0) ready.push_back(e.node.get());
    }
    keep.erase(n);
  }
}

}  // namespace

SavedTensor SavedTensor::input(const Tensor& t) {
  SavedTensor s;
  s.data_ = t;
  s.version_ = t.defined() ? t.storage()->version() : 0;
  return s;
}

SavedTensor SavedTensor::output(const Tensor& t) {
  SavedTensor s;
  // The data without the history, and not as a view of t (either would hold the owning node).
  s.data_ = Tensor::make_view(t.storage(), t.sizes(), t.strides(), t.offset(), t.dtype());
  s.version_ = t.storage()->version();
  s.is_output_ = true;
  return s;
}

Tensor SavedTensor::unpack(const Node& owner) const {
  if (!data_.defined()) return data_;
  uint32_t now = data_.storage()->version();
  TIDE_CHECK(now == version_, "backward: a tensor that ", owner.name(),
             " saved for the gradient was modified by an in-place operation (its version was ", version_, ", now ",
             now, "); clone it before changing it in place, or use the out-of-place op");
  if (!is_output_ || !autograd::grad_enabled()) return data_;
  // create_graph: the saved output is connected to the node that produced it.
  Tensor t = Tensor::make_view(data_.storage(), data_.sizes(), data_.strides(), data_.offset(), data_.dtype());
  AutogradMeta& m = autograd::meta(t);
  m.requires_grad = true;
  m.grad_fn = std::const_pointer_cast<Node>(owner.shared_from_this());
  return t;
}

namespace autograd {

int add_post_accumulate_hook(const Tensor& leaf, PostAccumulateHook hook) {
  TIDE_CHECK(is_leaf(leaf), "register_post_accumulate_grad_hook: only leaf tensors accumulate gradients");
  static std::atomic<int> next{1};
  int handle = next.fetch_add(1);
  meta(leaf).post_accumulate_hooks.emplace_back(handle, std::move(hook));
  return handle;
}

void remove_post_accumulate_hook(const Tensor& leaf, int handle) {
  auto& m = leaf.impl()->autograd;
  if (!m) return;
  auto& hooks = m->post_accumulate_hooks;
  for (auto it = hooks.begin(); it != hooks.end(); ++it)
    if (it->first == handle) {
      hooks.erase(it);
      return;
    }
}

void queue_callback(std::function<void()> fn) {
  TIDE_CHECK(t_callbacks, "queue_callback: no backward pass is running on this thread");
  t_callbacks->push_back(std::move(fn));
}

bool grad_enabled() { return g_grad_enabled; }
void set_grad_enabled(bool on) { g_grad_enabled = on; }

AutogradMeta& meta(const Tensor& t) {
  auto& p = t.impl()->autograd;
  if (!p) p = std::make_shared<AutogradMeta>();
  return *p;
}

bool requires_grad(const Tensor& t) {
  const auto& m = t.impl()->autograd;
  return m && m->requires_grad;
}

bool is_leaf(const Tensor& t) {
  const auto& m = t.impl()->autograd;
  return !m || !m->grad_fn;
}

const std::shared_ptr<Node>& grad_fn(const Tensor& t) {
  static const std::shared_ptr<Node> none;
  const auto& m = t.impl()->autograd;
  return m ? m->grad_fn : none;
}

Tensor grad(const Tensor& t) {
  const auto& m = t.impl()->autograd;
  return m ? m->grad : Tensor();
}

void set_requires_grad(Tensor& t, bool on, const char* op) {
  if (on) {
    TIDE_CHECK(is_floating(t.dtype()), op, ": only floating-point tensors can require gradients, got ",
               dtype_name(t.dtype()));
  } else {
    TIDE_CHECK(is_leaf(t), op, ": a result of a recorded op always requires grad; use x:detach() to get a tensor without history");
  }
  if (!on && !t.impl()->autograd) return;
  meta(t).requires_grad = on;
}

void set_grad(Tensor& t, const Tensor& g) {
  if (g.defined()) {
    TIDE_CHECK(g.sizes() == t.sizes(), "grad: assigned gradient has shape ", g.sizes().str(),
               " but the tensor has shape ", t.sizes().str());
    TIDE_CHECK(g.dtype() == t.dtype(), "grad: assigned gradient has dtype ", dtype_name(g.dtype()),
               " but the tensor has dtype ", dtype_name(t.dtype()));
    TIDE_CHECK(g.device() == t.device(), "grad: assigned gradient is on ", g.device().str(), " but the tensor is on ",
               t.device().str());
  } else if (!t.impl()->autograd) {
    return;
  }
  meta(t).grad = g;
}

bool is_differentiable(const Tensor& t) {
  if (requires_grad(t)) return true;
  const auto& base = t.impl()->base;
  return base && base->autograd && base->autograd->requires_grad;
}

bool needs_recording(std::initializer_list<const Tensor*> inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor* t : inputs)
    if (t && t->defined() && is_differentiable(*t)) return true;
  return false;
}

bool needs_recording(const std::vector<Tensor>& inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && is_differentiable(t)) return true;
  return false;
}

void record(const char* op, Tensor& out, const std::vector<const Tensor*>& inputs, BackwardFn fn, bool view) {
  auto node = std::make_shared<FunctionNode>(op, std::move(fn));
  node->next.reserve(inputs.size());
  node->inputs.reserve(inputs.size());
  for (const Tensor* t : inputs) {
    bool differentiable = t && t->defined() && is_differentiable(*t);
    node->next.push_back({differentiable ? gradient_edge(*t) : nullptr});
    node->inputs.push_back(differentiable ? InputMeta{t->sizes(), t->dtype()} : InputMeta{});
  }
  // A fresh meta: `out` may alias an input's impl only if an op returned its input unchanged.
  if (out.impl()->autograd) out = ops::alias(out);
  AutogradMeta& m = meta(out);
  m.requires_grad = true;
  m.grad_fn = std::move(node);
  if (view) {
    const Tensor& base = *inputs.front();
    const auto& bm = base.impl()->autograd;
    m.view_base = bm->view_base ? bm->view_base : bm;
    m.base_generation = m.view_base->generation;
  }
}

InPlace::InPlace(Tensor& x, const char* op) : x_(x), op_(op) {
  const auto& m = x.impl()->autograd;
  TIDE_CHECK(!(m && m->requires_grad && !m->grad_fn), op, ": a leaf tensor that requires grad cannot be modified in place "
             "(do it under torch.no_grad(), or on a clone)");
  if (!x.impl()->base) {
    input_ = history_snapshot(x);
    return;
  }
  base_ = Tensor(x.impl()->base);
  const auto& bm = base_.impl()->autograd;
  TIDE_CHECK(!(bm && bm->requires_grad && !bm->grad_fn), op,
             ": a view of a leaf tensor that requires grad cannot be modified in place "
             "(do it under torch.no_grad(), or on a clone)");
  TIDE_CHECK(base_.is_contiguous(), op, ": writing in place into a view of a non-contiguous tensor while autograd ",
             "records it is not supported; make the tensor contiguous first");
  for (int d = 0; d < x.dim(); ++d)
    TIDE_CHECK(x.stride(d) != 0 || x.size(d) <= 1, op, ": cannot write in place into an expanded tensor (shape ",
               x.sizes().str(), ", dim ", d + 1, " has stride 0): several of its elements share memory");
  base_input_ = history_snapshot(base_);
  input_ = ag::as_strided(base_input_, x.sizes(), x.strides(), x.offset() - base_.offset());
}

void InPlace::commit(const Tensor& result) {
  TIDE_CHECK(result.sizes() == x_.sizes(), op_, ": the result has shape ", result.sizes().str(),
             ", which does not match the shape ", x_.sizes().str(), " of the tensor written in place");
  ops::check_can_cast(op_, result.dtype(), x_.dtype());
  Tensor r = ag::cast(result, x_.dtype());
  {
    GradModeGuard off(false);
    ops::copy_(x_, r);
  }
  // The tensor whose history changes: x itself, or the base of the view x.
  Tensor& owner = base_.defined() ? base_ : x_;
  Tensor value = base_.defined() ? ag::as_strided_scatter(base_input_, r, x_.strides(), x_.offset() - base_.offset()) : r;
  AutogradMeta& m = meta(owner);
  m.requires_grad = true;
  m.grad_fn = grad_fn(value);
  ++m.generation;
  if (base_.defined()) gradient_edge(x_);  // the view's history, derived from the new base
}

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
              bool create_graph, const char* op) {
  run_backward(roots, grads, retain_graph || create_graph, create_graph, op, nullptr, nullptr);
}

std::vector<Tensor> grad(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads,
                         const std::vector<Tensor>& inputs, bool retain_graph, bool create_graph, bool allow_unused,
                         const char* op) {
  std::vector<Node*> targets;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TIDE_CHECK(inputs[i].defined() && requires_grad(inputs[i]), op, ": input ", i + 1, " does not require grad");
    targets.push_back(gradient_edge(inputs[i]).get());
  }
  // Keep the accumulators of leaf inputs alive for the walk.
  std::vector<std::shared_ptr<Node>> hold;
  for (const Tensor& t : inputs) hold.push_back(gradient_edge(t));
  std::unordered_map<Node*, Tensor> captured;
  run_backward(roots, grads, retain_graph || create_graph, create_graph, op, &targets, &captured);
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto it = captured.find(targets[i]);
    if (it == captured.end() || !it->second.defined()) {
      TIDE_CHECK(allow_unused, op, ": input ", i + 1,
                 " was not used to compute the outputs; pass {allow_unused=true} to get nil for it");
      out.emplace_back();
      continue;
    }
    Tensor g = it->second;
    if (g.sizes() != inputs[i].sizes()) g = ag::sum_to(g, inputs[i].sizes(), op);
    out.push_back(g);
  }
  return out;
}

}  // namespace autograd
}  // namespace tide
