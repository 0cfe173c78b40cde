// Memory overlap of tensors, for every op that writes (in place, out=): the one place that
// decides whether a written tensor has elements sharing one address (an expanded view:
// refused, as PyTorch does) and whether an input shares memory with the written tensor
// (then the op reads it from a copy, giving NumPy's answer). Cheapest tests first:
// different storages, then disjoint address ranges, only then the exact test.
#pragma once
#include "tensor.hpp"

namespace tide {

enum class MemOverlap : uint8_t {
  None,     // no byte in common
  Same,     // the same elements in the same order: same address, sizes and strides
  Partial,  // they share memory some other way (or may: the exact test gave up)
};

namespace detail {
MemOverlap view_overlap(const Tensor& a, const Tensor& b);  // mem_overlap past the storage test
bool strided_self_overlap(const Tensor& t);                 // the exact test behind has_internal_overlap
}

// How the memory of a and b relates; undefined or empty tensors share none (but a tensor is
// the Same as itself). Tensors of two storages share none unless the storages' address
// ranges meet (from_blob and DLPack can wrap one memory twice).
inline MemOverlap mem_overlap(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return MemOverlap::None;
  if (a.impl() == b.impl()) return MemOverlap::Same;  // x:add_(x): an in-place op's own input
  const Storage &sa = *a.storage(), &sb = *b.storage();
  if (&sa != &sb) {
    const char *pa = static_cast<const char*>(sa.data()), *pb = static_cast<const char*>(sb.data());
    if (pa >= pb + sb.nbytes() || pb >= pa + sa.nbytes()) return MemOverlap::None;
  }
  return detail::view_overlap(a, b);
}

// True when two elements of t are one memory location: a dim of size > 1 with stride 0 (an
// expanded view), or strides that make elements collide. Size-1 dims and empty tensors
// never count. One loop over the dims for the usual layouts.
inline bool has_internal_overlap(const Tensor& t) {
  int64_t expected = 1;  // the next dim's stride if t is contiguous (followed while it is)
  bool contiguous = true, broadcast = false;
  for (int d = t.dim() - 1; d >= 0; --d) {
    const int64_t n = t.size(d), s = t.stride(d);
    if (n == 0) return false;
    if (n == 1) continue;
    broadcast |= s == 0;
    if (contiguous) {
      contiguous = s == expected;
      expected = s * n;
    }
  }
  if (contiguous) return false;
  return broadcast || detail::strided_self_overlap(t);
}

// Throws "<op>: unsupported operation: more than one element of the written-to tensor refers
// to a single memory location. Please clone() the tensor before performing the operation."
// (PyTorch's words) when t, about to be written by op, has internal overlap. `what` names
// the written tensor where an op writes several (optimizer steps: "the exp_avg").
[[noreturn]] void fail_internal_overlap(const char* op, const char* what = "the written-to tensor");

// Throws "<op>: cannot write to a read-only tensor ..." when t's memory is read-only (a file
// mapped by np.load with mmap_mode="r"). Part of every write check below.
[[noreturn]] void fail_read_only(const char* op, const char* what);
inline void check_writable(const char* op, const Tensor& t, const char* what = "the tensor") {
  if (t.defined() && t.storage()->read_only()) [[unlikely]]
    fail_read_only(op, what);
}

// The check before op writes t: writable memory with no element at another's address.
inline void check_no_internal_overlap(const char* op, const Tensor& t) {
  check_writable(op, t);
  if (has_internal_overlap(t)) [[unlikely]]
    fail_internal_overlap(op);
}

// How an op reads its inputs while it writes its output.
enum class Reads : uint8_t {
  // Each input element only for the output element at its own position, before writing it
  // (pointwise ops, copy_): an input laid out exactly like the output is safe to read.
  Elementwise,
  // Anything else (products, scans, index ops): any shared byte needs the copy.
  Any,
};

// `in` as an op that writes `out` may read it: in itself, or a copy of it when writing out
// could change values of in the op has yet to read.
Tensor readable_input(const Tensor& out, const Tensor& in, Reads reads);

// True when `in` must be read from a copy while `out` is written (readable_input's test).
inline bool needs_copy(const Tensor& out, const Tensor& in, Reads reads) {
  const MemOverlap m = mem_overlap(out, in);
  return m == MemOverlap::Partial || (m == MemOverlap::Same && reads == Reads::Any);
}

}  // namespace tide
