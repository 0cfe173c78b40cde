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

// As the CPU's run_unary: the types fn::dispatch_functor picks for the dtype.
template <typename F>
void run_unary(const char* op, const TensorIter& it, DType in) {
  fn::dispatch_functor<F, 1>(op, in, [&](auto types) {
    using S = typename decltype(types)::scalar_t;
    launch_pointwise(op, it, UnaryKernel<typename decltype(types)::out_t, S, F>{});
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
