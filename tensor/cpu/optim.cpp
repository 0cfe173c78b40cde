// The CPU backend's fused optimizer step (the optim_step entry of the device table,
// tensor/backend.hpp): one pass over the parameter, its gradient and its state buffers, with
// the update functors of ops/optim_update.hpp.
#include "../ops/optim_update.hpp"
#include "../parallel.hpp"
#include "backend.hpp"

namespace tide::cpu {

namespace {

// An optimizer step reads and writes several streams per element (up to five for Adam with
// amsgrad, with a sqrt and a division), so it pays off on two threads earlier than a plain
// `a + b` (kParallelGrain); chunk boundaries stay independent of the thread count.
constexpr int64_t kOptimizerGrain = kParallelGrain / 4;

// update(p, g, s) on n elements: operand 0 is the parameter, 1 the gradient, 2.. the state
// buffers; each element is loaded in compute precision and stored back after the update.
// With Contiguous the element steps are 1 at compile time, so the loop vectorises; the
// functor is a by-value copy, whose constants no store can alias, so they stay in registers.
template <typename T, int NS, bool Contiguous, typename Update>
void update_elements(char** data, const int64_t* strides, int64_t n, const Update update) {
  using C = compute_t<T>;
  constexpr int N = NS + 2;
  T* ptr[N];
  int64_t step[N];
  for (int k = 0; k < N; ++k) {
    ptr[k] = reinterpret_cast<T*>(data[k]);
    step[k] = Contiguous ? 1 : strides[k] / int64_t(sizeof(T));
  }
  for (int64_t i = 0; i < n; ++i) {
    C p = C(ptr[0][i * step[0]]);
    C s[NS + 1];
    for (int k = 0; k < NS; ++k) s[k] = C(ptr[k + 2][i * step[k + 2]]);
    update(p, C(ptr[1][i * step[1]]), s);
    ptr[0][i * step[0]] = T(p);
    for (int k = 0; k < NS; ++k) ptr[k + 2][i * step[k + 2]] = T(s[k]);
  }
}

}  // namespace

void optim_step(OptimKind kind, const TensorIter& it, DType dt, const void* options) {
  TIDE_DISPATCH_FLOAT(dt, "optim_step", [&] {
    ops::with_update<scalar_t>(kind, options, [&](auto update) {
      constexpr int K = decltype(update)::kStates;
      TIDE_ASSERT(it.ntensors() == K + 2);
      it.for_each(
          [&](char** data, const int64_t* strides, int64_t n) {
            bool contiguous = true;
            for (int k = 0; k < K + 2; ++k) contiguous = contiguous && strides[k] == int64_t(sizeof(scalar_t));
            if (contiguous)
              update_elements<scalar_t, K, true>(data, strides, n, update);
            else
              update_elements<scalar_t, K, false>(data, strides, n, update);
          },
          kOptimizerGrain);
    });
  });
}

}  // namespace tide::cpu
