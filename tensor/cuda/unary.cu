// Unary pointwise ops: every entry of TIDE_UNARY_OPS runs its functor of cpu/functors.hpp,
// so a new op added to the table gets its CUDA kernel with no second definition.
#include "../cpu/functors.hpp"
#include "backend_impl.cuh"
#include "pointwise.cuh"

namespace tide::cuda {

namespace {

// out = f(in), computed in compute_t<In>.
template <typename Out, typename In, typename F>
struct UnaryKernel {
  static constexpr int kN = 2;
  __host__ __device__ constexpr int elem_size(int k) const { return k == 0 ? int(sizeof(Out)) : int(sizeof(In)); }
  using Loaded = compute_t<In>;
  __device__ Loaded load(char* const* p) const { return load_value(reinterpret_cast<const In*>(p[1])); }
  __device__ void store(char* const* p, const Loaded& x) const {
    store_value(reinterpret_cast<Out*>(p[0]), F{}(x));
  }
};

// As the CPU's run_unary: the dtype's compute type, a bool result when the functor returns one.
template <typename F>
void run_unary(const char* op, const TensorIter& it, DType in) {
  TIDE_DISPATCH_ALL(in, op, [&] {
    using C = compute_t<scalar_t>;
    if constexpr (!F::template accepts<C>) {
      TIDE_FAIL(op, ": not supported for ", dtype_name(in), " tensors");
    } else {
      using R = decltype(F{}(C{}));
      using Out = std::conditional_t<std::is_same_v<R, bool>, bool, scalar_t>;
      launch_pointwise(op, it, UnaryKernel<Out, scalar_t, F>{});
    }
  });
}

}  // namespace

void unary(UnaryOp op, const TensorIter& it, DType compute) {
  const char* name = unary_op_name(op);
  switch (op) {
#define TIDE_CASE(n, F, kind) \
  case UnaryOp::F: run_unary<fn::F>(name, it, compute); break;
    TIDE_UNARY_OPS(TIDE_CASE)
#undef TIDE_CASE
  }
}

}  // namespace tide::cuda
