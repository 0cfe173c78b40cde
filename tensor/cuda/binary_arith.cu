// The arithmetic binary ops (kinds ARITH and TRUEDIV of TIDE_BINARY_OPS) and the entry point
// of every binary op.
#include "backend_impl.cuh"
#include "binary_impl.cuh"

namespace tide::cuda {

// binary_logic.cu: the comparison, logical and bitwise ops; false for the others.
bool binary_logic(BinaryOp op, const TensorIter& it, DType compute, const Scalar* a, const Scalar* b);

void binary(BinaryOp op, const TensorIter& it, DType compute, const Scalar* a, const Scalar* b) {
  const char* name = binary_op_name(op);
  bool done = false;
  switch (op) {
#define TIDE_CASE(n, F, kind) \
  case BinaryOp::F: done = run_binary_if<is_arith_kind(#kind), fn::F>(name, it, compute, a, b); break;
    TIDE_BINARY_OPS(TIDE_CASE)
#undef TIDE_CASE
  }
  if (!done) binary_logic(op, it, compute, a, b);
}

}  // namespace tide::cuda
