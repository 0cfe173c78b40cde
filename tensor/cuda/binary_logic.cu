// The comparison, logical and bitwise binary ops (the kinds of TIDE_BINARY_OPS other than
// ARITH and TRUEDIV, which binary_arith.cu runs).
#include "binary_impl.cuh"

namespace tide::cuda {

// Runs `op` if it is one of this file's kinds; false otherwise.
bool binary_logic(BinaryOp op, const TensorIter& it, DType compute, const Scalar* a, const Scalar* b) {
  const char* name = binary_op_name(op);
  switch (op) {
#define TIDE_CASE(n, F, kind) \
  case BinaryOp::F: return run_binary_if<!is_arith_kind(#kind), fn::F>(name, it, compute, a, b);
    TIDE_BINARY_OPS(TIDE_CASE)
#undef TIDE_CASE
  }
  return false;
}

}  // namespace tide::cuda
