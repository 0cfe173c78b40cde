// TensorIter: broadcasting, output allocation and dimension coalescing done once, so that
// kernels are scalar functors run over inner loops (contiguous where the layout allows).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "parallel.hpp"
#include "tensor.hpp"

namespace tide {

class TensorIter {
 public:
  static constexpr int kMaxOperands = 5;

  // Operand 0 is the output. If `out` is undefined it is allocated with the broadcast shape
  // and `out_dtype`; if defined, its shape must equal the broadcast shape (in-place / out=).
  // Inputs must already have the dtypes the kernel expects.
  // A given output is written elementwise while the inputs are read (tensor/overlap.hpp): it
  // may not have elements sharing one address ("<op>: unsupported operation: ..."; only with
  // no inputs, a fill, which writes one value everywhere, may it), and an input sharing
  // memory with it other than element for element is read from a copy the iterator holds.
  static TensorIter build(const char* op, Tensor& out, DType out_dtype,
                          std::initializer_list<const Tensor*> inputs);

  int ntensors() const { return ntensors_; }
  int ndim() const { return ndim_; }
  int64_t numel() const { return numel_; }
  const int64_t* shape() const { return shape_; }            // innermost first, coalesced
  const int64_t* strides(int operand) const { return strides_[operand]; }  // bytes
  char* data(int operand) const { return data_[operand]; }
  // The device every operand lives on: the op hands the iterator to that device's backend.
  Device device() const { return device_; }
  // The inner loop: data pointers of all operands, their byte strides along the inner
  // dim, and the number of elements.
  using Loop = std::function<void(char** data, const int64_t* strides, int64_t n)>;
  // A copy whose for_each hands the kernel's inner loop to *sink (counting the calls in
  // *calls) instead of running it: a fused replay of torch.compile runs that loop on chunks
  // of its own (tensor/capture/). The copy's data pointers are null: a kernel given it must
  // reach memory only through its loop (every pointwise kernel of the CPU backend does).
  TensorIter loop_taker(Loop* sink, int* calls) const {
    TensorIter t = *this;
    for (int o = 0; o < ntensors_; ++o) t.data_[o] = nullptr;
    t.loop_sink_ = sink;
    t.loop_sink_calls_ = calls;
    return t;
  }
  // Runs `loop` over every element, split across threads when numel >= grain (by default
  // pointwise_grain's); for backends whose memory the host addresses (the CPU's, and the
  // stand-in device of the tests). A flat iteration too small to split (every small op)
  // calls the loop directly, with no std::function in between.
  template <typename F>
  void for_each(const F& loop, int64_t grain = -1) const {
    if (loop_sink_) [[unlikely]]
      return take_loop(Loop(loop));
    capture::note_host_access();  // (inside a device-table call it is the call's own work)
    if (ndim_ == 1 && numel_ > 0 && numel_ < (grain < 0 ? kAwakeParallelMin : grain)) {
      char* ptrs[kMaxOperands] = {};  // (only ntensors_ entries used; initialised for the compiler)
      int64_t inner[kMaxOperands] = {};
      for (int o = 0; o < ntensors_; ++o) ptrs[o] = data_[o], inner[o] = strides_[o][0];
      loop(ptrs, inner, numel_);
      return;
    }
    for_each(Loop(loop), grain);
  }
  void for_each(const Loop& loop, int64_t grain = -1) const;
  // The same over the linear element range [begin, end) on the calling thread.
  void serial_for(int64_t begin, int64_t end, const Loop& loop) const;

 private:
  bool try_flat(const char* op, Tensor& out, DType out_dtype, const Tensor* const* inputs, int ninputs);
  const Tensor& copy_input(int i, const Tensor& input);
  void take_loop(Loop loop) const {
    *loop_sink_ = std::move(loop);
    ++*loop_sink_calls_;
  }

  int ntensors_ = 0;
  int ndim_ = 0;
  int64_t numel_ = 0;
  int64_t shape_[kMaxDims];
  int64_t strides_[kMaxOperands][kMaxDims];
  char* data_[kMaxOperands];
  Device device_;
  std::shared_ptr<Tensor[]> copies_;  // inputs that overlap the output, copied (rarely any;
                                      // shared by the copies torch.compile records)
  Loop* loop_sink_ = nullptr;  // see loop_taker
  int* loop_sink_calls_ = nullptr;
};

// The broadcast shape of two shapes (NumPy rules); throws "<op>: shapes A and B cannot be
// broadcast" otherwise.
Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b);

}  // namespace tide
