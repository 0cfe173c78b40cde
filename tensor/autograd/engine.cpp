// The autograd core: grad mode, per-tensor meta, recording, saved tensors, the in-place
// protocol, and the dependency-counted backward walk.
#include <atomic>
#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "../ops/creation.hpp"
#include "../ops/elementwise.hpp"
#include "../ops/shape.hpp"
#include "../overlap.hpp"
#include "../pool.hpp"
#include "../profiler/profiler.hpp"
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
  bool released() const override { return !fn; }
};

// Whether t is contiguous, covers its whole storage, and is the only way to its memory:
// nothing else holds t, its storage, or (for a view) its base. (A view of part of a larger
// buffer is copied: keeping the buffer alive for a small gradient would cost its memory.)
bool only_view_of_memory(const Tensor& t) {
  if (t.impl_ptr().use_count() != 1 || !t.is_contiguous() || t.offset() != 0 ||
      t.nbytes() != t.storage()->nbytes())
    return false;
  const auto& base = t.impl()->base;
  return base ? base.use_count() == 1 && base->storage == t.storage() && t.storage().use_count() == 2
              : t.storage().use_count() == 1;
}

// The node at the end of every path into a leaf: adds the incoming gradient to leaf.grad.
struct AccumulateGrad final : Node {
  std::shared_ptr<TensorImpl> leaf;
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> l) : leaf(std::move(l)) {}
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const Tensor& grad) override {
    AutogradMeta& m = *leaf->autograd;
    if (!m.grad.defined()) {
      // The first gradient becomes .grad itself when nothing else can see its memory (a
      // view of a result nothing else holds gives up its base); otherwise a copy, so that
      // accumulating into .grad later never writes into another tensor.
      if (autograd::grad_enabled() || (only_view_of_memory(grad) && !grad.impl()->base)) {
        m.grad = grad;
      } else if (only_view_of_memory(grad)) {
        m.grad = Tensor::make_view(grad.storage(), grad.sizes(), grad.strides(), grad.offset(), grad.dtype());
        m.grad.impl()->numpy = grad.impl()->numpy;
      } else {
        m.grad = grad.clone();
      }
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
  AutogradMeta* leaf_meta() override { return leaf->autograd.get(); }
};

std::shared_ptr<Node> accumulator_of(const Tensor& leaf) {
  AutogradMeta& m = autograd::meta(leaf);
  if (auto acc = m.accumulator.lock()) return acc;
  auto acc = std::allocate_shared<AccumulateGrad>(PoolAllocator<AccumulateGrad>(), leaf.impl_ptr());
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
  if (tm.retains_grad) tm.grad_fn->retained = t.impl()->autograd;
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
    snap.impl()->autograd = std::allocate_shared<AutogradMeta>(PoolAllocator<AutogradMeta>(),
        AutogradMeta{m.requires_grad, {}, m.grad_fn, m.accumulator, {}, 0, 0, {}, {}, false});
  }
  return snap;
}

// A gradient brought to the shape and dtype of the input it belongs to: broadcast dims are
// summed away (the reverse of broadcasting) and the dtype converted (a real input of a
// complex op gets the real part: dL/dx of dL/dx + i dL/dy).
Tensor conform(Tensor g, const InputMeta& in, const Node& node) {
  if (g.sizes() != in.sizes) g = ag::sum_to(g, in.sizes, node.name().c_str());
  if (is_complex(g.dtype()) && !is_complex(in.dtype)) g = ag::real(g);
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

// What the walk of a backward knows about one node.
struct NodeTask {
  int deps = 0;        // edges into the node from nodes that have not run yet
  bool useful = true;  // with capture: a captured node can be reached from it
  Tensor grad;         // the sum of the gradients that arrived so far
};

// The tasks of a walk by node: an open-addressing table in one allocation (a hash map made
// one allocation per node, and a backward of a small step has a few dozen nodes). A
// reference to a task stays valid until the next insertion.
class TaskTable {
 public:
  TaskTable() : slots_(16) {}
  // The task of n, and whether it was just created.
  std::pair<NodeTask*, bool> try_emplace(Node* n) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot& s = probe(n);
    if (s.node) return {&s.task, false};
    s.node = n;
    ++size_;
    return {&s.task, true};
  }
  // The task of a node the walk has seen.
  NodeTask& at(Node* n) {
    Slot& s = probe(n);
    TIDE_ASSERT(s.node == n);
    return s.task;
  }

 private:
  struct Slot {
    Node* node = nullptr;
    NodeTask task;
  };
  Slot& probe(Node* n) {
    const size_t mask = slots_.size() - 1;
    size_t i = (reinterpret_cast<uintptr_t>(n) >> 4) * 0x9E3779B97F4A7C15ull >> 32 & mask;
    while (slots_[i].node && slots_[i].node != n) i = (i + 1) & mask;
    return slots_[i];
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (Slot& s : old)
      if (s.node) probe(s.node) = std::move(s);
  }
  std::vector<Slot> slots_;  // a power of two, at most half full
  size_t size_ = 0;
};

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

// Every walk is a loop over explicit stacks: a graph's length costs heap, never call depth.
// The nodes stay alive throughout: the roots' nodes are held in `starts`, every other node
// by an edge of a node that reaches it (running a node drops its saved tensors, never its
// edges).
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
  // A depth-first walk from the roots counts the edges into each node. It finishes a node
  // after every node below it, so with capture, `finished` lists each node after all the
  // nodes it reaches: whether it leads to a captured node is then known from its inputs.
  TaskTable tasks;
  std::vector<std::pair<Node*, size_t>> path;  // the walk's current path: node, next edge
  path.reserve(16);
  std::vector<Node*> finished;
  for (auto& s : starts) {
    if (!tasks.try_emplace(s.first.get()).second) continue;
    path.emplace_back(s.first.get(), 0);
    while (!path.empty()) {
      auto [n, i] = path.back();
      if (i == n->next.size()) {
        if (capture) finished.push_back(n);
        path.pop_back();
        continue;
      }
      path.back().second = i + 1;
      Node* input = n->next[i].node.get();
      if (!input) continue;
      auto [task, fresh] = tasks.try_emplace(input);
      ++task->deps;
      if (fresh) path.emplace_back(input, 0);
    }
  }
  std::unordered_set<Node*> targets;
  if (capture) {
    targets.insert(capture->begin(), capture->end());
    for (Node* n : finished) {
      bool useful = targets.count(n) > 0;
      for (const Edge& e : n->next)
        if (e.node && tasks.at(e.node.get()).useful) useful = true;
      tasks.at(n).useful = useful;
    }
  }

  autograd::GradModeGuard mode(create_graph);
  auto add_grad = [&](NodeTask& task, const Tensor& g) {
    if (!task.grad.defined())
      task.grad = g;
    else
      task.grad = create_graph ? ag::binary(BinaryOp::Add, task.grad, g) : ops::binary(BinaryOp::Add, task.grad, g);
  };
  std::vector<Node*> ready;
  ready.reserve(16);
  for (auto& s : starts) add_grad(tasks.at(s.first.get()), s.second);
  for (auto& s : starts)
    if (tasks.at(s.first.get()).deps == 0 && std::find(ready.begin(), ready.end(), s.first.get()) == ready.end())
      ready.push_back(s.first.get());
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    NodeTask& task = tasks.at(n);
    Tensor g = std::move(task.grad);
    bool run = task.useful;
    if (capture && targets.count(n)) {
      (*captured)[n] = g;
      // A target runs (with its hooks) only on the way to another target, as in PyTorch.
      run = false;
      for (const Edge& e : n->next)
        if (e.node && tasks.at(e.node.get()).useful) run = true;
    }
    std::vector<Tensor> out;
    if (run && g.defined()) {
      // Under torch.profiler each node is an event, named as grad_fn prints it.
      profiler::Range range(profiler::recording() ? profiler::begin(n->name(), profiler::Kind::Backward) : -1);
      if (range.token() >= 0 && profiler::options().record_shapes) profiler::set_shapes(range.token(), {g.sizes().vec()});
      out = n->apply(autograd::run_tensor_hooks(*n, std::move(g)));
    }
    if (run && !retain_graph) n->release();
    for (size_t i = 0; i < n->next.size(); ++i) {
      Node* input = n->next[i].node.get();
      if (!input) continue;
      NodeTask& to = tasks.at(input);
      if (i < out.size() && out[i].defined()) add_grad(to, conform(out[i], n->inputs[i], *n));
      if (--to.deps == 0) ready.push_back(input);
    }
  }
}

// Nodes whose last reference was dropped while another node was being destroyed, waiting
// to be destroyed in turn, and whether this thread is already destroying nodes.
thread_local std::vector<std::shared_ptr<Node>> t_orphans;
constinit thread_local bool t_freeing_nodes = false;

// Drops a reference to a node. A node owns its input nodes (through `next`, and through the
// histories of the tensors it saved), so destroying each inside its owner's destructor
// would recurse once per node of a chain and overflow the stack on a long one. As PyTorch's
// deleteNode does, a node whose last reference goes while another is being destroyed is
// queued instead, and the outermost drop destroys the queue in a loop: freeing a graph of
// any length takes constant stack depth.
void drop_node(std::shared_ptr<Node>& node) {
  if (!node) return;
  if (node.use_count() != 1) {
    node.reset();
    return;
  }
  if (t_freeing_nodes) {
    t_orphans.push_back(std::move(node));
    return;
  }
  t_freeing_nodes = true;
  node.reset();
  while (!t_orphans.empty()) {
    std::shared_ptr<Node> n = std::move(t_orphans.back());
    t_orphans.pop_back();
    n.reset();
  }
  t_freeing_nodes = false;
}

}  // namespace

Node::~Node() {
  for (Edge& e : next) drop_node(e.node);
}

AutogradMeta::~AutogradMeta() { drop_node(grad_fn); }

SavedTensor SavedTensor::input(const Tensor& t) {
  SavedTensor s;
  s.data_ = t;
  s.storage_ = t.defined() ? t.storage().get() : nullptr;
  s.version_ = t.defined() ? t.storage()->version() : 0;
  return s;
}

SavedTensor SavedTensor::output(const Tensor& t) {
  SavedTensor s;
  // The data without the history, and not as a view of t (either would hold the owning node).
  s.data_ = Tensor::make_view(t.storage(), t.sizes(), t.strides(), t.offset(), t.dtype());
  s.storage_ = t.storage().get();
  s.version_ = t.storage()->version();
  s.is_output_ = true;
  return s;
}

Tensor SavedTensor::unpack(const Node& owner) const {
  if (!data_.defined()) return data_;
  TIDE_CHECK(data_.storage().get() == storage_, "backward: a tensor that ", owner.name(),
             " saved for the gradient was given new data (x.data = ...) after it was saved; assign .data only "
             "when no graph that used the tensor is waiting for backward");
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
  if (!p) p = std::allocate_shared<AutogradMeta>(PoolAllocator<AutogradMeta>());
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
    TIDE_CHECK(is_floating(t.dtype()) || is_complex(t.dtype()), op,
               ": only floating-point and complex tensors can require gradients, got ", dtype_name(t.dtype()));
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

namespace {

// The ops whose gradient formulas hold for complex tensors (PyTorch's convention: the
// gradient of a real loss L with respect to z = x + iy is dL/dx + i dL/dy, so a product's
// formula takes the other factor's conjugate). Sorted, for the binary search.
bool complex_formula(std::string_view op) {
  static constexpr std::string_view kOps[] = {
      "abs", "add", "alias", "as_strided", "as_strided_backward", "cat", "clone", "complex", "conj", "div",
      "expand", "fft.fft", "fft.fft2", "fft.fftn", "fft.hfft", "fft.hfft2", "fft.hfftn", "fft.ifft",
      "fft.ifft2", "fft.ifftn", "fft.ihfft", "fft.ihfft2", "fft.ihfftn", "fft.irfft", "fft.irfft2",
      "fft.irfftn", "fft.rfft", "fft.rfft2", "fft.rfftn", "flatten", "flip", "flip_view", "imag", "mean", "movedim",
      "mul", "narrow", "neg", "permute", "real", "reshape", "select", "slice", "slice_backward", "squeeze", "stack",
      "sub", "sum", "t", "to", "transpose", "unflatten", "unsqueeze", "view", "view_as_complex", "view_as_real",
  };
  static_assert(std::is_sorted(std::begin(kOps), std::end(kOps)));
  return std::binary_search(std::begin(kOps), std::end(kOps), op);
}

// Refuses an op without a complex formula when a complex tensor enters or leaves the graph.
void check_complex_formula(const char* op, const Tensor& out, const std::vector<const Tensor*>& inputs) {
  bool complex = is_complex(out.dtype());
  for (const Tensor* t : inputs) complex = complex || (t && t->defined() && is_complex(t->dtype()) && is_differentiable(*t));
  if (complex && !complex_formula(op)) [[unlikely]]
    TIDE_FAIL(op, ": has no gradient formula for complex tensors in tide (an input requires grad; detach() it first)");
}

}  // namespace

void record(const char* op, Tensor& out, const std::vector<const Tensor*>& inputs, BackwardFn fn, bool view) {
  check_complex_formula(op, out, inputs);
  auto node = std::allocate_shared<FunctionNode>(PoolAllocator<FunctionNode>(), op, std::move(fn));
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
  check_no_internal_overlap(op, x);
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
  // x.real, view_as_real(z), x:view(dtype): the base's history cannot take x's elements.
  TIDE_CHECK(base_.dtype() == x.dtype(), op, ": writing in place into a ", dtype_name(x.dtype()), " view of a ",
             dtype_name(base_.dtype()), " tensor while autograd records it is not supported; write into a clone");
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
  if (m.retains_grad && m.grad_fn) m.grad_fn->retained.reset();  // retain_grad follows the new value
  m.grad_fn = grad_fn(value);
  if (m.retains_grad) m.grad_fn->retained = owner.impl()->autograd;
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

HookHandle add_hook(const Tensor& t, std::shared_ptr<GradHook> h, const char* op) {
  TIDE_CHECK(is_differentiable(t), op, ": cannot register a hook on a tensor that does not require grad");
  std::shared_ptr<Node> edge = gradient_edge(t);
  HookHandle handle;
  handle.hook = h;
  if (edge->leaf_meta()) {
    handle.leaf = t.impl()->autograd;
    edge->leaf_meta()->hooks.push_back(std::move(h));
  } else {
    handle.node = edge;
    edge->pre_hooks.push_back(std::move(h));
    edge->hooked = true;
  }
  return handle;
}

void remove_hook(const HookHandle& h) {
  std::shared_ptr<GradHook> hook = h.hook.lock();
  if (!hook) return;
  std::shared_ptr<AutogradMeta> leaf = h.leaf.lock();
  std::shared_ptr<Node> node = h.node.lock();
  GradHooks* hooks = leaf ? &leaf->hooks : node ? &node->pre_hooks : nullptr;
  if (hooks) hooks->erase(std::remove(hooks->begin(), hooks->end(), hook), hooks->end());
}

void retain_grad(const Tensor& t, const char* op) {
  TIDE_CHECK(is_differentiable(t), op, ": cannot retain the gradient of a tensor that does not require grad");
  std::shared_ptr<Node> edge = gradient_edge(t);
  if (edge->leaf_meta()) return;  // a leaf keeps its gradient anyway
  AutogradMeta& m = meta(t);
  if (m.retains_grad) return;  // already retained: keeps its place among the hooks
  m.retains_grad = true;
  edge->retained = t.impl()->autograd;
  edge->retain_before_hooks = !edge->hooked;
}

void set_data(Tensor& t, const Tensor& data, const char* op) {
  TIDE_CHECK(!requires_grad(t) || is_floating(data.dtype()) || is_complex(data.dtype()), op,
             ": a tensor that requires grad must keep a floating-point or complex dtype, got ", dtype_name(data.dtype()));
  TensorImpl& impl = *t.impl();
  const TensorImpl& src = *data.impl();
  impl.storage = src.storage;
  impl.sizes = src.sizes;
  impl.strides = src.strides;
  impl.offset = src.offset;
  impl.dtype = src.dtype;
  impl.base = nullptr;
}

Tensor run_tensor_hooks(Node& n, Tensor grad) {
  AutogradMeta* leaf = n.leaf_meta();
  if ((leaf ? leaf->hooks : n.pre_hooks).empty() && n.retained.expired()) return grad;
  GradHooks hooks = leaf ? leaf->hooks : n.pre_hooks;  // a copy: a hook may add hooks
  auto retain = [&] {
    if (auto m = n.retained.lock()) {
      // A copy, so that changing the retained .grad in place never changes the gradient.
      m->grad = m->grad.defined() ? ag::binary(BinaryOp::Add, m->grad, grad) : ag::clone(grad);
    }
  };
  if (n.retain_before_hooks) retain();
  for (const auto& h : hooks) {
    Tensor r = (*h)(grad);
    if (!r.defined()) continue;
    TIDE_CHECK(r.sizes() == grad.sizes(), "register_hook: a hook returned a gradient of shape ", r.sizes().str(),
               " for a gradient of shape ", grad.sizes().str(), " (a hook may not change the shape)");
    TIDE_CHECK(r.dtype() == grad.dtype() && r.device() == grad.device(), "register_hook: a hook returned a ",
               dtype_name(r.dtype()), " gradient on ", r.device().str(), " for a ", dtype_name(grad.dtype()),
               " gradient on ", grad.device().str(), " (a hook may not change the dtype or device)");
    grad = r;
  }
  if (!n.retain_before_hooks) retain();
  return grad;
}

}  // namespace autograd
}  // namespace tide
