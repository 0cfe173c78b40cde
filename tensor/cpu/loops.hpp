// cpu_kernel: runs a scalar functor over a TensorIter. Half types are loaded into float,
// computed, and stored back. The contiguous and scalar-broadcast cases get loops over plain
// pointers that the compiler vectorises, or a functor's own ContiguousKernel (vec_math.hpp)
// where a libm call would keep the scalar loop from vectorising.
#pragma once
#include <algorithm>
#include <tuple>
#include <utility>

#include "../iterator.hpp"
#include "../parallel.hpp"
#include "vec_math.hpp"

namespace tide {

namespace detail {

template <typename T>
inline compute_t<T> load(const char* p) {
  return compute_t<T>(*reinterpret_cast<const T*>(p));
}

// The all-contiguous loop, out of line: inlined into a kernel's dispatch (TensorIter's
// single-chunk path) GCC 12 left it scalar (0.3 ns an element for a float add against 0.08
// vectorised). An output is either one of the inputs element for element or disjoint from
// them (TensorIter copies any other overlap), so no iteration reads what another wrote.
// f by value: a copy's captured bounds cannot alias the output, so they stay in registers.
template <typename Out, typename... In, typename F>
[[gnu::noinline]] void contiguous_loop(Out* out, int64_t n, const F f, const In*... in) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) out[i] = Out(f(compute_t<In>(in[i])...));
}

template <typename Out, typename... In, typename F, size_t... I>
inline void kernel_loop(char** data, const int64_t* strides, int64_t n, const F& f,
                        std::index_sequence<I...>) {
  bool contiguous = strides[0] == sizeof(Out) && ((strides[I + 1] == sizeof(In)) && ...);
  if constexpr (sizeof...(In) == 1 && ContiguousKernel<F>::exists && (std::is_same_v<Out, In> && ...) &&
                (std::is_same_v<Out, float> || std::is_same_v<Out, double>)) {
    // The functor's own array kernel, on strided operands through a small buffer, so that
    // every layout gives the same bits.
    if (contiguous) {
      ContiguousKernel<F>::run(reinterpret_cast<Out*>(data[0]), reinterpret_cast<const Out*>(data[1]), n);
      return;
    }
    constexpr int64_t kChunk = 256;
    Out buf[kChunk];
    for (int64_t b = 0; b < n; b += kChunk) {
      const int64_t m = std::min(kChunk, n - b);
      for (int64_t i = 0; i < m; ++i) buf[i] = *reinterpret_cast<const Out*>(data[1] + (b + i) * strides[1]);
      ContiguousKernel<F>::run(buf, buf, m);
      for (int64_t i = 0; i < m; ++i) *reinterpret_cast<Out*>(data[0] + (b + i) * strides[0]) = buf[i];
    }
    return;
  }
  if (contiguous) {
    contiguous_loop<Out, In...>(reinterpret_cast<Out*>(data[0]), n, f, reinterpret_cast<const In*>(data[I + 1])...);
    return;
  }
  // Output contiguous, exactly one input broadcast (a tensor-op-scalar-like layout, either
  // side: a backward formula's g * x has the 0-dim gradient on the left).
  if constexpr (sizeof...(In) == 2) {
    using A = std::tuple_element_t<0, std::tuple<In...>>;
    using B = std::tuple_element_t<1, std::tuple<In...>>;
    if (strides[0] == sizeof(Out) && strides[1] == sizeof(A) && strides[2] == 0) {
      Out* out = reinterpret_cast<Out*>(data[0]);
      const A* a = reinterpret_cast<const A*>(data[1]);
      const compute_t<B> b = load<B>(data[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = Out(f(compute_t<A>(a[i]), b));
      return;
    }
    if (strides[0] == sizeof(Out) && strides[1] == 0 && strides[2] == sizeof(B)) {
      Out* out = reinterpret_cast<Out*>(data[0]);
      const compute_t<A> a = load<A>(data[1]);
      const B* b = reinterpret_cast<const B*>(data[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = Out(f(a, compute_t<B>(b[i])));
      return;
    }
  }
  char* ptrs[sizeof...(In) + 1] = {data[0], data[I + 1]...};
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(ptrs[0]) = Out(f(load<In>(ptrs[I + 1])...));
    ptrs[0] += strides[0];
    ((ptrs[I + 1] += strides[I + 1]), ...);
  }
}

}  // namespace detail

// f takes compute_t<In>... and returns a value convertible to Out.
template <typename Out, typename... In, typename F>
void cpu_kernel(const TensorIter& iter, const F& f) {
  iter.for_each([f](char** data, const int64_t* strides, int64_t n) {  // f by value: see loop_taker
    detail::kernel_loop<Out, In...>(data, strides, n, f, std::index_sequence_for<In...>{});
  });
}

}  // namespace tide
