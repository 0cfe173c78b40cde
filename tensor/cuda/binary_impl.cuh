// Binary pointwise ops: every entry of TIDE_BINARY_OPS runs its functor of cpu/functors.hpp.
// The table is split over two .cu files (binary_arith.cu, binary_logic.cu) that compile in
// parallel; each instantiates run_binary for its part of the ops.
#pragma once
#include <string_view>

#include "../cpu/functors.hpp"
#include "pointwise.cuh"

namespace tide::cuda {

// out = f(a, b) over two tensors, computed in compute_t<T>.
template <typename Out, typename T, typename F>
struct BinaryKernel {
  static constexpr int kN = 3;
  __host__ __device__ constexpr int elem_size(int k) const { return k == 0 ? int(sizeof(Out)) : int(sizeof(T)); }
  struct Loaded {
    compute_t<T> a, b;
  };
  __device__ Loaded load(char* const* p) const {
    return {load_value(reinterpret_cast<const T*>(p[1])), load_value(reinterpret_cast<const T*>(p[2]))};
  }
  __device__ void store(char* const* p, const Loaded& x) const {
    store_value(reinterpret_cast<Out*>(p[0]), F{}(x.a, x.b));
  }
};

// out = f(s, x) or f(x, s): one operand a scalar already converted to the compute type.
template <typename Out, typename T, typename F>
struct ScalarBinaryKernel {
  static constexpr int kN = 2;
  __host__ __device__ constexpr int elem_size(int k) const { return k == 0 ? int(sizeof(Out)) : int(sizeof(T)); }
  using Loaded = compute_t<T>;
  compute_t<T> scalar;
  bool scalar_first;
  __device__ Loaded load(char* const* p) const { return load_value(reinterpret_cast<const T*>(p[1])); }
  __device__ void store(char* const* p, const Loaded& x) const {
    store_value(reinterpret_cast<Out*>(p[0]), scalar_first ? F{}(scalar, x) : F{}(x, scalar));
  }
};

// As the CPU's run_binary: (tensor, tensor), (tensor, scalar) or (scalar, tensor) operands with
// the types fn::dispatch_functor picks; the scalar converted with Scalar::to<scalar_t>() and
// then to the compute type.
template <typename F>
void run_binary(const char* op, const TensorIter& it, DType in, const Scalar* sa, const Scalar* sb) {
  fn::dispatch_functor<F, 2>(op, in, [&](auto types) {
    using S = typename decltype(types)::scalar_t;
    using Out = typename decltype(types)::out_t;
    if constexpr (std::is_same_v<F, fn::Pow> && fn::is_fp<compute_t<S>>) {
      if (sb && fn::with_pow_fast_path(sb->to_double(), [&](auto g) {
            launch_pointwise(op, it, ScalarBinaryKernel<Out, S, decltype(g)>{compute_t<S>(0), false});
          }))
        return;
    }
    if (sa || sb) {
      const Scalar& s = sb ? *sb : *sa;
      launch_pointwise(op, it, ScalarBinaryKernel<Out, S, F>{compute_t<S>(s.to<S>()), sb == nullptr});
    } else {
      launch_pointwise(op, it, BinaryKernel<Out, S, F>{});
    }
  });
}

// True for the kinds binary_arith.cu runs (the table's kind column as a string).
constexpr bool is_arith_kind(std::string_view kind) { return kind == "ARITH" || kind == "TRUEDIV"; }

// run_binary<F> when Here, so that each file instantiates only its part of the table.
template <bool Here, typename F>
bool run_binary_if(const char* op, const TensorIter& it, DType in, const Scalar* sa, const Scalar* sb) {
  if constexpr (Here) {
    run_binary<F>(op, it, in, sa, sb);
    return true;
  } else {
    return false;
  }
}

}  // namespace tide::cuda
