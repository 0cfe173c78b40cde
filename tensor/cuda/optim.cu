// The fused optimizer step: one pointwise launch per parameter running the update functor
// of tensor/ops/optim_update.hpp (the CPU loop's very code) on each element, with the
// parameter, gradient and state buffers loaded in compute precision and stored back.
#include "../ops/optim_update.hpp"
#include "backend_impl.cuh"
#include "pointwise.cuh"

namespace tide::cuda {

namespace {

// Operands: 0 the parameter (written), 1 the gradient, 2.. the U::kStates state buffers
// (written), all of dtype T.
template <typename T, typename U>
struct OptimKernel {
  using C = compute_t<T>;
  static constexpr int kN = 2 + U::kStates;
  __host__ __device__ constexpr int elem_size(int) const { return int(sizeof(T)); }
  struct Loaded {
    C v[kN];
  };
  U update;
  __device__ Loaded load(char* const* p) const {
    Loaded x;
#pragma unroll
    for (int k = 0; k < kN; ++k) x.v[k] = load_value(reinterpret_cast<const T*>(p[k]));
    return x;
  }
  __device__ void store(char* const* p, const Loaded& x) const {
    Loaded y = x;
    update(y.v[0], y.v[1], y.v + 2);
    store_value(reinterpret_cast<T*>(p[0]), y.v[0]);
#pragma unroll
    for (int k = 2; k < kN; ++k) store_value(reinterpret_cast<T*>(p[k]), y.v[k]);
  }
};

}  // namespace

void optim_step(OptimKind kind, const TensorIter& it, DType dt, const void* options) {
  TIDE_DISPATCH_FLOAT(dt, "optimizer step", [&] {
    ops::with_update<scalar_t>(kind, options, [&](const auto& update) {
      using U = std::decay_t<decltype(update)>;
      launch_pointwise("optimizer step", it, OptimKernel<scalar_t, U>{update});
    });
  });
}

}  // namespace tide::cuda
