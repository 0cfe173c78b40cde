// The recording table and the tape (capture.hpp).
#include "capture.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include "../backend.hpp"
#include "../cpu/backend.hpp"
#include "../error.hpp"
#include "../parallel.hpp"
#include "../profiler/profiler.hpp"
#include "../random.hpp"
#include "../tensor.hpp"

namespace tide::capture {

namespace detail {
std::atomic<int> g_active{0};
std::atomic<const DeviceBackend*> g_cpu_backend{&kCpuBackend};
}  // namespace detail

struct Recording::State {
  std::shared_ptr<Tape> tape = std::make_shared<Tape>();
  int depth = 0;              // table calls open: calls made inside one are its own work
  bool broken = false;
  std::string reason;
  bool located = false;       // reason already names the script's line
  const char* op = "(no op)";  // the binding running
  Generator* generator = nullptr;
  uint64_t seed = 0, start_offset = 0;
};

namespace {

thread_local Recording::State* t_rec = nullptr;

// The recording on this thread when a table call is to be recorded (none inside another).
Recording::State* recorder() {
  Recording::State* s = t_rec;
  return s && s->depth == 0 ? s : nullptr;
}

struct InTable {
  explicit InTable(Recording::State* s) : s_(s) { ++s_->depth; }
  ~InTable() { --s_->depth; }
  InTable(const InTable&) = delete;
  InTable& operator=(const InTable&) = delete;
  Recording::State* s_;
};

void break_with(Recording::State* s, std::string reason) {
  if (s->broken) return;
  s->broken = true;
  s->reason = std::move(reason);
}

void add_address(Recording::State* s, const void* p) { s->tape->addresses.push_back(static_cast<const char*>(p)); }

void add_iter(Recording::State* s, const TensorIter& it) {
  if (it.numel() == 0) return;
  for (int o = 0; o < it.ntensors(); ++o) add_address(s, it.data(o));
}

void add_tensor(Recording::State* s, const Tensor& t) {
  if (t.defined() && t.numel() > 0) add_address(s, t.address());
}

using Access = Tape::Step::Access;

// The lowest and highest offset from the first element (in the strides' unit) that a walk
// over ndim dims of size(d) elements, stride(d) apart, reaches.
template <typename Size, typename Stride>
std::pair<int64_t, int64_t> offset_range(int ndim, const Size& size, const Stride& stride) {
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < ndim; ++d) {
    const int64_t extent = (size(d) - 1) * stride(d);
    (extent < 0 ? lo : hi) += extent;
  }
  return {lo, hi};
}

// The bytes a tensor's elements lie in (none for an empty or undefined tensor).
void add_access(std::vector<Access>& out, const Tensor& t, bool writes) {
  if (!t.defined() || t.numel() == 0) return;
  const auto [lo, hi] =
      offset_range(t.dim(), [&](int d) { return t.size(d); }, [&](int d) { return t.stride(d); });
  const char* base = static_cast<const char*>(t.address());
  const int64_t item = int64_t(t.itemsize());
  out.push_back({base + lo * item, base + (hi + 1) * item, writes});
}

// The last step's memory: the given tensors, the first `reads` of them only read.
void set_accesses(Recording::State* s, std::span<const Tensor* const> tensors, size_t reads) {
  Tape::Step& st = s->tape->steps.back();
  for (size_t i = 0; i < tensors.size(); ++i) add_access(st.accesses, *tensors[i], i >= reads);
  st.accesses_known = true;
}
void set_accesses(Recording::State* s, std::initializer_list<const Tensor*> tensors, size_t reads) {
  set_accesses(s, std::span<const Tensor* const>(tensors.begin(), tensors.size()), reads);
}

void push(Recording::State* s, const char* entry, const DeviceBackend& table, bool graphable,
          std::function<void(uint64_t, uint64_t)> run) {
  s->tape->steps.push_back(
      {entry, s->op, std::move(run), nullptr, &table, graphable && table.graph_begin, {}, false, nullptr});
}

// A tensor result the entry allocated: a replay computes a new one and copies it over the
// recorded one, which later steps read (host memory: the entries that return tensors are the
// CPU's).
void copy_over(const Tensor& recorded, const Tensor& fresh) {
  if (recorded.defined() && recorded.numel() > 0 && !recorded.same(fresh))
    std::memmove(recorded.address(), fresh.address(), recorded.nbytes());
}

void check_contiguous(Recording::State* s, const Tensor& t, const char* entry) {
  if (t.defined() && !t.is_contiguous())
    break_with(s, std::string(s->op) + ": the " + entry + " kernel returned a strided result (not captured)");
}

}  // namespace

// A recorded pointwise call: its table, entry, arguments and iterator (whose kernel's inner
// loop a fused group's program takes, on the CPU).
struct Pointwise {
  enum class Kind : uint8_t { Unary, Binary, Copy, Fill, Where, Clamp };
  Pointwise(const DeviceBackend& table, Kind k, const TensorIter& i, DType d) : be(&table), kind(k), it(i), dt(d) {}
  const DeviceBackend* be;
  Kind kind;
  TensorIter it;
  DType dt = DType::Float32, dt2 = DType::Float32;  // compute (or out) dtype, in dtype
  UnaryOp uop{};
  BinaryOp bop{};
  std::optional<Scalar> a, b;  // binary's scalar operands, clamp's bounds
  Scalar value;                // fill's

  void run(const TensorIter& i) const {
    switch (kind) {
      case Kind::Unary: return be->unary(uop, i, dt);
      case Kind::Binary: return be->binary(bop, i, dt, a ? &*a : nullptr, b ? &*b : nullptr);
      case Kind::Copy: return be->copy(i, dt, dt2);
      case Kind::Fill: return be->fill(i, dt, value);
      case Kind::Where: return be->where(i, dt);
      case Kind::Clamp: return be->clamp(i, dt, a ? &*a : nullptr, b ? &*b : nullptr);
    }
  }
};

namespace {

// Runs a pointwise call now (inside the table) and records it.
void record_pointwise(const char* entry, Pointwise&& p) {
  Recording::State* s = recorder();
  if (!s) return p.run(p.it);
  { InTable in(s); p.run(p.it); }
  add_iter(s, p.it);
  auto pw = std::make_shared<const Pointwise>(std::move(p));
  const DeviceBackend& table = *pw->be;
  push(s, entry, table, true, [pw](uint64_t, uint64_t) { pw->run(pw->it); });
  s->tape->steps.back().pointwise = pw;
}

// ---- the recording table of the table Base() returns (the CPU's, or the CUDA module's):
// each work entry runs Base()'s and records the call by value; memory and queries pass
// through. Entries Base() lacks stay null, so the engine composes those ops from recorded
// calls as it does for the plain table.
template <const DeviceBackend& (*Base)()>
struct Rec {
  static const DeviceBackend& be() { return Base(); }

  static void unary(UnaryOp op, const TensorIter& it, DType compute) {
    if (!recorder()) return be().unary(op, it, compute);
    Pointwise p(be(), Pointwise::Kind::Unary, it, compute);
    p.uop = op;
    record_pointwise("unary", std::move(p));
  }

  static void binary(BinaryOp op, const TensorIter& it, DType compute, const Scalar* a, const Scalar* b) {
    if (!recorder()) return be().binary(op, it, compute, a, b);
    Pointwise p(be(), Pointwise::Kind::Binary, it, compute);
    p.bop = op;
    if (a) p.a = *a;
    if (b) p.b = *b;
    record_pointwise("binary", std::move(p));
  }

  static void copy(const TensorIter& it, DType out, DType in_dt) {
    if (!recorder()) return be().copy(it, out, in_dt);
    Pointwise p(be(), Pointwise::Kind::Copy, it, out);
    p.dt2 = in_dt;
    record_pointwise("copy", std::move(p));
  }

  static void fill(const TensorIter& it, DType dt, Scalar value) {
    if (!recorder()) return be().fill(it, dt, value);
    Pointwise p(be(), Pointwise::Kind::Fill, it, dt);
    p.value = value;
    record_pointwise("fill", std::move(p));
  }

  static void where(const TensorIter& it, DType dt) {
    if (!recorder()) return be().where(it, dt);
    record_pointwise("where", Pointwise(be(), Pointwise::Kind::Where, it, dt));
  }

  static void clamp(const TensorIter& it, DType dt, const Scalar* lo, const Scalar* hi) {
    if (!recorder()) return be().clamp(it, dt, lo, hi);
    Pointwise p(be(), Pointwise::Kind::Clamp, it, dt);
    if (lo) p.a = *lo;
    if (hi) p.b = *hi;
    record_pointwise("clamp", std::move(p));
  }

  static void random(RandomKind kind, void* out, DType dt, int64_t n, uint64_t seed, uint64_t offset,
                     const RandomParams& params) {
    Recording::State* s = recorder();
    if (!s) return be().random(kind, out, dt, n, seed, offset, params);
    { InTable in(s); be().random(kind, out, dt, n, seed, offset, params); }
    if (&default_generator() != s->generator || seed != s->seed || offset < s->start_offset)
      break_with(s, std::string(s->op) + ": draws from a generator other than the default one (not captured)");
    if (n > 0) add_address(s, out);
    s->tape->uses_random = true;
    push(s, "random", be(), false, [kind, out, dt, n, offset, params](uint64_t seed_now, uint64_t shift) {
      be().random(kind, out, dt, n, seed_now, offset + shift, params);
    });
  }

  static void optim_step(OptimKind kind, const TensorIter& it, DType dt, const void* options) {
    Recording::State* s = recorder();
    if (!s) return be().optim_step(kind, it, dt, options);
    { InTable in(s); be().optim_step(kind, it, dt, options); }
    add_iter(s, it);
    switch (kind) {
      case OptimKind::Sgd: {
        auto o = *static_cast<const ops::SgdOptions*>(options);
        push(s, "optim_step", be(), true, [it, dt, o](uint64_t, uint64_t) { be().optim_step(OptimKind::Sgd, it, dt, &o); });
        break;
      }
      case OptimKind::Adam: {
        auto o = *static_cast<const ops::AdamOptions*>(options);
        if (o.counter.data) add_address(s, o.counter.data);
        push(s, "optim_step", be(), !o.counter.data, [it, dt, o](uint64_t, uint64_t) { be().optim_step(OptimKind::Adam, it, dt, &o); });
        break;
      }
      case OptimKind::Rmsprop: {
        auto o = *static_cast<const ops::RmspropOptions*>(options);
        if (o.counter.data) add_address(s, o.counter.data);
        push(s, "optim_step", be(), !o.counter.data, [it, dt, o](uint64_t, uint64_t) { be().optim_step(OptimKind::Rmsprop, it, dt, &o); });
        break;
      }
      case OptimKind::Adamax: {
        auto o = *static_cast<const ops::AdamaxOptions*>(options);
        if (o.counter.data) add_address(s, o.counter.data);
        push(s, "optim_step", be(), !o.counter.data, [it, dt, o](uint64_t, uint64_t) { be().optim_step(OptimKind::Adamax, it, dt, &o); });
        break;
      }
      case OptimKind::Nadam: {  // mu_product too is host memory the step updates
        auto o = *static_cast<const ops::NadamOptions*>(options);
        if (o.counter.data) add_address(s, o.counter.data);
        add_address(s, o.mu_product.data);
        push(s, "optim_step", be(), false, [it, dt, o](uint64_t, uint64_t) { be().optim_step(OptimKind::Nadam, it, dt, &o); });
        break;
      }
      case OptimKind::Radam: {
        auto o = *static_cast<const ops::RadamOptions*>(options);
        if (o.counter.data) add_address(s, o.counter.data);
        push(s, "optim_step", be(), !o.counter.data, [it, dt, o](uint64_t, uint64_t) { be().optim_step(OptimKind::Radam, it, dt, &o); });
        break;
      }
      case OptimKind::Adagrad: {
        auto o = *static_cast<const ops::AdagradOptions*>(options);
        if (o.counter.data) add_address(s, o.counter.data);
        push(s, "optim_step", be(), !o.counter.data, [it, dt, o](uint64_t, uint64_t) { be().optim_step(OptimKind::Adagrad, it, dt, &o); });
        break;
      }
    }
  }

  static void copy_bytes(void* dst, Device dd, const void* src, Device sd, size_t nbytes) {
    Recording::State* s = recorder();
    if (!s) return be().copy_bytes(dst, dd, src, sd, nbytes);
    { InTable in(s); be().copy_bytes(dst, dd, src, sd, nbytes); }
    if (nbytes) add_address(s, dst), add_address(s, src);
    push(s, "copy_bytes", be(), !dd.is_cpu() && !sd.is_cpu(), [dst, dd, src, sd, nbytes](uint64_t, uint64_t) { be().copy_bytes(dst, dd, src, sd, nbytes); });
  }

  // Replays raise the index errors of the take/put kernels since the last check, as eagerly.
  static void check_kernel_errors(const char* op) {
    Recording::State* s = recorder();
    if (!s) return be().check_kernel_errors(op);
    { InTable in(s); be().check_kernel_errors(op); }
    push(s, "check_kernel_errors", be(), false, [op](uint64_t, uint64_t) { be().check_kernel_errors(op); });
  }

  static void reduce_rows(ReduceKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t* idx,
                          int64_t rows, int64_t len) {
    Recording::State* s = recorder();
    if (!s) return be().reduce_rows(kind, in, in_dt, out, out_dt, idx, rows, len);
    { InTable in_table(s); be().reduce_rows(kind, in, in_dt, out, out_dt, idx, rows, len); }
    if (rows > 0) {
      if (len > 0) add_address(s, in);
      if (out) add_address(s, out);
      if (idx) add_address(s, idx);
    }
    push(s, "reduce_rows", be(), true, [=](uint64_t, uint64_t) { be().reduce_rows(kind, in, in_dt, out, out_dt, idx, rows, len); });
  }

  static void scan_rows(ScanKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t rows,
                        int64_t len) {
    Recording::State* s = recorder();
    if (!s) return be().scan_rows(kind, in, in_dt, out, out_dt, rows, len);
    { InTable in_table(s); be().scan_rows(kind, in, in_dt, out, out_dt, rows, len); }
    if (rows > 0 && len > 0) add_address(s, in), add_address(s, out);
    push(s, "scan_rows", be(), true, [=](uint64_t, uint64_t) { be().scan_rows(kind, in, in_dt, out, out_dt, rows, len); });
  }

  static void gemm(DType dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                   const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                   double beta, void* c, int64_t ldc, int64_t stride_c, int64_t batch) {
    Recording::State* s = recorder();
    if (!s)
      return be().gemm(dt, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                       stride_c, batch);
    {
      InTable in(s);
      be().gemm(dt, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                batch);
    }
    if (m > 0 && n > 0 && batch > 0) {
      if (k > 0) add_address(s, a), add_address(s, b);
      add_address(s, c);
    }
    push(s, "gemm", be(), true, [=](uint64_t, uint64_t) {
      be().gemm(dt, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                batch);
    });
  }

  static void take(DType dt, void* out, const void* src, const int64_t* offsets, int64_t n, int64_t src_extent,
                   Scalar fill) {
    Recording::State* s = recorder();
    if (!s) return be().take(dt, out, src, offsets, n, src_extent, fill);
    { InTable in(s); be().take(dt, out, src, offsets, n, src_extent, fill); }
    if (n > 0) add_address(s, out), add_address(s, offsets);
    if (n > 0 && src_extent > 0) add_address(s, src);
    push(s, "take", be(), true, [=](uint64_t, uint64_t) { be().take(dt, out, src, offsets, n, src_extent, fill); });
  }

  static void put(DType dt, void* dst, const int64_t* offsets, const void* values, int64_t n, int64_t dst_extent,
                  bool accumulate) {
    Recording::State* s = recorder();
    if (!s) return be().put(dt, dst, offsets, values, n, dst_extent, accumulate);
    { InTable in(s); be().put(dt, dst, offsets, values, n, dst_extent, accumulate); }
    if (n > 0) add_address(s, offsets), add_address(s, values);
    if (n > 0 && dst_extent > 0) add_address(s, dst);
    push(s, "put", be(), true, [=](uint64_t, uint64_t) { be().put(dt, dst, offsets, values, n, dst_extent, accumulate); });
  }

  static Tensor reduce(Reduction kind, const Tensor& x, const ReduceSpec& spec, const ReduceArgs& args) {
    Recording::State* s = recorder();
    if (!s) return be().reduce(kind, x, spec, args);
    Tensor r;
    { InTable in(s); r = be().reduce(kind, x, spec, args); }
    Tensor idx = args.indices ? *args.indices : Tensor();
    check_contiguous(s, r, "reduction"), check_contiguous(s, idx, "reduction");
    add_tensor(s, x), add_tensor(s, r), add_tensor(s, idx);
    push(s, "reduce", be(), false, [kind, x, spec, args, r, idx](uint64_t, uint64_t) {
      Tensor fresh_idx;
      ReduceArgs a = args;
      a.indices = idx.defined() ? &fresh_idx : nullptr;
      copy_over(r, be().reduce(kind, x, spec, a));
      copy_over(idx, fresh_idx);
    });
    set_accesses(s, {&x, &r, &idx}, 1);
    return r;
  }

  static Tensor scan(ScanKind kind, const Tensor& x, int d, DType out) {
    Recording::State* s = recorder();
    if (!s) return be().scan(kind, x, d, out);
    Tensor r;
    { InTable in(s); r = be().scan(kind, x, d, out); }
    check_contiguous(s, r, "scan");
    add_tensor(s, x), add_tensor(s, r);
    push(s, "scan", be(), false, [kind, x, d, out, r](uint64_t, uint64_t) { copy_over(r, be().scan(kind, x, d, out)); });
    return r;
  }

  static void matmul(Tensor A, Tensor B, Tensor& C, const Dims& bshape, int64_t batch, const Scalar& alpha,
                     const Scalar& beta, bool use_beta) {
    Recording::State* s = recorder();
    if (!s) return be().matmul(A, B, C, bshape, batch, alpha, beta, use_beta);
    { InTable in(s); be().matmul(A, B, C, bshape, batch, alpha, beta, use_beta); }
    add_tensor(s, A), add_tensor(s, B), add_tensor(s, C);
    push(s, "matmul", be(), false, [A, B, C, bshape, batch, alpha, beta, use_beta](uint64_t, uint64_t) {
      Tensor c = C;
      be().matmul(A, B, c, bshape, batch, alpha, beta, use_beta);
    });
    set_accesses(s, {&A, &B, &C}, 2);
    if (cpu::MatVec g; &be() == &kCpuBackend && cpu::as_matvec(A, B, C, batch, alpha, beta, use_beta, &g))
      s->tape->steps.back().gemv = std::make_shared<const cpu::MatVec>(g);
  }

  static void sort(const char* op, const Tensor& x, int d, int64_t k, bool descending, Tensor& values,
                   Tensor& indices) {
    Recording::State* s = recorder();
    if (!s) return be().sort(op, x, d, k, descending, values, indices);
    { InTable in(s); be().sort(op, x, d, k, descending, values, indices); }
    add_tensor(s, x), add_tensor(s, values), add_tensor(s, indices);
    push(s, "sort", be(), false, [op, x, d, k, descending, values, indices](uint64_t, uint64_t) {
      Tensor v = values, i = indices;
      be().sort(op, x, d, k, descending, v, i);
    });
  }

  static void host(const char* op, std::span<const Tensor* const> operands, size_t reads,
                   const std::function<void()>& work) {
    Recording::State* s = recorder();
    if (!s) return be().host(op, operands, reads, work);
    { InTable in(s); be().host(op, operands, reads, work); }
    for (const Tensor* t : operands) add_tensor(s, *t);
    push(s, "host", be(), false, [work](uint64_t, uint64_t) { work(); });
    set_accesses(s, operands, reads);
  }

  static DeviceBackend table() {
    DeviceBackend t = Base();
    auto wrap = [](auto& entry, auto recording) {
      if (entry) entry = recording;
    };
    wrap(t.copy_bytes, copy_bytes);
    wrap(t.check_kernel_errors, check_kernel_errors);
    wrap(t.unary, unary);
    wrap(t.binary, binary);
    wrap(t.copy, copy);
    wrap(t.fill, fill);
    wrap(t.where, where);
    wrap(t.clamp, clamp);
    wrap(t.random, random);
    wrap(t.reduce_rows, reduce_rows);
    wrap(t.scan_rows, scan_rows);
    wrap(t.gemm, gemm);
    wrap(t.take, take);
    wrap(t.put, put);
    wrap(t.optim_step, optim_step);
    wrap(t.reduce, reduce);
    wrap(t.scan, scan);
    wrap(t.matmul, matmul);
    wrap(t.sort, sort);
    wrap(t.host, host);
    return t;
  }
};

const DeviceBackend& cpu_table() { return kCpuBackend; }

const DeviceBackend kRecordingCpuBackend = Rec<cpu_table>::table();

}  // namespace

namespace detail {

void host_access_slow() {
  if (Recording::State* s = recorder())
    break_with(s, std::string(s->op) + ": reads or writes tensor data on the host (a value read into Lua, "
                                       "printing, or an op without a device-table path)");
}

void allocated_slow(const std::shared_ptr<Storage>& st) {
  if (Recording::State* s = t_rec) s->tape->retained.push_back(st);
}

const DeviceBackend& recording_device_table() {
  static const DeviceBackend table = Rec<cuda_backend_table>::table();
  return table;
}

}  // namespace detail

namespace {

// A fused group runs chunk by chunk: each chunk of kFuseChunk elements goes through every
// step of the group while its operands sit in L1, and a buffer that only the group's steps
// use (an intermediate such as a * b in (a * b + c):relu()) lives in a chunk-sized scratch
// instead of memory. Measured on the 2-core Zen 4 of bench/results.md with plain loops over
// 1e6 float32 (a * b + c):relu(), 2 threads: three passes 200-300 us, chunks of 256-1024 with
// scratch 100-105 us, of 4096 166-266 us, one hand-fused loop 92-115 us. Groups of any size
// fuse: below a chunk a group still saves each step's dispatch (a compiled linear-regression
// step on 100 elements, callgrind: 47.4k -> 45.9k instructions a replay).
constexpr int64_t kFuseChunk = 1024;

// A fused group runs on the engine's threads from this many elements, a quarter of eager
// pointwise ops' kParallelGrain: in a replay the workers are awake (they spin after the
// product before it), and a group split in halves as the products are finds each half of a
// product's result in the cache of the core that wrote it. Measured 2026-11-27 on the 2-core
// Zen 4 (best of 7 x 200 steps, grain 2^18 / 2^16): the compiled two-layer step float32
// 250 / 214 us (its 100k-element w1 update), float64 440 / 408 us, (a * b + c):relu() on
// 1e5 float32 28 / 17-23 us, on 1e6 199 / 183-199 us; 2^15 and 2^14 measured no better.
constexpr int64_t kFuseParallelGrain = 65536;

struct Operand {
  const char* base;
  int64_t stride;  // bytes
  bool written;
};

// The bytes an operand's n elements may touch (elements of at most 16 bytes).
std::pair<const char*, const char*> bytes_of(const Operand& o, int64_t n) {
  const int64_t span = (n - 1) * o.stride;
  return {o.base + std::min<int64_t>(0, span), o.base + std::max<int64_t>(0, span) + 16};
}

// Whether operand x, over n elements, either overlaps no operand of `group` where one of the
// two writes, or walks exactly the same addresses as that operand (so each element depends
// only on the same element of the group's earlier steps, and chunks are independent).
bool walks_with(const Operand& x, const std::vector<Operand>& group, int64_t n) {
  for (const Operand& y : group) {
    if (!x.written && !y.written) continue;
    auto [xl, xh] = bytes_of(x, n);
    auto [yl, yh] = bytes_of(y, n);
    if (xh <= yl || yh <= xl) continue;
    if (x.base != y.base || x.stride != y.stride || x.stride == 0) return false;
  }
  return true;
}

// Whether pointwise step p can join a group over n elements whose operands are `group`: a
// CPU step of real dtypes (a group runs on the host's threads, through the CPU kernels'
// inner loops), flat over the same n elements, writing no broadcast operand, each operand
// walking with the group's. p's operands go to *mine.
bool fusable(const Pointwise& p, int64_t n, const std::vector<Operand>& group, std::vector<Operand>* mine) {
  const TensorIter& it = p.it;
  if (p.be != &kCpuBackend || it.ndim() != 1 || it.numel() != n || is_complex(p.dt) || is_complex(p.dt2)) return false;
  mine->clear();
  for (int o = 0; o < it.ntensors(); ++o) {
    mine->push_back({it.data(o), it.strides(o)[0], o == 0});
    if (o == 0 && it.strides(o)[0] == 0) return false;
  }
  return std::all_of(mine->begin(), mine->end(), [&](const Operand& x) { return walks_with(x, group, n); });
}

}  // namespace

// A fused group's steps as the CPU kernels' inner loops over slots: memory (an address and a
// byte stride) or a scratch area of one chunk per thread.
struct FusedProgram {
  struct Slot {
    const char* base;
    int64_t stride;
    int64_t scratch = -1;  // offset in the thread's scratch, or -1 for memory
    int output = -1;       // memory given to each replay (Tape::bind_output), or -1 for base
  };
  struct Op {
    TensorIter::Loop loop;
    int operands;
    int slot[TensorIter::kMaxOperands];
    int64_t stride[TensorIter::kMaxOperands];
  };
  int64_t n = 0;
  std::vector<Slot> slots;
  std::vector<Op> ops;
  int64_t scratch_bytes = 0;
  bool binds_outputs = false;

  // outputs: the memory of the slots bound as outputs (Tape::bind_output), by index.
  void run(char* const* outputs) const {
    const int64_t chunks = (n + kFuseChunk - 1) / kFuseChunk;
    parallel_for(0, chunks, kFuseParallelGrain / kFuseChunk, [&](int64_t c0, int64_t c1) {
      run_range(c0 * kFuseChunk, std::min(n, c1 * kFuseChunk), outputs);
    });
  }

  // Elements [lo, hi), chunk by chunk, on the calling thread.
  void run_range(int64_t lo, int64_t hi, char* const* outputs) const {
    thread_local std::vector<char> scratch;
    if (int64_t(scratch.size()) < scratch_bytes) scratch.resize(size_t(scratch_bytes));
    char* ptrs[TensorIter::kMaxOperands];
    for (int64_t at = lo; at < hi; at += kFuseChunk) {
      const int64_t len = std::min(kFuseChunk, hi - at);
      for (const Op& op : ops) {
        for (int k = 0; k < op.operands; ++k) {
          const Slot& s = slots[size_t(op.slot[k])];
          char* base = s.output >= 0 ? outputs[s.output] : const_cast<char*>(s.base);
          ptrs[k] = s.scratch >= 0 ? scratch.data() + s.scratch : base + at * s.stride;
        }
        op.loop(ptrs, op.stride, len);
      }
    }
  }
};

namespace {

// The steps [first, last).
std::vector<size_t> step_range(size_t first, size_t last) {
  std::vector<size_t> steps(last - first);
  std::iota(steps.begin(), steps.end(), first);
  return steps;
}

// Whether only the pointwise steps `group` of t (in tape order) touch the block [lo, hi), all
// through the slot (base, stride), the first of them writing it without reading it: no value
// in the block crosses a chunk, a replay or the group's end.
bool group_owns(const Tape& t, const std::vector<size_t>& group, const char* lo, const char* hi, const char* base,
                int64_t stride) {
  auto inside = [&](const char* a) { return a >= lo && a < hi; };
  const auto touches = std::count_if(t.addresses.begin(), t.addresses.end(), inside);
  int64_t mine = 0;
  bool first_touch = true;
  for (size_t k : group) {
    const TensorIter& it = t.steps[k].pointwise->it;
    bool reads = false, writes = false;
    for (int o = 0; o < it.ntensors(); ++o) {
      if (!inside(it.data(o))) continue;
      if (it.data(o) != base || it.strides(o)[0] != stride) return false;
      ++mine;
      (o == 0 ? writes : reads) = true;
    }
    if (first_touch && (reads || writes)) {
      if (reads) return false;
      first_touch = false;
    }
  }
  return mine == touches;
}

// The block the recording allocated that holds address p, or null.
const std::shared_ptr<Storage>* retained_block(const Tape& t, const void* p) {
  for (const auto& st : t.retained) {
    const char* lo = static_cast<const char*>(st->data());
    if (p >= lo && p < lo + st->nbytes()) return &st;
  }
  return nullptr;
}

// Whether the slot (base, stride) of the group of t can live in scratch: its block is one
// the recording allocated that nothing outside the tape holds any more (the caller collected
// the garbage first), and the group owns it.
bool scratch_only(const Tape& t, const std::vector<size_t>& group, const char* base, int64_t stride) {
  if (stride <= 0 || stride > 16) return false;
  const auto* block = retained_block(t, base);
  if (!block || block->use_count() != 1) return false;
  const char* lo = static_cast<const char*>((*block)->data());
  return group_owns(t, group, lo, lo + (*block)->nbytes(), base, stride);
}

// The fused program of the pointwise steps `group` of t over n elements, or null when a
// step's kernel does not hand over exactly one inner loop.
std::shared_ptr<FusedProgram> make_program(const Tape& t, const std::vector<size_t>& group, int64_t n) {
  auto prog = std::make_shared<FusedProgram>();
  prog->n = n;
  auto slot_of = [&](const char* base, int64_t stride) {
    for (size_t i = 0; i < prog->slots.size(); ++i)
      if (prog->slots[i].base == base && prog->slots[i].stride == stride) return int(i);
    FusedProgram::Slot s{base, stride};
    if (scratch_only(t, group, base, stride)) {
      s.scratch = prog->scratch_bytes;
      prog->scratch_bytes += (kFuseChunk * stride + 63) / 64 * 64;
    }
    prog->slots.push_back(s);
    return int(prog->slots.size() - 1);
  };
  for (size_t k : group) {
    const Pointwise& p = *t.steps[k].pointwise;
    FusedProgram::Op op;
    int calls = 0;
    try {
      p.run(p.it.loop_taker(&op.loop, &calls));
    } catch (const Error&) {
      return nullptr;
    }
    if (calls != 1 || !op.loop) return nullptr;
    op.operands = p.it.ntensors();
    for (int o = 0; o < op.operands; ++o) {
      op.stride[o] = p.it.strides(o)[0];
      op.slot[o] = slot_of(p.it.data(o), op.stride[o]);
    }
    prog->ops.push_back(std::move(op));
  }
  return prog;
}

}  // namespace

// Two matrix-vector products over one float32 or float64 matrix M, first M x1 and later M^T x2, with
// pointwise steps over M's rows between them: the gradient of a linear model's loss (least
// squares: r = y - M x, then M^T r). A replay runs them in one parallel region
// (cpu::matvec_pair): each thread takes its part of M's rows through M x1, the pointwise
// steps and its part of M^T x2, one region instead of two and a serial middle, with the
// middle's vectors still in the cache of the core that wrote them. The steps between that do
// not work row by row (the loss's dot product, a fill) run before or after that region.
struct ProductPair {
  cpu::MatVec first, second;
  std::shared_ptr<FusedProgram> rows;  // the pointwise steps over the rows, or null when none
};

namespace {

// How far after a product the tape is searched for its pair's second product.
constexpr size_t kPairReach = 64;

bool conflict(const std::vector<Access>& a, const std::vector<Access>& b) {
  for (const Access& x : a)
    for (const Access& y : b)
      if ((x.writes || y.writes) && x.lo < y.hi && y.lo < x.hi) return true;
  return false;
}

std::vector<Access> gemv_accesses(const cpu::MatVec& g) {
  const char* M = static_cast<const char*>(g.M);
  const char* x = static_cast<const char*>(g.x);
  const char* y = static_cast<const char*>(g.y);
  const int64_t item = int64_t(dtype_size(g.dtype)), xn = g.trans ? g.rows : g.cols, yn = g.trans ? g.cols : g.rows;
  return {{M, M + ((g.rows - 1) * g.lda + g.cols) * item, false}, {x, x + xn * item, false}, {y, y + yn * item, true}};
}

// The memory step k reaches, or false when the tape does not know it.
bool step_accesses(const Tape& t, size_t k, std::vector<Access>* out) {
  const Tape::Step& st = t.steps[k];
  out->clear();
  if (st.table != &kCpuBackend) return false;
  if (!st.pointwise) {
    *out = st.accesses;
    return st.accesses_known;
  }
  const TensorIter& it = st.pointwise->it;
  for (int o = 0; it.numel() > 0 && o < it.ntensors(); ++o) {
    const auto [lo, hi] =
        offset_range(it.ndim(), [&](int d) { return it.shape()[d]; }, [&](int d) { return it.strides(o)[d]; });
    out->push_back({it.data(o) + lo, it.data(o) + hi + 16, o == 0});  // elements of at most 16 bytes
  }
  return true;
}

// The product pair whose first product is step i, as the segment of the tape it makes (with
// a null pair when there is none). The pointwise steps between that run flat over M's rows
// join the pass when they walk with each other, the first product's result and the second's
// x (walks_with); each other step between must have known memory, and moves before the
// first product or after the second when it conflicts with nothing it would then pass.
Tape::Segment find_pair(const Tape& t, size_t i) {
  Tape::Segment seg{i, i + 1, nullptr, 0, 0, nullptr, {}, {}, {}};
  const std::shared_ptr<const cpu::MatVec>& f = t.steps[i].gemv;
  if (!f || f->trans) return seg;
  // The memory of each step between the products, by k - i (found while looking for the
  // second product).
  std::vector<std::vector<Access>> between(1);
  size_t j = i + 1;
  for (; j < t.steps.size() && j <= i + kPairReach; ++j) {
    const auto& g = t.steps[j].gemv;
    if (g && g->trans && g->dtype == f->dtype && g->M == f->M && g->rows == f->rows && g->cols == f->cols &&
        g->lda == f->lda)
      break;
    if (!step_accesses(t, j, &between.emplace_back())) return seg;
  }
  if (j >= t.steps.size() || j > i + kPairReach) return seg;
  auto pair = std::make_shared<ProductPair>();
  pair->first = *f;
  pair->second = *t.steps[j].gemv;
  const int64_t n = f->rows, item = int64_t(dtype_size(f->dtype));
  const std::vector<Access> first = gemv_accesses(pair->first), second = gemv_accesses(pair->second);
  // Each product's result apart from every vector and M (its threads write it while the
  // others read those).
  if (conflict({first[2]}, {first[0], first[1]}) || conflict({second[2]}, {first[0], first[1], first[2], second[1]}))
    return seg;

  // The row steps.
  std::vector<Operand> group{{static_cast<const char*>(f->y), item, true}}, mine;
  for (size_t k = i + 1; k < j; ++k) {
    const Pointwise* p = t.steps[k].pointwise.get();
    if (p && fusable(*p, n, group, &mine)) {
      group.insert(group.end(), mine.begin(), mine.end());
      seg.row_steps.push_back(k);
    }
  }
  if (!walks_with({static_cast<const char*>(pair->second.x), item, false}, group, n)) return seg;
  std::vector<Access> rows_memory;  // the row steps' and the vectors between the products
  for (const Operand& o : group) {
    auto [lo, hi] = bytes_of(o, n);
    rows_memory.push_back({lo, hi, o.written});
  }
  if (conflict(rows_memory, {first[0], first[1], second[2]})) return seg;

  // The other steps: before the first product if they can pass it and the row steps before
  // them (and the steps already sent after), else after the second product if they can pass
  // it and the row steps after them.
  std::vector<Access> sent_after;
  for (size_t k = i + 1; k < j; ++k) {
    if (std::binary_search(seg.row_steps.begin(), seg.row_steps.end(), k)) continue;
    const std::vector<Access>& mem = between[k - i];
    auto rows_around = [&](bool earlier) {
      std::vector<Access> m;
      for (size_t r : seg.row_steps)
        if ((r < k) == earlier) m.insert(m.end(), between[r - i].begin(), between[r - i].end());
      return m;
    };
    if (!conflict(mem, first) && !conflict(mem, rows_around(true)) && !conflict(mem, sent_after)) {
      seg.before.push_back(k);
    } else if (!conflict(mem, second) && !conflict(mem, rows_around(false))) {
      seg.after.push_back(k);
      sent_after.insert(sent_after.end(), mem.begin(), mem.end());
    } else {
      return seg;
    }
  }
  if (!seg.row_steps.empty() && !(pair->rows = make_program(t, seg.row_steps, n))) return seg;
  if (pair->rows)
    for (const FusedProgram::Slot& s : pair->rows->slots) seg.scratch += s.scratch >= 0;
  seg.last = j + 1;
  seg.pair = std::move(pair);
  return seg;
}

// Groups runs of pointwise steps over the same flat iteration into fused programs, and
// product pairs (tape.segments).
void plan_segments(Tape& t) {
  t.segments.clear();
  std::vector<Operand> group, mine;
  size_t i = 0;
  while (i < t.steps.size()) {
    if (Tape::Segment pair = find_pair(t, i); pair.pair) {
      i = pair.last;
      t.segments.push_back(std::move(pair));
      continue;
    }
    size_t j = i + 1;
    const Pointwise* first = t.steps[i].pointwise.get();
    const int64_t n = first ? first->it.numel() : 0;
    std::shared_ptr<FusedProgram> program;
    if (first && n > 0 && fusable(*first, n, {}, &mine)) {
      group = mine;
      while (j < t.steps.size() && t.steps[j].pointwise && fusable(*t.steps[j].pointwise, n, group, &mine)) {
        group.insert(group.end(), mine.begin(), mine.end());
        ++j;
      }
      if (j - i > 1) program = make_program(t, step_range(i, j), n);
      if (!program) j = i + 1;
    }
    int scratch = 0;
    if (program)
      for (const FusedProgram::Slot& s : program->slots) scratch += s.scratch >= 0;
    t.segments.push_back({i, j, std::move(program), scratch, 0, nullptr, {}, {}, {}});
    i = j;
  }
}

// The profiler's name of a segment: "compiled:<op>", "compiled:fused(<op>, <op>, ...)" or
// "compiled:pair(<op>, ...)".
std::string segment_name(const Tape& t, const Tape::Segment& g) {
  if (g.last - g.first == 1) return std::string("compiled:") + t.steps[g.first].op;
  std::string name = g.pair ? "compiled:pair(" : "compiled:fused(";
  for (size_t k = g.first; k < g.last; ++k) name += std::string(k > g.first ? ", " : "") + t.steps[k].op;
  return name + ")";
}

// Whether the tape replays as one graph (tape.graph_table), or why not (tape.graph_reason).
void plan_graph(Tape& t) {
  t.graph_table = nullptr;
  if (t.steps.empty()) return void(t.graph_reason = "no device work");
  const DeviceBackend* table = t.steps.front().table;
  for (const Tape::Step& st : t.steps) {
    if (!st.table->graph_begin)
      return void(t.graph_reason = std::string(st.op) + " runs on " + st.table->name + ", which has no graphs");
    if (!st.graphable) return void(t.graph_reason = std::string(st.op) + "'s " + st.entry + " call");
    if (st.table != table) return void(t.graph_reason = "work on two device types");
  }
  if (table->device_count() != 1) return void(t.graph_reason = "more than one device");
  t.graph_table = table;
  t.graph_reason.clear();
}

}  // namespace

// Captures the steps into a graph (the first replay of a graphable tape): the captured work
// does not run, so the caller launches the graph, or runs the steps if the capture failed.
void Tape::capture_graph() const {
  graph_tried = true;
  const DeviceBackend& be = *graph_table;
  void* g = nullptr;
  try {
    be.graph_begin(0);
    try {
      for (const Step& st : steps) st.run(0, 0);
    } catch (...) {
      if (void* partial = be.graph_end(0)) be.graph_free(partial);
      throw;
    }
    g = be.graph_end(0);
  } catch (const Error&) {
    g = nullptr;
  }
  if (g) graph = std::shared_ptr<void>(g, be.graph_free);
  else graph_reason = "the CUDA graph capture failed";
}

void Tape::replay(char* const* outputs) const {
  if (graph_table) {
    if (!graph_tried) capture_graph();
    if (graph) {
      profiler::Range range(profiler::recording() ? profiler::begin("compiled:cuda_graph") : -1);
      graph_table->graph_launch(graph.get(), 0);
      return;
    }
  }
  uint64_t seed = 0, shift = 0;
  if (uses_random) {
    Generator::Draw d = default_generator().reserve(int64_t(random_blocks), 4);
    seed = d.seed;
    shift = d.offset - start_offset;
  }
  for (const Segment& g : segments) {
    profiler::Range range(profiler::recording() ? profiler::begin(segment_name(*this, g)) : -1);
    if (const ProductPair* p = g.pair.get()) {
      for (size_t k : g.before) steps[k].run(seed, shift);
      cpu::matvec_pair(p->first, p->second, [p](int64_t lo, int64_t hi) {
        if (p->rows) p->rows->run_range(lo, hi, nullptr);
      });
      for (size_t k : g.after) steps[k].run(seed, shift);
      continue;
    }
    if (g.last - g.first == 1) {
      steps[g.first].run(seed, shift);
      continue;
    }
    TIDE_ASSERT(outputs || !g.program->binds_outputs);
    g.program->run(outputs);
  }
}

bool Tape::touches(const void* p, size_t nbytes) const {
  const char* lo = static_cast<const char*>(p);
  return std::any_of(addresses.begin(), addresses.end(), [&](const char* a) { return a >= lo && a < lo + nbytes; });
}

bool Tape::touches_only(std::vector<std::pair<const char*, size_t>> known) const {
  for (const auto& st : retained) known.emplace_back(static_cast<const char*>(st->data()), st->nbytes());
  return std::all_of(addresses.begin(), addresses.end(), [&](const char* a) {
    return std::any_of(known.begin(), known.end(), [&](const auto& r) { return a >= r.first && a < r.first + r.second; });
  });
}

size_t Tape::retained_bytes() const {
  size_t n = 0;
  for (const auto& st : retained) n += st->nbytes();
  return n;
}

Recording::Recording() : state_(std::make_unique<State>()) {
  TIDE_CHECK(t_rec == nullptr, "torch.compile: a recording is already running on this thread");
  Generator& g = default_generator();
  state_->generator = &g;
  state_->seed = g.seed();
  state_->start_offset = g.offset();
  state_->tape->start_offset = state_->start_offset;
  t_rec = state_.get();
  if (detail::g_active.fetch_add(1) == 0) detail::g_cpu_backend.store(&kRecordingCpuBackend);
}

Recording::~Recording() {
  t_rec = nullptr;
  if (detail::g_active.fetch_sub(1) == 1) detail::g_cpu_backend.store(&kCpuBackend);
}

std::shared_ptr<Tape> Recording::finish() {
  State* s = state_.get();
  Generator& g = default_generator();
  if (&g != s->generator || g.seed() != s->seed || g.offset() < s->start_offset)
    break_with(s, "the default generator was reseeded or replaced (torch.manual_seed inside the function)");
  if (s->broken) return nullptr;
  s->tape->random_blocks = g.offset() - s->start_offset;
  return s->tape;
}

void Tape::plan() {
  TIDE_ASSERT(outputs == 0);  // (outputs are bound to a planned tape)
  plan_segments(*this);
  plan_graph(*this);
}

int Tape::bind_output(const Storage* block) {
  if (!block || block->nbytes() == 0) return -1;
  const auto* kept = retained_block(*this, block->data());
  if (!kept || kept->get() != block) return -1;
  const char* lo = static_cast<const char*>(block->data());
  for (Segment& g : segments) {
    if (!g.program) continue;
    for (FusedProgram::Slot& s : g.program->slots) {
      if (s.base != lo || s.scratch >= 0 || s.output >= 0 || s.stride <= 0 || s.stride * g.program->n != int64_t(block->nbytes()))
        continue;
      if (!group_owns(*this, step_range(g.first, g.last), lo, lo + block->nbytes(), s.base, s.stride)) return -1;
      s.output = outputs++;
      g.program->binds_outputs = true;
      ++g.outputs;
      return s.output;
    }
  }
  return -1;
}

bool Tape::fuses() const {
  return std::any_of(segments.begin(), segments.end(), [](const Segment& g) { return g.program || g.pair; });
}

const std::string& Recording::reason() const { return state_->reason; }

bool recording_here() { return t_rec != nullptr; }
void set_current_op(const char* op) {
  if (t_rec) t_rec->op = op;
}
bool broken_here() { return t_rec && t_rec->broken; }
void set_break_location(const std::string& where) {
  if (t_rec && t_rec->broken && !t_rec->located) {
    t_rec->reason += " at " + where;
    t_rec->located = true;
  }
}
void mark_broken(std::string reason) {
  if (t_rec) break_with(t_rec, std::move(reason));
}

}  // namespace tide::capture
