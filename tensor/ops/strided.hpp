// A CPU walker over N operands that share one shape but have their own element strides
// (signed: flip walks backwards). It visits row-major positions [begin, end) and hands the
// callback each operand's element offset, so gather/scatter/index/flip/nonzero need no
// per-op loop nests. Private to tensor/ops (shape.cpp, index.cpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../tensor.hpp"

namespace tide::detail {

template <int N>
struct Strided {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t strides[N][kMaxDims];

  Strided() = default;
  explicit Strided(const Dims& s) : ndim(s.size()) {
    for (int d = 0; d < ndim; ++d) {
      shape[d] = s[d];
      for (int k = 0; k < N; ++k) strides[k][d] = 0;
    }
  }
  void set(int k, const Dims& st) {
    for (int d = 0; d < ndim; ++d) strides[k][d] = st[d];
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    return n;
  }

  // Drops size-1 dims and merges neighbours that every operand steps through evenly.
  // Only valid when the callback does not need coordinates (offsets only).
  void coalesce() {
    int out = 0;
    for (int d = 0; d < ndim; ++d) {
      if (shape[d] == 1) continue;
      if (out > 0) {
        bool merge = true;
        for (int k = 0; k < N; ++k)
          if (strides[k][out - 1] != strides[k][d] * shape[d]) merge = false;
        if (merge) {
          shape[out - 1] *= shape[d];
          for (int k = 0; k < N; ++k) strides[k][out - 1] = strides[k][d];
          continue;
        }
      }
      shape[out] = shape[d];
      for (int k = 0; k < N; ++k) strides[k][out] = strides[k][d];
      ++out;
    }
    ndim = out;
  }
};

// Calls run(const int64_t* offsets, int64_t n) for each stretch of up to n positions along
// the innermost dim within [begin, end) in row-major order; offsets[k] is operand k's element
// offset of the stretch's first position (sum of coordinate * strides[k]), and the next
// positions follow at strides[k][ndim - 1]. Lets callers copy contiguous rows at once.
template <int N, typename F>
void strided_runs(const Strided<N>& s, int64_t begin, int64_t end, F&& run) {
  if (begin >= end) return;
  int64_t off[N] = {};
  if (s.ndim == 0) {
    run(static_cast<const int64_t*>(off), int64_t(1));
    return;
  }
  int64_t coord[kMaxDims];
  int64_t rem = begin;
  for (int d = s.ndim - 1; d >= 0; --d) {
    coord[d] = rem % s.shape[d];
    rem /= s.shape[d];
    for (int k = 0; k < N; ++k) off[k] += coord[d] * s.strides[k][d];
  }
  const int last = s.ndim - 1;
  int64_t pos = begin;
  while (pos < end) {
    int64_t n = std::min(s.shape[last] - coord[last], end - pos);
    run(static_cast<const int64_t*>(off), n);
    pos += n;
    if (pos >= end) break;
    for (int k = 0; k < N; ++k) off[k] += n * s.strides[k][last];
    coord[last] += n;
    for (int d = last; d > 0 && coord[d] == s.shape[d]; --d) {
      for (int k = 0; k < N; ++k) off[k] += s.strides[k][d - 1] - coord[d] * s.strides[k][d];
      coord[d] = 0;
      ++coord[d - 1];
    }
  }
}

// Calls f(const int64_t* offsets) for each position in [begin, end) of the row-major order.
template <int N, typename F>
void strided_walk(const Strided<N>& s, int64_t begin, int64_t end, F&& f) {
  int64_t inner[N];
  for (int k = 0; k < N; ++k) inner[k] = s.ndim > 0 ? s.strides[k][s.ndim - 1] : 0;
  strided_runs(s, begin, end, [&](const int64_t* off, int64_t n) {
    int64_t o[N];
    for (int k = 0; k < N; ++k) o[k] = off[k];
    for (int64_t i = 0; i < n; ++i) {
      f(static_cast<const int64_t*>(o));
      for (int k = 0; k < N; ++k) o[k] += inner[k];
    }
  });
}

// Copies one element of `itemsize` bytes (1, 2, 4, 8 or complex128's 16).
inline void copy_item(char* dst, const char* src, size_t itemsize) {
  switch (itemsize) {
    case 1: *dst = *src; break;
    case 2: *reinterpret_cast<uint16_t*>(dst) = *reinterpret_cast<const uint16_t*>(src); break;
    case 4: *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(src); break;
    case 8: *reinterpret_cast<uint64_t*>(dst) = *reinterpret_cast<const uint64_t*>(src); break;
    default: std::memcpy(dst, src, itemsize); break;
  }
}

// Base pointer of a tensor's storage (offsets from the walker are added to its own offset).
inline char* storage_base(const Tensor& t) {
  capture::note_host_access();
  return static_cast<char*>(t.storage()->data());
}

}  // namespace tide::detail
