// Row reductions (sum, prod, max, min, argmax, argmin) of a contiguous (rows, len) input.
//
// A group of g threads (a power of two, 1..512) reduces one row: each thread folds a strided
// slice, then the group combines in shared memory as a fixed tree, so results are
// deterministic (no float atomics). Short rows get small groups (many rows per block), long
// rows a whole block. A few very long rows are cut into parts reduced by separate groups into
// a scratch buffer of partial accumulators, which a second launch combines in part order.
#include <algorithm>
#include <limits>

#include "../cpu/functors.hpp"
#include "backend_impl.cuh"
#include "pointwise.cuh"

namespace tide::cuda {

namespace {

constexpr int kMaxGroup = 512;          // threads per row at most (and the largest block)
constexpr int kMinBlock = 256;          // threads per block at least
constexpr int64_t kMinPartLen = 8192;   // elements per part when a row is split
constexpr int64_t kSplitMinLen = 32768; // rows shorter than this are never split

// Sum/prod accumulate in float for halves and float32, double for float64, int64 otherwise
// (wrapping like the CPU through unsigned arithmetic).
template <typename T>
using sum_acc_t = std::conditional_t<is_float_v<T>, compute_t<T>, int64_t>;

// Writes an accumulator into element i of a buffer of runtime dtype dt (as a cast would).
template <typename A>
__device__ __forceinline__ void store_as(void* out, int64_t i, DType dt, A v) {
  switch (dt) {
#define TIDE_STORE_CASE(D)                                                               \
  case D:                                                                                \
    store_converted(static_cast<typename CType<D>::type*>(out) + i, v);                  \
    break;
    TIDE_STORE_CASE(DType::Bool)
    TIDE_STORE_CASE(DType::UInt8)
    TIDE_STORE_CASE(DType::Int8)
    TIDE_STORE_CASE(DType::Int16)
    TIDE_STORE_CASE(DType::Int32)
    TIDE_STORE_CASE(DType::Int64)
    TIDE_STORE_CASE(DType::UInt16)
    TIDE_STORE_CASE(DType::UInt32)
    TIDE_STORE_CASE(DType::UInt64)
    TIDE_STORE_CASE(DType::Float16)
    TIDE_STORE_CASE(DType::BFloat16)
    TIDE_STORE_CASE(DType::Float32)
    TIDE_STORE_CASE(DType::Float64)
#undef TIDE_STORE_CASE
  }
}

// Where the result of a row goes: out[row] (dtype out_dt) and, for the Arg kinds, the best
// value into `out` (dtype of the input, when not null) and its 1-based position into idx.
struct RowOutput {
  void* out;
  DType out_dt;
  int64_t* idx;
};

template <typename T, bool IsProd>
struct SumProdOp {
  using A = sum_acc_t<T>;
  __device__ A identity() const { return A(IsProd ? 1 : 0); }
  __device__ A leaf(const T* p, int64_t) const { return A(load_value(p)); }
  __device__ A combine(A a, A b) const {
    if constexpr (std::is_integral_v<A>) return A(IsProd ? uint64_t(a) * uint64_t(b) : uint64_t(a) + uint64_t(b));
    else return IsProd ? a * b : a + b;
  }
  __device__ void write(const RowOutput& o, int64_t row, A a) const { store_as(o.out, row, o.out_dt, a); }
};

// Max/min propagating NaN (the torch.maximum/minimum functors).
template <typename T, bool IsMax>
struct MaxMinOp {
  using A = compute_t<T>;
  __device__ A identity() const {
    if constexpr (std::numeric_limits<A>::has_infinity)
      return IsMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    else return IsMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
  }
  __device__ A leaf(const T* p, int64_t) const { return load_value(p); }
  __device__ A combine(A a, A b) const {
    if constexpr (IsMax) return fn::Maximum{}(a, b);
    else return fn::Minimum{}(a, b);
  }
  __device__ void write(const RowOutput& o, int64_t row, A a) const { store_as(o.out, row, o.out_dt, a); }
};

// Position of the best element: a NaN beats every number, ties keep the earlier position
// (so the result does not depend on the order of combination).
template <typename T, bool IsMax>
struct ArgOp {
  using V = compute_t<T>;
  struct A {
    V v;
    int64_t i;  // 0-based position in the row; -1: nothing seen
  };
  __device__ static bool better(V a, V b) {
    if constexpr (is_float_v<T>) {
      if (a != a) return b == b;
      if (b != b) return false;
    }
    if constexpr (IsMax) return a > b;
    else return a < b;
  }
  __device__ A identity() const { return {V(), -1}; }
  __device__ A leaf(const T* p, int64_t pos) const { return {load_value(p), pos}; }
  __device__ A combine(const A& a, const A& b) const {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    if (better(b.v, a.v)) return b;
    if (better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;
  }
  __device__ void write(const RowOutput& o, int64_t row, const A& a) const {
    if (o.out) store_value(static_cast<T*>(o.out) + row, a.v);
    o.idx[row] = a.i + 1;
  }
};

// One launch: `tasks` = rows * parts groups of `group` threads; group t reduces elements
// [part * part_len, min(len, (part + 1) * part_len)) of row t / parts. The input is the
// tensor (FromPartials false) or the partial accumulators of a first launch (len = parts
// there). Results go to `partials` when it is not null, else to the row output.
template <typename Op, typename T, bool FromPartials>
__global__ void reduce_kernel(const void* in, int64_t len, int64_t parts, int64_t part_len, int64_t tasks,
                              int group, typename Op::A* partials, RowOutput o, Op op) {
  using A = typename Op::A;
  __shared__ A shared[kMaxGroup];
  const int tid = int(threadIdx.x);
  const int lane = tid % group;
  const int64_t task = int64_t(blockIdx.x) * (blockDim.x / group) + tid / group;
  A acc = op.identity();
  if (task < tasks) {
    const int64_t row = task / parts, part = task % parts;
    const int64_t begin = part * part_len, end = std::min(len, begin + part_len);
    for (int64_t j = begin + lane; j < end; j += group) {
      if constexpr (FromPartials) acc = op.combine(acc, static_cast<const A*>(in)[row * len + j]);
      else acc = op.combine(acc, op.leaf(static_cast<const T*>(in) + row * len + j, j));
    }
  }
  shared[tid] = acc;
  __syncthreads();
  for (int s = group / 2; s > 0; s /= 2) {
    if (lane < s) shared[tid] = op.combine(shared[tid], shared[tid + s]);
    __syncthreads();
  }
  if (lane == 0 && task < tasks) {
    if (partials) partials[task] = shared[tid];
    else op.write(o, task, shared[tid]);
  }
}

// Threads per row: about four elements each, a power of two up to kMaxGroup.
int group_for(int64_t len) {
  int g = 1;
  while (g < kMaxGroup && int64_t(g) * 4 < len) g *= 2;
  return g;
}

template <typename Op, typename T, bool FromPartials>
void launch_reduce(const void* in, int64_t len, int64_t parts, int64_t part_len, int64_t tasks,
                   typename Op::A* partials, const RowOutput& o, cudaStream_t stream, const char* name) {
  const int group = group_for(std::min(len, part_len));
  const int threads = std::max(kMinBlock, group);
  const int64_t blocks = ceil_div(tasks, threads / group);
  TIDE_CHECK(blocks <= INT32_MAX, name, ": too many rows for one CUDA launch (", tasks, ")");
  reduce_kernel<Op, T, FromPartials><<<unsigned(blocks), threads, 0, stream>>>(in, len, parts, part_len, tasks,
                                                                              group, partials, o, Op{});
  check_launch(name);
}

// Reduces every row with Op: one launch, or two when a few long rows are split into parts.
template <typename Op, typename T>
void run_reduce(const T* in, int64_t rows, int64_t len, const RowOutput& o, int device, const char* name) {
  using A = typename Op::A;
  cudaStream_t stream = stream_for(device);
  const int64_t want_tasks = int64_t(sm_count(device)) * 4;  // whole-block groups to fill the device
  int64_t parts = 1;
  if (len >= kSplitMinLen && rows < want_tasks)
    parts = std::min(ceil_div(want_tasks, rows), ceil_div(len, kMinPartLen));
  if (parts <= 1) {
    launch_reduce<Op, T, false>(in, len, 1, len, rows, nullptr, o, stream, name);
    return;
  }
  const int64_t part_len = ceil_div(len, parts);
  parts = ceil_div(len, part_len);
  ScratchBuffer scratch(size_t(rows * parts) * sizeof(A), device);
  A* partials = static_cast<A*>(scratch.get());
  launch_reduce<Op, T, false>(in, len, parts, part_len, rows * parts, partials, o, stream, name);
  launch_reduce<Op, T, true>(partials, parts, 1, parts, rows, nullptr, o, stream, name);
}

const char* reduce_name(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Prod: return "prod";
    case ReduceKind::Max: return "max";
    case ReduceKind::Min: return "min";
    case ReduceKind::ArgMax: return "argmax";
    case ReduceKind::ArgMin: return "argmin";
  }
  return "reduce";
}

}  // namespace

void reduce_rows(ReduceKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t* idx, int64_t rows,
                 int64_t len) {
  const char* name = reduce_name(kind);
  if (rows <= 0) return;
  const bool needs_element = kind != ReduceKind::Sum && kind != ReduceKind::Prod;
  TIDE_CHECK(len >= 1 || !needs_element, name, ": cannot reduce rows of 0 elements");
  const bool is_arg = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
  TIDE_ASSERT(!is_arg || idx);
  const int device = device_of(is_arg ? static_cast<const void*>(idx) : out);
  const RowOutput o{out, out_dt, idx};
  TIDE_DISPATCH_ALL(in_dt, name, [&] {
    using T = scalar_t;
    const T* p = static_cast<const T*>(in);
    switch (kind) {
      case ReduceKind::Sum: run_reduce<SumProdOp<T, false>>(p, rows, len, o, device, name); break;
      case ReduceKind::Prod: run_reduce<SumProdOp<T, true>>(p, rows, len, o, device, name); break;
      case ReduceKind::Max: run_reduce<MaxMinOp<T, true>>(p, rows, len, o, device, name); break;
      case ReduceKind::Min: run_reduce<MaxMinOp<T, false>>(p, rows, len, o, device, name); break;
      case ReduceKind::ArgMax: run_reduce<ArgOp<T, true>>(p, rows, len, o, device, name); break;
      case ReduceKind::ArgMin: run_reduce<ArgOp<T, false>>(p, rows, len, o, device, name); break;
    }
  });
}

}  // namespace tide::cuda
