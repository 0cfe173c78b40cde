// Reverse-mode automatic differentiation: the graph that differentiable ops record, grad
// mode, saved tensors checked by version, and the engine that runs backward.
//
// A tensor that requires grad carries an AutogradMeta. A leaf (made by the user) has no
// grad_fn and receives its gradient in `grad`; a result of a recorded op has grad_fn, the
// Node that maps the gradient of that result to the gradients of the op's inputs. Every
// node has exactly one output (ops with several outputs record one node per differentiable
// output), which keeps the engine a plain dependency-counted walk.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../tensor.hpp"

namespace tide {

struct Node;

// A function of a gradient that runs when the gradient reaches its tensor's node, before the
// node uses it (x:register_hook). Returns the gradient to use instead, or an undefined
// tensor to keep it. The engine sees only this interface: a hook written in Lua is an
// object of bindings/ that holds a reference to the Lua function.
struct GradHook {
  virtual ~GradHook() = default;
  virtual Tensor operator()(const Tensor& grad) = 0;
};
using GradHooks = std::vector<std::shared_ptr<GradHook>>;

// Where an input's gradient goes: the node that produced the input, or the accumulator of a
// leaf (a null node: that input needs no gradient).
struct Edge {
  std::shared_ptr<Node> node;
};

// Called after a backward pass has accumulated a leaf's gradient into its grad.
using PostAccumulateHook = std::function<void(const Tensor& leaf)>;

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;                        // leaves: the accumulated gradient
  std::shared_ptr<Node> grad_fn;      // null for leaves
  std::weak_ptr<Node> accumulator;    // leaves: the node that accumulates into grad
  // A view's history records which generation of its base's history it was derived from:
  // when the base is rewritten in place afterwards, the view's history is derived again.
  std::shared_ptr<AutogradMeta> view_base;
  uint32_t base_generation = 0;
  uint32_t generation = 0;            // bumped when an in-place op rewrites this tensor's history
  std::vector<std::pair<int, PostAccumulateHook>> post_accumulate_hooks;  // leaves: by handle
  GradHooks hooks;                    // leaves: the tensor hooks, run before accumulation
  bool retains_grad = false;          // non-leaves: x:retain_grad() keeps the gradient in grad
  ~AutogradMeta();                    // frees a long history without recursion (engine.cpp)
};

// Shape and dtype of an op's input, so that the engine can reduce a broadcast gradient to
// the input's shape and convert it to the input's dtype.
struct InputMeta {
  Dims sizes;
  DType dtype = DType::Float32;
};

struct Node : std::enable_shared_from_this<Node> {
  std::vector<Edge> next;          // one per input of the op
  std::vector<InputMeta> inputs;   // the same length as next
  GradHooks pre_hooks;             // the hooks of the (non-leaf) tensor this node produced
  std::weak_ptr<AutogradMeta> retained;  // that tensor's meta when it retains its gradient
  // PyTorch 1.13 runs a tensor's hooks as one group, placed where its first hook was
  // registered, and retain_grad as a hook of its own: the gradient is retained before the
  // hooks when no hook had been registered by then (even one removed since), after them
  // otherwise.
  bool hooked = false;             // a hook was registered on this node
  bool retain_before_hooks = false;
  // Frees the nodes only this one kept alive without recursion, so that dropping a graph of
  // any length (a loop of a million ops) takes constant stack depth: see engine.cpp.
  virtual ~Node();
  // "MulBackward" for a node recorded by mul.
  virtual std::string name() const = 0;
  // Gradients of the inputs (undefined: none) from the gradient of the output.
  virtual std::vector<Tensor> apply(const Tensor& grad) = 0;
  // Drops what was saved for backward (after a backward without retain_graph).
  virtual void release() {}
  // Whether release() ran: a backward through this node is an error from then on.
  virtual bool released() const { return false; }
  // The meta of the leaf this node accumulates into (null: not an accumulator).
  virtual AutogradMeta* leaf_meta() { return nullptr; }
  bool needs_grad(size_t input) const { return input < next.size() && next[input].node != nullptr; }
};

// A tensor an op saved for its backward, with the storage version it had then: unpacking it
// after an in-place change is an error naming the op. A saved output does not hold its own
// node (that would be a cycle); unpack rebuilds its history from the node that owns it.
class SavedTensor {
 public:
  SavedTensor() = default;
  static SavedTensor input(const Tensor& t);
  static SavedTensor output(const Tensor& t);
  bool defined() const { return data_.defined(); }
  Tensor unpack(const Node& owner) const;

 private:
  Tensor data_;
  const void* storage_ = nullptr;  // data_'s storage when saved (x.data = y swaps it)
  uint32_t version_ = 0;
  bool is_output_ = false;
};

// Grad mode: whether ops record. Thread-local, on by default.
namespace autograd {

bool grad_enabled();
void set_grad_enabled(bool on);

// Sets grad mode for a scope and restores the previous mode.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

// Per-tensor properties.
bool requires_grad(const Tensor& t);
bool is_leaf(const Tensor& t);                 // no grad_fn
const std::shared_ptr<Node>& grad_fn(const Tensor& t);  // null for leaves
Tensor grad(const Tensor& t);                  // undefined when none
// Only floating-point tensors may require grad; a non-leaf can not stop requiring it.
void set_requires_grad(Tensor& t, bool on, const char* op = "requires_grad_");
void set_grad(Tensor& t, const Tensor& g);     // undefined g clears it
// The meta of t, created if absent.
AutogradMeta& meta(const Tensor& t);

// True when grad mode is on and any of these (possibly undefined) tensors requires grad.
bool needs_recording(std::initializer_list<const Tensor*> inputs);
bool needs_recording(const std::vector<Tensor>& inputs);

// The function a differentiable op records: gradients of its inputs from the gradient of
// its output. It runs with grad mode on only under create_graph, so formulas written with
// differentiable ops give higher-order gradients.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad, const Node& node)>;

// Makes `out` the result of a new node of `op` over `inputs` (null or undefined entries and
// inputs that are not differentiable get no edge). `view` marks out as a view of inputs[0].
// Call only when needs_recording(inputs).
void record(const char* op, Tensor& out, const std::vector<const Tensor*>& inputs, BackwardFn fn,
            bool view = false);

// True when t takes part in recording: it requires grad, or it is a view of a tensor that
// does (its gradient then flows to that base, even if the view was taken before).
bool is_differentiable(const Tensor& t);

// The in-place protocol for differentiable ops. `x` is about to be overwritten by `op`
// while autograd records: the constructor checks that it may be (not a leaf that requires
// grad, nor a view of one) and provides input(), a differentiable stand-in for x's old
// value; commit(result) writes the result into x and makes it x's history. For a view, the
// history of its base is rewritten (the base's new value is the old one with the view's
// elements replaced), and the view's own history is derived from the base again.
class InPlace {
 public:
  InPlace(Tensor& x, const char* op);
  const Tensor& input() const { return input_; }
  void commit(const Tensor& result);

 private:
  Tensor& x_;
  const char* op_;
  Tensor input_;
  Tensor base_, base_input_;  // for a view: its base, and the stand-in for the base's old value
};

// Hooks on a leaf that run, in the order added, each time backward has accumulated its
// gradient (PyTorch's register_post_accumulate_grad_hook); the DDP reducer starts its
// all-reduces from them. Returns a handle for remove_post_accumulate_hook.
int add_post_accumulate_hook(const Tensor& leaf, PostAccumulateHook hook);
void remove_post_accumulate_hook(const Tensor& leaf, int handle);
// Queues fn to run once the backward pass now running has finished its walk (PyTorch's
// queue_callback); called from a hook. Not run when the pass fails.
void queue_callback(std::function<void()> fn);
// x:register_hook(h): h sees every gradient computed for t (t must require grad). A leaf's
// hooks live in its meta and run before accumulation; a non-leaf's run at its grad_fn, so a
// hook added before an in-place change of t sees the gradient of t's old value, as in
// PyTorch. Gradients that torch.autograd.grad returns for t are taken before t's hooks run.
// Returns where the hook went, for remove_hook (handle:remove()).
struct HookHandle {
  std::weak_ptr<AutogradMeta> leaf;  // the leaf whose hooks hold it, or
  std::weak_ptr<Node> node;          // the node whose pre_hooks hold it
  std::weak_ptr<GradHook> hook;
};
HookHandle add_hook(const Tensor& t, std::shared_ptr<GradHook> h, const char* op = "register_hook");
void remove_hook(const HookHandle& h);
// x:retain_grad(): a non-leaf t keeps the gradients backward computes for it in its grad
// (accumulating; before or after its hooks as PyTorch 1.13 orders them, see Node); a no-op
// on a leaf.
void retain_grad(const Tensor& t, const char* op = "retain_grad");
// x.data = y: x takes y's storage, shape, strides and dtype (sharing y's memory, not as a
// view) and keeps its own autograd identity: requires_grad, history, grad and hooks.
void set_data(Tensor& t, const Tensor& data, const char* op = "data");

// The gradient a node passes on after the hooks of its tensor (and retain_grad) saw it.
Tensor run_tensor_hooks(Node& n, Tensor grad);

// Runs backward from `roots` with gradients `grads` (undefined: ones for a one-element root).
// Gradients accumulate into leaves' grad. Without retain_graph the graph's saved tensors are
// released, so a second backward through it is an error.
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
              bool create_graph, const char* op = "backward");
// torch.autograd.grad: the gradients of roots with respect to `inputs`, returned instead of
// accumulated. An input the roots do not depend on is an error unless allow_unused (then
// its entry is undefined).
std::vector<Tensor> grad(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads,
                         const std::vector<Tensor>& inputs, bool retain_graph, bool create_graph,
                         bool allow_unused, const char* op = "autograd.grad");

}  // namespace autograd
}  // namespace tide
