// TensorIter construction (broadcast, allocate, coalesce) and traversal.
#include "iterator.hpp"

#include <algorithm>

#include "overlap.hpp"
#include "parallel.hpp"

namespace tide {

Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b) {
  int n = std::max(a.size(), b.size());
  Dims out(n, 1);
  for (int i = 0; i < n; ++i) {
    int ia = a.size() - n + i, ib = b.size() - n + i;
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    TIDE_CHECK(sa == sb || sa == 1 || sb == 1, op, ": shapes ", a.str(), " and ", b.str(),
               " cannot be broadcast (", sa, " vs ", sb, " in dim ", i + 1, ")");
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

TensorIter TensorIter::build(const char* op, Tensor& out, DType out_dtype,
                             std::initializer_list<const Tensor*> input_list) {
  TensorIter it;
  TIDE_ASSERT(int(input_list.size()) + 1 <= kMaxOperands);
  const int ninputs = int(input_list.size());
  const Tensor* const* inputs = input_list.begin();
  const Tensor* copied[kMaxOperands];  // inputs, some replaced by copies (rarely needed)
  if (out.defined()) check_writable(op, out);  // before the flat path, which skips the overlap test
  if (out.defined())
    for (int i = 0; i < ninputs; ++i)
      if (needs_copy(out, *inputs[i], Reads::Elementwise)) [[unlikely]] {
        if (inputs != copied) {
          std::copy(input_list.begin(), input_list.end(), copied);
          inputs = copied;
        }
        copied[i] = &it.copy_input(i, *copied[i]);
      }
  // The flat path takes a contiguous output only, which has no elements sharing an address.
  if (ninputs > 0 && it.try_flat(op, out, out_dtype, inputs, ninputs)) return it;
  Dims shape;
  bool first = true;
  Device device;
  for (int i = 0; i < ninputs; ++i) {
    const Tensor* t = inputs[i];
    if (first) {
      shape = t->sizes();
      device = t->device();
      first = false;
    } else {
      if (t->sizes() != shape) shape = broadcast_shapes(op, shape, t->sizes());
      TIDE_CHECK(t->device() == device, op, ": expected all tensors on one device, got ",
                 device.str(), " and ", t->device().str());
    }
  }
  if (first && out.defined()) {  // no inputs (fill_): the output's own shape
    shape = out.sizes();
    device = out.device();
  }
  if (!out.defined()) {
    out = Tensor::empty(shape, out_dtype, device, op);
  } else {
    if (!first) check_no_internal_overlap(op, out);  // with no inputs: a fill, one value everywhere
    // Inputs may broadcast up to the output (copy_, in-place ops), never the output grow.
    if (!first && out.sizes() != shape) {
      Dims b = broadcast_shapes(op, out.sizes(), shape);
      TIDE_CHECK(b == out.sizes(), op, ": output of shape ", out.sizes().str(),
                 " does not match the broadcast shape ", shape.str());
      shape = b;
    }
    TIDE_CHECK(out.device() == device || first, op, ": output on ", out.device().str(),
               " but inputs on ", device.str());
  }
  it.device_ = out.device();

  // Per operand, byte strides over the broadcast shape, innermost dim first.
  const Tensor* ops[kMaxOperands];
  ops[0] = &out;
  int k = 1;
  for (int i = 0; i < ninputs; ++i) ops[k++] = inputs[i];
  it.ntensors_ = k;
  int nd = shape.size();
  int64_t st[kMaxOperands][kMaxDims];
  for (int o = 0; o < k; ++o) {
    const Tensor& t = *ops[o];
    int64_t item = int64_t(t.itemsize());
    int tn = t.dim();
    for (int d = 0; d < nd; ++d) {
      int td = tn - nd + d;  // aligned from the right
      int64_t s = (td >= 0 && t.size(td) != 1) ? t.stride(td) * item : 0;
      st[o][nd - 1 - d] = s;
    }
    it.data_[o] = static_cast<char*>(t.address());
  }
  it.numel_ = shape_numel(shape, op);
  if (it.numel_ == 0) {  // nothing to visit (and an empty shape's sizes may multiply past int64)
    it.ndim_ = 1;
    it.shape_[0] = 0;
    for (int o = 0; o < k; ++o) it.strides_[o][0] = 0;
    return it;
  }
  // Coalesce: drop size-1 dims, merge dim d+1 into d when every operand is contiguous across them.
  int m = 0;
  for (int d = 0; d < nd; ++d) {
    int64_t size = shape[nd - 1 - d];
    if (size == 1) continue;
    if (m > 0) {
      bool merge = true;
      for (int o = 0; o < k && merge; ++o)
        merge = st[o][d] == it.strides_[o][m - 1] * it.shape_[m - 1];
      if (merge) {
        it.shape_[m - 1] *= size;
        continue;
      }
    }
    it.shape_[m] = size;
    for (int o = 0; o < k; ++o) it.strides_[o][m] = st[o][d];
    ++m;
  }
  if (m == 0) {  // a single element (or 0-dim)
    it.shape_[0] = 1;
    for (int o = 0; o < k; ++o) it.strides_[o][0] = 0;
    m = 1;
  }
  it.ndim_ = m;
  return it;
}

// A copy of input i, which the iterator keeps alive: for an input sharing memory with the
// output other than element for element (x:add_(x:t())).
const Tensor& TensorIter::copy_input(int i, const Tensor& input) {
  if (!copies_) copies_ = std::make_shared<Tensor[]>(kMaxOperands);
  copies_[i] = input.clone();
  return copies_[i];
}

// The common case needs no broadcasting or coalescing: every operand contiguous with one
// shape (and on the CPU). Then the iteration is one flat dim.
bool TensorIter::try_flat(const char* op, Tensor& out, DType out_dtype, const Tensor* const* inputs, int ninputs) {
  const Tensor& first = *inputs[0];
  const Device device = first.device();
  for (int i = 0; i < ninputs; ++i) {
    const Tensor* t = inputs[i];
    if (!t->is_contiguous() || t->sizes() != first.sizes() || t->device() != device) return false;
  }
  if (out.defined() && (!out.is_contiguous() || out.sizes() != first.sizes() || out.device() != device))
    return false;
  if (!out.defined()) out = Tensor::empty(first.sizes(), out_dtype, device, op);
  device_ = device;
  int k = 0;
  numel_ = out.numel();
  shape_[0] = numel_ > 0 ? numel_ : 0;
  strides_[k][0] = int64_t(out.itemsize());
  data_[k++] = static_cast<char*>(out.address());
  for (int i = 0; i < ninputs; ++i) {
    strides_[k][0] = int64_t(inputs[i]->itemsize());
    data_[k++] = static_cast<char*>(inputs[i]->address());
  }
  ntensors_ = k;
  ndim_ = 1;
  return true;
}

void TensorIter::serial_for(int64_t begin, int64_t end, const Loop& loop) const {
  if (loop_sink_) return take_loop(loop);
  capture::note_host_access();
  if (begin >= end) return;
  if (ndim_ == 1) {  // flat: one call
    char* ptrs[kMaxOperands];
    int64_t inner[kMaxOperands];
    for (int o = 0; o < ntensors_; ++o) {
      ptrs[o] = data_[o] + begin * strides_[o][0];
      inner[o] = strides_[o][0];
    }
    loop(ptrs, inner, end - begin);
    return;
  }
  int64_t idx[kMaxDims];
  int64_t rem = begin;
  for (int d = 0; d < ndim_; ++d) {
    idx[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  char* ptrs[kMaxOperands];
  int64_t inner[kMaxOperands];
  for (int o = 0; o < ntensors_; ++o) inner[o] = strides_[o][0];
  while (begin < end) {
    for (int o = 0; o < ntensors_; ++o) {
      char* p = data_[o];
      for (int d = 0; d < ndim_; ++d) p += idx[d] * strides_[o][d];
      ptrs[o] = p;
    }
    int64_t n = std::min(shape_[0] - idx[0], end - begin);
    loop(ptrs, inner, n);
    begin += n;
    idx[0] += n;
    for (int d = 0; d + 1 < ndim_ && idx[d] == shape_[d]; ++d) {
      idx[d] = 0;
      ++idx[d + 1];
    }
  }
}

void TensorIter::for_each(const Loop& loop, int64_t grain) const {
  if (loop_sink_) return take_loop(loop);
  if (numel_ == 0) return;
  if (grain < 0) grain = pointwise_grain(numel_);
  if (numel_ < grain) {
    serial_for(0, numel_, loop);
    return;
  }
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { serial_for(b, e, loop); });
}

}  // namespace tide
