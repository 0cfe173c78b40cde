// Reductions, scans and sorting on the CPU.
//
// One engine serves every reduction. The input's dims are put in memory order, size-1 dims
// dropped and neighbours merged, which leaves one of two layouts:
//  - INNER: the innermost (unit-stride) dim is reduced. Each output reduces contiguous runs;
//    a run is cut into leaves of kLeaf elements, each leaf reduced with several independent
//    lanes (which the compiler turns into SIMD), and the leaves combined pairwise.
//  - OUTER: the innermost dim is kept (e.g. sum over dim 1 of a row-major matrix). Whole rows
//    are accumulated into an output row, vectorised along the contiguous dim, in column tiles
//    of kTile; groups of kRowLeaf rows are combined pairwise for accuracy.
// Other layouts (overlapping or expanded views, no unit stride) are copied contiguous first.
//
// Determinism: leaf and tile boundaries depend only on the shape, and partial results are
// always combined in the same order whether the work ran on one thread or many, so results
// are bit-identical for every torch.set_num_threads.
#include "reduce.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "../backend.hpp"
#include "complex.hpp"
#include "../parallel.hpp"
#include "creation.hpp"
#include "elementwise.hpp"
#include "shape.hpp"

// The per-leaf and per-row kernels are called once per block of work; keeping them out of
// line keeps this file's code size (and compile time) down at no measurable cost.
#if defined(__GNUC__)
#define TIDE_NOINLINE __attribute__((noinline))
#else
#define TIDE_NOINLINE
#endif

namespace tide::ops {

namespace {

constexpr int64_t kLeaf = 4096;         // elements per leaf of a contiguous run
constexpr int64_t kRowLeaf = 16;        // rows accumulated directly before pairwise combining
constexpr int64_t kTile = 2048;         // columns per tile of an OUTER reduction
constexpr int64_t kSerialWork = 32768;  // elements of work a parallel chunk gets at least

// 1-based spelling of a 0-based (or negative) dim, for messages.
int64_t user_dim(int64_t d) { return d >= 0 ? d + 1 : d; }

int norm_dim(const char* op, int64_t d, int ndim) {
  int n = std::max(ndim, 1);
  if (d >= -n && d < n) return int(d < 0 ? d + n : d);
  TIDE_FAIL(op, ": dim ", user_dim(d), " is out of range for a tensor of ", ndim, " dims (valid 1..", n,
            " or -", n, "..-1)");
}

// ---------------------------------------------------------------------------------------
// Which dims are reduced, and the shapes of the result.

struct RedSpec {
  bool red[kMaxDims] = {};
  Dims keep_shape;  // reduced dims have size 1 (the layout outputs are allocated in)
  Dims out_shape;   // keep_shape without the reduced dims (unless keepdim)
  int64_t count = 1;      // elements reduced into each output
  int64_t out_numel = 1;
  bool keepdim = false;
};

RedSpec make_spec(const char* op, const Tensor& x, const DimList& dims, bool keepdim) {
  RedSpec s;
  s.keepdim = keepdim;
  const int nd = x.dim();
  for (int d = 0; d < nd; ++d) s.red[d] = dims.empty();
  bool seen[kMaxDims] = {};
  for (int d0 : dims) {
    int d = norm_dim(op, d0, nd);
    if (nd == 0) continue;
    TIDE_CHECK(!seen[d], op, ": dim ", d + 1, " appears more than once in the list of dims");
    seen[d] = true;
    s.red[d] = true;
  }
  Dims reduced;
  for (int d = 0; d < nd; ++d) {
    if (s.red[d]) {
      reduced.push_back(x.size(d));
      s.keep_shape.push_back(1);
      if (keepdim) s.out_shape.push_back(1);
    } else {
      s.keep_shape.push_back(x.size(d));
      s.out_shape.push_back(x.size(d));
    }
  }
  // Each factor of an empty x's numel may pass int64 on its own: a result that large is an
  // error naming the op; a count that large goes with an empty result and is never used.
  s.out_numel = shape_numel(s.keep_shape, op);
  bool zero = false, overflow = false;
  for (int64_t r : reduced) {
    zero |= r == 0;
    overflow |= __builtin_mul_overflow(s.count, r, &s.count);
  }
  if (zero) s.count = 0;
  else if (overflow) s.count = INT64_MAX;
  return s;
}

// The result view: outputs are allocated with keep_shape (contiguous); without keepdim the
// reduced dims are dropped, which keeps the same memory.
Tensor finish(const Tensor& out, const RedSpec& s) {
  if (s.keepdim) return out;
  return out.as_strided(s.out_shape, contiguous_strides(s.out_shape), out.offset());
}

// "op: cannot reduce over an empty dim ..." for ops without an identity (max, argmax, ...).
void check_nonempty(const char* op, const Tensor& x, const RedSpec& s) {
  if (s.count != 0) return;
  for (int d = 0; d < x.dim(); ++d)
    if (s.red[d] && x.size(d) == 0)
      TIDE_FAIL(op, ": cannot reduce over an empty dim of size 0 (dim ", d + 1, " of a tensor of shape ",
                x.sizes().str(), "); give a dim whose size is not 0");
  TIDE_FAIL(op, ": cannot reduce over an empty tensor (shape ", x.sizes().str(), ")");
}

// ---------------------------------------------------------------------------------------
// Device reductions: x's kept dims first and its reduced dims last, made contiguous on the
// device, so that each output reduces one contiguous row (the backend's reduce_rows). The
// other reductions (mean, var, norm, logsumexp, all/any) are composed from these there.

// out (keep_shape, contiguous) = x's rows reduced by `kind`; idx gets the 1-based positions
// of the Arg kinds (out may then be undefined when only positions are wanted).
void reduce_on_device(ReduceKind kind, const Tensor& x, const RedSpec& s, const Tensor& out, const Tensor* idx) {
  if (s.out_numel == 0) return;
  if (s.count == 0) {  // only sum and prod get here (the others check for emptiness)
    Tensor o = out;
    fill_(o, Scalar(int64_t(kind == ReduceKind::Prod ? 1 : 0)));
    return;
  }
  Dims sizes, strides;
  for (bool reduced : {false, true})
    for (int d = 0; d < x.dim(); ++d)
      if (s.red[d] == reduced) {
        sizes.push_back(x.size(d));
        strides.push_back(x.stride(d));
      }
  Tensor rows = Tensor::make_view(x.storage(), sizes, strides, x.offset(), x.dtype()).contiguous();
  backend_for(x.device())
      .reduce_rows(kind, rows.data_ptr(), rows.dtype(), out.defined() ? out.data_ptr() : nullptr,
                   out.defined() ? out.dtype() : rows.dtype(), idx ? static_cast<int64_t*>(idx->data_ptr()) : nullptr,
                   s.out_numel, s.count);
}

// ---------------------------------------------------------------------------------------
// The layout plan.

struct PDim {
  int64_t size, in, out;
};

struct Plan {
  bool inner = true;  // INNER (a reduced run innermost) or OUTER (rows into an output row)
  int64_t n = 1;      // INNER: run length; OUTER: row width
  int64_t os = 1;     // OUTER: output stride between the row's columns
  int nk = 0, nr = 0;
  PDim k[kMaxDims];  // kept dims, outer to inner (without OUTER's row dim)
  PDim r[kMaxDims];  // reduced dims, outer to inner (without INNER's run dim)
  int64_t M = 1;     // INNER: outputs; OUTER: output rows
  int64_t C = 1;     // combinations of the reduced dims in r
};

// False when the layout needs a contiguous copy first.
bool make_plan(const Tensor& x, const RedSpec& s, Plan& p) {
  Dims ostr = contiguous_strides(s.keep_shape);
  struct E {
    int64_t size, in, out;
    bool red;
  } e[kMaxDims];
  int ne = 0;
  for (int d = 0; d < x.dim(); ++d) {
    if (x.size(d) == 1) continue;
    e[ne++] = {x.size(d), x.stride(d), s.red[d] ? 0 : ostr[d], s.red[d]};
  }
  for (int i = 1; i < ne; ++i)  // stable insertion sort, largest input stride first
    for (int j = i; j > 0 && e[j - 1].in < e[j].in; --j) std::swap(e[j - 1], e[j]);
  if (ne > 0 && e[ne - 1].in != 1) return false;
  for (int i = 0; i + 1 < ne; ++i)
    if (e[i].in < e[i + 1].in * e[i + 1].size) return false;  // overlapping (expanded) view
  int m = 0;
  for (int i = 0; i < ne; ++i) {
    if (m > 0 && e[m - 1].red == e[i].red && e[m - 1].in == e[i].in * e[i].size &&
        e[m - 1].out == e[i].out * e[i].size) {
      e[m - 1].size *= e[i].size;
      e[m - 1].in = e[i].in;
      e[m - 1].out = e[i].out;
    } else {
      e[m++] = e[i];
    }
  }
  ne = m;
  if (ne == 0 || e[ne - 1].red) {
    p.inner = true;
    p.n = ne ? e[ne - 1].size : 1;
  } else {
    p.inner = false;
    p.n = e[ne - 1].size;
    p.os = e[ne - 1].out;
  }
  if (ne > 0) --ne;
  for (int i = 0; i < ne; ++i) {
    if (e[i].red) {
      p.r[p.nr++] = {e[i].size, e[i].in, 0};
      p.C *= e[i].size;
    } else {
      p.k[p.nk++] = {e[i].size, e[i].in, e[i].out};
      p.M *= e[i].size;
    }
  }
  return true;
}

// Row-major walk over a few dims with two offsets (input and output) at once.
struct Walk {
  int nd = 0;
  int64_t size[kMaxDims], s0[kMaxDims], s1[kMaxDims], idx[kMaxDims];
  int64_t o0 = 0, o1 = 0;
  Walk(const PDim* d, int n) : nd(n) {
    for (int i = 0; i < n; ++i) size[i] = d[i].size, s0[i] = d[i].in, s1[i] = d[i].out;
  }
  void seek(int64_t lin) {
    o0 = o1 = 0;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = lin % size[d];
      lin /= size[d];
      o0 += idx[d] * s0[d];
      o1 += idx[d] * s1[d];
    }
  }
  void next() {
    for (int d = nd - 1; d >= 0; --d) {
      o0 += s0[d];
      o1 += s1[d];
      if (++idx[d] < size[d]) return;
      o0 -= s0[d] * size[d];
      o1 -= s1[d] * size[d];
      idx[d] = 0;
    }
  }
};

// Pairwise combination of a stream of partial results (a binary counter of partial sums):
// the tree depends only on how many partials were pushed.
template <class Op>
struct Cascade {
  using A = typename Op::acc_t;
  const Op& op;
  A st[66];
  int top = 0;
  uint64_t cnt = 0;
  explicit Cascade(const Op& o) : op(o) {}
  void push(const A& v) {
    st[top++] = v;
    for (uint64_t c = ++cnt; (c & 1) == 0; c >>= 1) {
      st[top - 2] = op.combine(st[top - 2], st[top - 1]);
      --top;
    }
  }
  A result() const {
    if (top == 0) return op.identity();
    A a = st[top - 1];
    for (int i = top - 2; i >= 0; --i) a = op.combine(st[i], a);
    return a;
  }
};

// The same for rows of w partial results; slots live in caller-provided scratch.
template <class Op>
struct RowCascade {
  using A = typename Op::acc_t;
  const Op& op;
  A* st;
  int64_t w;
  int top = 0;
  uint64_t cnt = 0;
  RowCascade(const Op& o, A* scratch, int64_t width) : op(o), st(scratch), w(width) {}
  A* slot(int i) const { return st + i * w; }
  A* next_slot() const { return slot(top); }
  void merge(A* a, const A* b) const {
    for (int64_t j = 0; j < w; ++j) a[j] = op.combine(a[j], b[j]);
  }
  void commit() {
    ++top;
    for (uint64_t c = ++cnt; (c & 1) == 0; c >>= 1) {
      merge(slot(top - 2), slot(top - 1));
      --top;
    }
  }
  A* result() {
    if (top == 0) {
      A id = op.identity();
      for (int64_t j = 0; j < w; ++j) st[j] = id;
      return st;
    }
    for (int i = top - 2; i >= 0; --i) merge(slot(i), slot(i + 1));
    return slot(0);
  }
};

// Per-thread scratch memory (reused across calls).
template <typename A>
A* scratch(size_t n) {
  thread_local std::vector<unsigned char> buf;
  size_t bytes = n * sizeof(A) + 64;
  if (buf.size() < bytes) buf.resize(bytes);
  void* p = buf.data();
  size_t space = buf.size();
  return static_cast<A*>(std::align(64, n * sizeof(A), p, space));  // cache-line aligned
}

// Levels a pairwise cascade over `count` partials needs.
int cascade_depth(int64_t count) { return int(std::bit_width(uint64_t(count))) + 2; }

// ---------------------------------------------------------------------------------------
// The engine.
//
// An Op provides:
//   using in_t, acc_t, aux_t; static constexpr bool cascade, has_aux;
//   acc_t identity();  acc_t combine(a, b);
//   acc_t leaf(const in_t* p, int64_t n, int64_t idx0, int64_t oi)  -- n >= 1 contiguous
//       elements, the first at position idx0 of the reduction, for output offset oi;
//   void rows(acc_t* acc, const in_t* p, int64_t w, int64_t r, const aux_t* aux_row)
//       -- acc[j] = acc[j] (+) p[j] for row r of the reduction;
//   void write(int64_t oi, acc_t)  -- stores the result of output offset oi;
//   const aux_t* aux  -- per-output data (e.g. a mean) when has_aux.

template <class Op>
void run_inner(const Plan& p, const typename Op::in_t* base, const Op& op) {
  using A = typename Op::acc_t;
  const int64_t n = p.n, C = p.C, M = p.M;
  const int64_t nb = (n + kLeaf - 1) / kLeaf;
  const int64_t leaves = C * nb;
  const int64_t work = C * n;
  Walk kw0(p.k, p.nk), rw0(p.r, p.nr);

  // The leaves [l0, l1) of one output, pushed into a cascade or stored in `dst`.
  auto leaves_of = [&](int64_t kin, int64_t oi, int64_t l0, int64_t l1, auto&& sink) {
    Walk rw = rw0;
    int64_t c = l0 / nb;
    rw.seek(c);
    int64_t b = l0 % nb;
    for (int64_t l = l0; l < l1; ++l) {
      int64_t s = b * kLeaf;
      sink(l, op.leaf(base + kin + rw.o0 + s, std::min(kLeaf, n - s), c * n + s, oi));
      if (++b == nb) {
        b = 0;
        ++c;
        rw.next();
      }
    }
  };
  auto one = [&](int64_t kin, int64_t oi) -> A {
    if (leaves == 1) return op.leaf(base + kin, n, 0, oi);
    Cascade<Op> cas(op);
    leaves_of(kin, oi, 0, leaves, [&](int64_t, const A& v) { cas.push(v); });
    return cas.result();
  };

  const int64_t total = M * work;
  const int nthreads = total > kSerialWork ? get_num_threads() : 1;  // small work: never asked
  if (total <= kSerialWork || nthreads == 1 || M >= 4 * nthreads || leaves < 4) {
    int64_t grain = std::max<int64_t>(1, kSerialWork / std::max<int64_t>(work, 1));
    parallel_for(0, M, grain, [&](int64_t b, int64_t e) {
      Walk kw = kw0;
      kw.seek(b);
      for (int64_t o = b; o < e; ++o) {
        op.write(kw.o1, one(kw.o0, kw.o1));
        kw.next();
      }
    });
    return;
  }
  // Few long reductions: the leaves of each output are computed in parallel, then pushed
  // into the cascade in order (the same tree as the serial path above).
  const int64_t batch = std::min<int64_t>(leaves, 1 << 16);
  std::unique_ptr<A[]> part(new A[size_t(batch)]);
  Walk kw = kw0;
  kw.seek(0);
  for (int64_t o = 0; o < M; ++o) {
    Cascade<Op> cas(op);
    for (int64_t l0 = 0; l0 < leaves; l0 += batch) {
      int64_t l1 = std::min(leaves, l0 + batch);
      parallel_for(l0, l1, std::max<int64_t>(1, kSerialWork / kLeaf), [&](int64_t b, int64_t e) {
        leaves_of(kw.o0, kw.o1, b, e, [&](int64_t l, const A& v) { part[size_t(l - l0)] = v; });
      });
      for (int64_t l = l0; l < l1; ++l) cas.push(part[size_t(l - l0)]);
    }
    op.write(kw.o1, cas.result());
    kw.next();
  }
}

template <class Op>
void run_outer(const Plan& p, const typename Op::in_t* base, const Op& op) {
  using A = typename Op::acc_t;
  using X = typename Op::aux_t;
  const int64_t m = p.n, C = p.C, Mr = p.M, os = p.os;
  const int64_t rl = Op::cascade ? kRowLeaf : C;
  const int64_t nleaves = (C + rl - 1) / rl;
  const int depth = cascade_depth(nleaves);
  const int64_t total = Mr * m * C;
  const int nthreads = total > kSerialWork ? get_num_threads() : 1;  // small work: never asked
  // Parallel work comes from output rows and column tiles when there are enough of them;
  // otherwise from groups of reduced rows (leaves) when there are many (a tall matrix summed
  // over dim 1: each thread streams whole rows); otherwise from narrower column tiles.
  // Neither choice changes a result: columns are independent, and leaves are combined in the
  // same order either way.
  int64_t tile = kTile;
  bool split_rows = false;
  if (nthreads > 1 && total > kSerialWork && Mr * ((m + tile - 1) / tile) < 2 * nthreads) {
    if (nleaves >= 4 * nthreads) {
      split_rows = true;
    } else {
      int64_t want = (2 * nthreads + Mr - 1) / Mr;  // tiles per row
      tile = std::max<int64_t>(64, ((m + want - 1) / want + 15) / 16 * 16);
    }
  }
  const int64_t nt = (m + tile - 1) / tile;
  const int64_t units = Mr * nt;
  Walk kw0(p.k, p.nk), rw0(p.r, p.nr);
  const int64_t rs = p.nr == 1 ? p.r[0].in : 0;  // the common case: one reduced dim

  // Gathers the per-output aux values of a tile's columns.
  auto aux_row = [&](int64_t out0, int64_t w, X* buf) -> const X* {
    if constexpr (Op::has_aux) {
      if (os == 1) return op.aux + out0;
      for (int64_t j = 0; j < w; ++j) buf[j] = op.aux[out0 + j * os];
      return buf;
    } else {
      (void)out0, (void)w, (void)buf;
      return nullptr;
    }
  };
  // Rows [r0, r1) of the reduction accumulated into dst (w columns from col0).
  auto leaf_rows = [&](A* dst, int64_t rin, int64_t col0, int64_t w, int64_t r0, int64_t r1, const X* ax) {
    A id = op.identity();
    for (int64_t j = 0; j < w; ++j) dst[j] = id;
    if (p.nr <= 1) {
      const typename Op::in_t* q = base + rin + col0 + r0 * rs;
      for (int64_t r = r0; r < r1; ++r, q += rs) op.rows(dst, q, w, r, ax);
      return;
    }
    Walk rw = rw0;
    rw.seek(r0);
    for (int64_t r = r0; r < r1; ++r) {
      op.rows(dst, base + rin + rw.o0 + col0, w, r, ax);
      rw.next();
    }
  };
  auto store = [&](const A* res, int64_t out0, int64_t w) {
    for (int64_t j = 0; j < w; ++j) op.write(out0 + j * os, res[j]);
  };
  auto unit = [&](int64_t rin, int64_t rout, int64_t t) {
    const int64_t col0 = t * tile, w = std::min(tile, m - col0);
    const int64_t out0 = rout + col0 * os;
    const size_t stack_bytes = size_t((depth + 1) * w) * sizeof(A);
    unsigned char* mem = scratch<unsigned char>(stack_bytes + (Op::has_aux ? size_t(w) * sizeof(X) : 0));
    A* buf = reinterpret_cast<A*>(mem);
    X* xbuf = reinterpret_cast<X*>(mem + stack_bytes);
    const X* ax = aux_row(out0, w, xbuf);
    if (nleaves == 1) {
      leaf_rows(buf, rin, col0, w, 0, C, ax);
      store(buf, out0, w);
      return;
    }
    RowCascade<Op> rc(op, buf, w);
    for (int64_t l = 0; l < nleaves; ++l) {
      leaf_rows(rc.next_slot(), rin, col0, w, l * rl, std::min(C, (l + 1) * rl), ax);
      rc.commit();
    }
    store(rc.result(), out0, w);
  };

  if (!split_rows) {
    int64_t grain = std::max<int64_t>(1, kSerialWork / std::max<int64_t>(C * std::min(m, tile), 1));
    parallel_for(0, units, grain, [&](int64_t b, int64_t e) {
      Walk kw = kw0;
      kw.seek(b / nt);
      int64_t t = b % nt;
      for (int64_t u = b; u < e; ++u) {
        unit(kw.o0, kw.o1, t);
        if (++t == nt) {
          t = 0;
          kw.next();
        }
      }
    });
    return;
  }
  // Few outputs, many rows: leaf rows computed in parallel, then combined in order (the
  // same tree as the serial path).
  Walk kw = kw0;
  kw.seek(0);
  for (int64_t row = 0; row < Mr; ++row) {
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t col0 = t * tile, w = std::min(tile, m - col0);
      const int64_t out0 = kw.o1 + col0 * os;
      std::unique_ptr<X[]> xbuf(new X[Op::has_aux ? size_t(w) : 1]);
      const X* ax = aux_row(out0, w, xbuf.get());
      std::unique_ptr<A[]> stack(new A[size_t((depth + 1) * w)]);
      RowCascade<Op> rc(op, stack.get(), w);
      const int64_t batch = std::max<int64_t>(1, std::min<int64_t>(nleaves, (int64_t(1) << 18) / w));
      std::unique_ptr<A[]> part(new A[size_t(batch * w)]);
      for (int64_t l0 = 0; l0 < nleaves; l0 += batch) {
        int64_t l1 = std::min(nleaves, l0 + batch);
        parallel_for(l0, l1, std::max<int64_t>(1, kSerialWork / (rl * w)), [&](int64_t b, int64_t e) {
          for (int64_t l = b; l < e; ++l)
            leaf_rows(part.get() + (l - l0) * w, kw.o0, col0, w, l * rl, std::min(C, (l + 1) * rl), ax);
        });
        for (int64_t l = l0; l < l1; ++l) {
          std::memcpy(static_cast<void*>(rc.next_slot()), part.get() + (l - l0) * w, size_t(w) * sizeof(A));
          rc.commit();
        }
      }
      store(rc.result(), out0, w);
    }
    kw.next();
  }
}


// Runs op over x reduced as s describes. The op writes into outputs of s.keep_shape.
template <class Op>
void run_reduce(const Tensor& x0, const RedSpec& s, const Op& op) {
  if (s.out_numel == 0) return;
  if (x0.numel() == 0) {  // then count == 0: every output is the identity
    for (int64_t oi = 0; oi < s.out_numel; ++oi) op.write(oi, op.identity());
    return;
  }
  Tensor x = x0;
  Plan p;
  if (!make_plan(x, s, p)) {
    x = x.contiguous();
    p = Plan();
    bool ok = make_plan(x, s, p);
    TIDE_ASSERT(ok);
  }
  const auto* base = x.data<typename Op::in_t>();
  if (p.inner) run_inner(p, base, op);
  else run_outer(p, base, op);
}

// ---------------------------------------------------------------------------------------
// Ops for the engine.

// acc = comb(acc, map(x, aux)) with identity `ident`; `Write(oi, acc)` stores a result.
template <typename T, typename A, typename Map, typename Comb, typename Write, bool Cascading,
          bool HasAux = false>
struct MapReduce {
  using in_t = T;
  using acc_t = A;
  using aux_t = A;
  using V = compute_t<T>;
  static constexpr bool cascade = Cascading;
  static constexpr bool has_aux = HasAux;
  A ident;
  Map map;
  Comb comb;
  Write wr;
  const A* aux = nullptr;

  A identity() const { return ident; }
  A combine(const A& a, const A& b) const { return comb(a, b); }
  void write(int64_t oi, const A& a) const { wr(oi, a); }

  TIDE_NOINLINE A leaf(const T* p, int64_t n, int64_t, int64_t oi) const {
    const A m = HasAux ? aux[oi] : A();
    constexpr int L = sizeof(A) >= 8 ? 16 : 32;  // independent lanes (several SIMD registers)
    if (n < L) {  // short runs (e.g. many small rows): plain loop, no lane set-up
      A a = ident;
      for (int64_t i = 0; i < n; ++i) a = comb(a, map(V(p[i]), m));
      return a;
    }
    A acc[L];
    for (int j = 0; j < L; ++j) acc[j] = ident;
    int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int j = 0; j < L; ++j) acc[j] = comb(acc[j], map(V(p[i + j]), m));
    for (int j = 0; i < n; ++i, ++j) acc[j] = comb(acc[j], map(V(p[i]), m));
    for (int w = L / 2; w > 0; w /= 2)
      for (int j = 0; j < w; ++j) acc[j] = comb(acc[j], acc[j + w]);
    return acc[0];
  }
  void rows(A* acc, const T* p, int64_t w, int64_t, const A* ax) const {
    if constexpr (HasAux) {
      for (int64_t j = 0; j < w; ++j) acc[j] = comb(acc[j], map(V(p[j]), ax[j]));
    } else {
      for (int64_t j = 0; j < w; ++j) acc[j] = comb(acc[j], map(V(p[j]), A()));
    }
  }
};

template <typename T, typename A, bool Cascading, bool HasAux = false, typename Map, typename Comb,
          typename Write>
MapReduce<T, A, Map, Comb, Write, Cascading, HasAux> make_op(A ident, Map map, Comb comb, Write wr,
                                                            const A* aux = nullptr) {
  MapReduce<T, A, Map, Comb, Write, Cascading, HasAux> op{ident, map, comb, wr};
  op.aux = aux;
  return op;
}

// 128-bit vectors of values and same-width positions (SSE on x86-64-v2).
template <typename T>
struct SimdLanes;
template <>
struct SimdLanes<float> {
  typedef float vf __attribute__((vector_size(16)));
  typedef int32_t vi __attribute__((vector_size(16)));
  static constexpr int W = 4;
};
template <>
struct SimdLanes<double> {
  typedef double vf __attribute__((vector_size(16)));
  typedef int64_t vi __attribute__((vector_size(16)));
  static constexpr int W = 2;
};

// Position of the best element: for max (IsMax) or min. NaN beats every number and the first
// NaN is kept; ties keep the earlier position.
template <typename T, bool IsMax, typename Write>
struct ArgOp {
  using in_t = T;
  using V = compute_t<T>;
  struct acc_t {
    V v;
    int64_t i;  // position (0-based); -1: nothing seen yet
  };
  using aux_t = char;
  static constexpr bool cascade = false;
  static constexpr bool has_aux = false;
  Write wr;

  static bool better(V a, V b) {
    if constexpr (std::is_floating_point_v<V>) {
      if (a != a) return b == b;
      if (b != b) return false;
    }
    if constexpr (IsMax) return a > b;
    else return a < b;
  }
  acc_t identity() const { return {V(), -1}; }
  acc_t combine(const acc_t& a, const acc_t& b) const {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    if (better(b.v, a.v)) return b;
    if (better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;
  }
  // better() without branches, so that the lane loop below becomes SIMD compares and blends.
  static bool better_bits(V a, V b) {
    bool gt;
    if constexpr (IsMax) gt = a > b;
    else gt = a < b;
    if constexpr (std::is_floating_point_v<V>) return gt | ((a != a) & (b == b));
    else return gt;
  }
  TIDE_NOINLINE acc_t leaf(const T* p, int64_t n, int64_t idx0, int64_t) const {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (n >= 64) return simd_leaf(p, n, idx0);
    }
    constexpr int L = 8;
    int64_t i = 0;
    acc_t r{V(p[0]), 0};
    if (n >= 2 * L) {  // L lanes, each keeping the first best of its elements (n <= kLeaf)
      V best[L];
      int32_t bi[L];
      for (int j = 0; j < L; ++j) best[j] = V(p[j]), bi[j] = j;
      for (i = L; i + L <= n; i += L) {
        for (int j = 0; j < L; ++j) {
          V v = V(p[i + j]);
          bool b = better_bits(v, best[j]);
          best[j] = b ? v : best[j];
          bi[j] = b ? int32_t(i + j) : bi[j];
        }
      }
      r = {best[0], bi[0]};
      for (int j = 1; j < L; ++j) r = combine(r, acc_t{best[j], bi[j]});
    } else {
      i = 1;
    }
    for (; i < n; ++i) {  // later positions: only a strictly better value replaces
      V v = V(p[i]);
      if (better(v, r.v)) r = {v, i};
    }
    r.i += idx0;
    return r;
  }
  // float / double: U vectors of lanes, each lane keeping its first best value and position,
  // updated with compare-and-blend (GCC vector extensions; n <= kLeaf).
  acc_t simd_leaf(const T* p, int64_t n, int64_t idx0) const {
    using VF = typename SimdLanes<T>::vf;
    using VI = typename SimdLanes<T>::vi;
    constexpr int W = SimdLanes<T>::W, U = 4, S = W * U;
    VF best[U];
    VI bi[U], cur[U];
    for (int u = 0; u < U; ++u) {
      std::memcpy(&best[u], p + u * W, sizeof(VF));
      for (int k = 0; k < W; ++k) bi[u][k] = u * W + k;
      cur[u] = bi[u] + S;
    }
    int64_t i = S;
    for (; i + S <= n; i += S) {
      for (int u = 0; u < U; ++u) {
        VF v;
        std::memcpy(&v, p + i + u * W, sizeof(VF));
        VI m;
        if constexpr (IsMax) m = v > best[u];
        else m = v < best[u];
        m |= (v != v) & (best[u] == best[u]);
        best[u] = (VF)(((VI)v & m) | ((VI)best[u] & ~m));
        bi[u] = (cur[u] & m) | (bi[u] & ~m);
        cur[u] += S;
      }
    }
    acc_t r{best[0][0], bi[0][0]};
    for (int u = 0; u < U; ++u)
      for (int k = 0; k < W; ++k) r = combine(r, acc_t{best[u][k], int64_t(bi[u][k])});
    for (; i < n; ++i)
      if (better(p[i], r.v)) r = {p[i], i};
    r.i += idx0;
    return r;
  }
  void rows(acc_t* acc, const T* p, int64_t w, int64_t r, const aux_t*) const {
    for (int64_t j = 0; j < w; ++j) {
      V v = V(p[j]);
      if (acc[j].i < 0 || better(v, acc[j].v)) acc[j] = {v, r};
    }
  }
  void write(int64_t oi, const acc_t& a) const { wr(oi, a); }
};

template <typename T, bool IsMax, typename Write>
ArgOp<T, IsMax, Write> make_arg_op(Write wr) {
  return ArgOp<T, IsMax, Write>{wr};
}

// Accumulator of sum/prod/cumsum: float for float16/bfloat16/float32, double for float64,
// int64 for bool and integers.
template <typename T>
using sum_acc_t = std::conditional_t<is_float_v<T>, compute_t<T>, int64_t>;

template <typename A>
inline A add(A a, A b) {
  if constexpr (std::is_integral_v<A>) return A(uint64_t(a) + uint64_t(b));  // wraps like torch
  else return a + b;
}
template <typename A>
inline A mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) return A(uint64_t(a) * uint64_t(b));
  else return a * b;
}
// max / min that propagate NaN.
template <typename A>
inline A nan_max(A a, A b) {
  return (b > a || b != b) ? b : a;
}
template <typename A>
inline A nan_min(A a, A b) {
  return (b < a || b != b) ? b : a;
}

template <typename A>
constexpr A lowest() {
  if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
  else return std::numeric_limits<A>::lowest();
}
template <typename A>
constexpr A highest() {
  if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
  else return std::numeric_limits<A>::max();
}

// Integers sum in int64 (PyTorch), except uint64, which only uint64 holds (NumPy).
DType sum_dtype(DType x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_floating(x) || x == DType::UInt64 ? x : DType::Int64;
}

// The engine runs on four dtypes only, which keeps this file quick to compile: float16 and
// bfloat16 are reduced as float32 (their accumulator anyway), uint64 as itself (int64 would
// misorder values above INT64_MAX), other integers as int64 (bool too unless the op takes bool
// itself), and results are converted back.
Tensor canonical(const Tensor& x, bool keep_bool) {
  DType d = x.dtype();
  if (d == DType::Float16 || d == DType::BFloat16) return x.to(DType::Float32);
  if (d == DType::Bool ? !keep_bool : (is_integral(d) && d != DType::Int64 && d != DType::UInt64))
    return x.to(DType::Int64);
  return x;
}

template <typename T>
struct Tag {
  using type = T;
};

// f(Tag<T>{}) for a canonical dtype: int64, uint64, float32, float64, and bool when WithBool.
template <bool WithBool, typename F>
void dispatch_canonical(DType d, F&& f) {
  switch (d) {
    case DType::Bool:
      if constexpr (WithBool) {
        f(Tag<bool>{});
        return;
      }
      break;
    case DType::Int64: f(Tag<int64_t>{}); return;
    case DType::UInt64: f(Tag<uint64_t>{}); return;
    case DType::Float32: f(Tag<float>{}); return;
    case DType::Float64: f(Tag<double>{}); return;
    default: break;
  }
  TIDE_ASSERT(false);
}
template <typename F>
void dispatch_float(DType d, F&& f) {
  if (d == DType::Float32) f(Tag<float>{});
  else if (d == DType::Float64) f(Tag<double>{});
  else TIDE_ASSERT(false);
}

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }

// sum / prod: the input is converted to `dtype` first when given.
template <bool Prod>
Tensor sum_prod(const char* op, const Tensor& x0, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  check_defined(x0, op);
  Tensor x = dtype ? x0.to(*dtype) : x0;
  RedSpec s = make_spec(op, x, dims, keepdim);
  const DType od = sum_dtype(x.dtype(), dtype);
  if (x.device().is_cuda()) {
    Tensor out = Tensor::empty(s.keep_shape, od, x.device());
    reduce_on_device(Prod ? ReduceKind::Prod : ReduceKind::Sum, x, s, out, nullptr);
    return finish(out, s);
  }
  Tensor xc = canonical(x, !Prod);
  Tensor out = Tensor::empty(s.keep_shape, xc.dtype() == DType::Bool ? DType::Int64 : xc.dtype());
  dispatch_canonical<!Prod>(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = sum_acc_t<T>;
    A* o = out.data<A>();
    auto map = [](T v, A) { return A(v); };
    auto wr = [o](int64_t i, A a) { o[i] = a; };
    if constexpr (Prod)
      run_reduce(xc, s, make_op<T, A, false>(A(1), map, [](A a, A b) { return mul(a, b); }, wr));
    else
      run_reduce(xc, s, make_op<T, A, true>(A(0), map, [](A a, A b) { return add(a, b); }, wr));
  });
  return as_dtype(finish(out, s), od);
}

// A floating-point input (for mean, var, norm, logsumexp).
void check_float(const char* op, const Tensor& x) {
  TIDE_CHECK(is_floating(x.dtype()), op, ": expected a floating-point tensor, got ", dtype_name(x.dtype()),
             " (convert it first, e.g. x:double())");
}

template <bool IsMax>
Tensor amax_impl(const char* op, const Tensor& x, const DimList& dims, bool keepdim) {
  check_defined(x, op);
  RedSpec s = make_spec(op, x, dims, keepdim);
  check_nonempty(op, x, s);
  if (x.device().is_cuda()) {
    Tensor xd = x.dtype() == DType::Bool ? x.to(DType::UInt8) : x;
    Tensor out = Tensor::empty(s.keep_shape, xd.dtype(), x.device());
    reduce_on_device(IsMax ? ReduceKind::Max : ReduceKind::Min, xd, s, out, nullptr);
    return as_dtype(finish(out, s), x.dtype());
  }
  Tensor xc = canonical(x, false);
  Tensor out = Tensor::empty(s.keep_shape, xc.dtype());
  dispatch_canonical<false>(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    auto map = [](T v, T) { return v; };
    auto wr = [o](int64_t i, T a) { o[i] = a; };
    if constexpr (IsMax)
      run_reduce(xc, s, make_op<T, T, false>(lowest<T>(), map, [](T a, T b) { return nan_max(a, b); }, wr));
    else
      run_reduce(xc, s, make_op<T, T, false>(highest<T>(), map, [](T a, T b) { return nan_min(a, b); }, wr));
  });
  return as_dtype(finish(out, s), x.dtype());
}

// Stores the values (when wanted) and the 1-based positions found by an ArgOp.
template <typename T>
struct ArgWriter {
  T* vals;
  int64_t* idx;
  template <class Acc>
  void operator()(int64_t i, const Acc& a) const {
    if (vals) vals[i] = a.v;
    idx[i] = a.i + 1;
  }
};

// max(x, dim) (want_values) and argmax(x[, dim]); without a dim the position is in the
// flattened row-major order, so a contiguous copy is reduced.
template <bool IsMax>
ValuesIndices arg_impl(const char* op, const Tensor& x0, std::optional<int> dim, bool keepdim, bool want_values) {
  check_defined(x0, op);
  Tensor x = dim ? x0 : x0.contiguous();
  RedSpec s = make_spec(op, x, dim ? DimList{*dim} : DimList{}, keepdim);
  check_nonempty(op, x, s);
  if (x.device().is_cuda()) {
    Tensor xd = x.dtype() == DType::Bool ? x.to(DType::UInt8) : x;
    ValuesIndices r;
    if (want_values) r.values = Tensor::empty(s.keep_shape, xd.dtype(), x.device());
    r.indices = Tensor::empty(s.keep_shape, DType::Int64, x.device());
    reduce_on_device(IsMax ? ReduceKind::ArgMax : ReduceKind::ArgMin, xd, s, r.values, &r.indices);
    if (want_values) r.values = as_dtype(finish(r.values, s), x.dtype());
    r.indices = finish(r.indices, s);
    return r;
  }
  Tensor xc = canonical(x, false);
  ValuesIndices r;
  if (want_values) r.values = Tensor::empty(s.keep_shape, xc.dtype());
  r.indices = Tensor::empty(s.keep_shape, DType::Int64);
  dispatch_canonical<false>(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ArgWriter<T> wr{want_values ? r.values.data<T>() : nullptr, r.indices.data<int64_t>()};
    run_reduce(xc, s, make_arg_op<T, IsMax>(wr));
  });
  if (want_values) r.values = as_dtype(finish(r.values, s), x.dtype());
  r.indices = finish(r.indices, s);
  return r;
}

// A complex x: the variance of its real parts plus that of its imaginary parts (the mean
// squared modulus of the deviations, as NumPy and PyTorch), in the real dtype.
Tensor var_impl(const char* op, const Tensor& x, const DimList& dims, double correction, bool keepdim,
                bool take_sqrt) {
  check_defined(x, op);
  if (is_complex(x.dtype())) {
    Tensor v = binary(BinaryOp::Add, var_impl(op, real(x), dims, correction, keepdim, false),
                      var_impl(op, imag(x), dims, correction, keepdim, false));
    return take_sqrt ? unary(UnaryOp::Sqrt, v) : v;
  }
  check_float(op, x);
  RedSpec s = make_spec(op, x, dims, keepdim);
  Tensor xc = canonical(x, false);
  if (x.device().is_cuda()) {  // the mean, then the mean square deviation from it
    Tensor dev = binary(BinaryOp::Sub, xc, mean(xc, dims, true));
    Tensor v = binary(BinaryOp::Div, sum(binary(BinaryOp::Mul, dev, dev), dims, keepdim),
                      Scalar(std::max(0.0, double(s.count) - correction)));
    if (take_sqrt) v = unary(UnaryOp::Sqrt, v);
    return as_dtype(v, x.dtype());
  }
  Tensor out = Tensor::empty(s.keep_shape, xc.dtype());
  dispatch_float(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Pass 1: the mean of each output (nan for an empty reduction).
    std::vector<T> mean(size_t(s.out_numel));
    const T count = T(s.count);
    T* mp = mean.data();
    auto plus = [](T a, T b) { return a + b; };
    run_reduce(xc, s, make_op<T, T, true>(T(0), [](T v, T) { return v; }, plus,
                                          [mp, count](int64_t i, T a) { mp[i] = a / count; }));
    // Pass 2: the sum of squared deviations from it.
    const T denom = T(std::max(0.0, double(s.count) - correction));
    T* o = out.data<T>();
    auto sq = [](T v, T m) {
      T d = v - m;
      return d * d;
    };
    auto wr = [o, denom, take_sqrt](int64_t i, T a) {
      T v = a / denom;
      o[i] = take_sqrt ? std::sqrt(v) : v;
    };
    run_reduce(xc, s, make_op<T, T, true, true>(T(0), sq, plus, wr, mp));
  });
  return as_dtype(finish(out, s), x.dtype());
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public reductions.

// A complex input or dtype: complex.cpp.
static bool complex_reduction(const Tensor& x, std::optional<DType> dtype) {
  return (x.defined() && is_complex(x.dtype())) || (dtype && is_complex(*dtype));
}

Tensor sum(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  if (complex_reduction(x, dtype)) return complex_reduce("sum", x, dims, keepdim, dtype);
  return sum_prod<false>("sum", x, dims, keepdim, dtype);
}

Tensor prod(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  if (complex_reduction(x, dtype)) return complex_reduce("prod", x, dims, keepdim, dtype);
  return sum_prod<true>("prod", x, dims, keepdim, dtype);
}

Tensor mean(const Tensor& x0, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  if (complex_reduction(x0, dtype)) return complex_reduce("mean", x0, dims, keepdim, dtype);
  check_defined(x0, "mean");
  if (dtype)
    TIDE_CHECK(is_floating(*dtype), "mean: dtype must be a floating-point type, got ", dtype_name(*dtype));
  Tensor x = dtype ? x0.to(*dtype) : x0;
  check_float("mean", x);
  RedSpec s = make_spec("mean", x, dims, keepdim);
  Tensor xc = canonical(x, false);
  if (x.device().is_cuda()) {
    Tensor total = Tensor::empty(s.keep_shape, xc.dtype(), x.device());
    reduce_on_device(ReduceKind::Sum, xc, s, total, nullptr);
    return as_dtype(finish(binary(BinaryOp::Div, total, Scalar(double(s.count)), &total), s), x.dtype());
  }
  Tensor out = Tensor::empty(s.keep_shape, xc.dtype());
  dispatch_float(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const T count = T(s.count);
    run_reduce(xc, s, make_op<T, T, true>(T(0), [](T v, T) { return v; }, [](T a, T b) { return a + b; },
                                          [o, count](int64_t i, T a) { o[i] = a / count; }));
  });
  return as_dtype(finish(out, s), x.dtype());
}

Tensor amax(const Tensor& x, const DimList& dims, bool keepdim) { return amax_impl<true>("amax", x, dims, keepdim); }
Tensor amin(const Tensor& x, const DimList& dims, bool keepdim) { return amax_impl<false>("amin", x, dims, keepdim); }
Tensor max(const Tensor& x) { return amax_impl<true>("max", x, {}, false); }
Tensor min(const Tensor& x) { return amax_impl<false>("min", x, {}, false); }

ValuesIndices max(const Tensor& x, int dim, bool keepdim) { return arg_impl<true>("max", x, dim, keepdim, true); }
ValuesIndices min(const Tensor& x, int dim, bool keepdim) { return arg_impl<false>("min", x, dim, keepdim, true); }

Tensor argmax(const Tensor& x, std::optional<int> dim, bool keepdim) {
  return arg_impl<true>("argmax", x, dim, keepdim, false).indices;
}
Tensor argmin(const Tensor& x, std::optional<int> dim, bool keepdim) {
  return arg_impl<false>("argmin", x, dim, keepdim, false).indices;
}

Tensor var(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return var_impl("var", x, dims, correction, keepdim, false);
}
Tensor std(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return var_impl("std", x, dims, correction, keepdim, true);
}

Tensor norm(const Tensor& x, double p, const DimList& dims, bool keepdim) {
  check_defined(x, "norm");
  check_float("norm", x);
  TIDE_CHECK(!std::isnan(p), "norm: p must be a number, got nan");
  if (p == 0) {  // the number of non-zero elements
    Tensor nz = binary(BinaryOp::Ne, x, Scalar(int64_t(0)));
    return as_dtype(sum(nz, dims, keepdim), x.dtype());
  }
  RedSpec s = make_spec("norm", x, dims, keepdim);
  Tensor xc = canonical(x, false);
  if (x.device().is_cuda()) {
    Tensor a = unary(UnaryOp::Abs, xc), r;
    if (p == 2) r = unary(UnaryOp::Sqrt, sum(binary(BinaryOp::Mul, xc, xc), dims, keepdim));
    else if (p == 1) r = sum(a, dims, keepdim);
    else if (std::isinf(p)) r = s.count == 0 ? full(s.out_shape, Scalar(p > 0 ? 0.0 : INFINITY), xc.dtype(), x.device())
                                : p > 0 ? amax(a, dims, keepdim) : amin(a, dims, keepdim);
    else r = binary(BinaryOp::Pow, sum(binary(BinaryOp::Pow, a, Scalar(p)), dims, keepdim), Scalar(1.0 / p));
    return as_dtype(r, x.dtype());
  }
  Tensor out = Tensor::empty(s.keep_shape, xc.dtype());
  dispatch_float(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    auto plus = [](T a, T b) { return a + b; };
    auto absv = [](T v, T) { return std::abs(v); };
    auto store = [o](int64_t i, T a) { o[i] = a; };
    if (p == 2) {
      run_reduce(xc, s, make_op<T, T, true>(T(0), [](T v, T) { return v * v; }, plus,
                                            [o](int64_t i, T a) { o[i] = std::sqrt(a); }));
    } else if (p == 1) {
      run_reduce(xc, s, make_op<T, T, true>(T(0), absv, plus, store));
    } else if (std::isinf(p) && p > 0) {
      run_reduce(xc, s, make_op<T, T, false>(T(0), absv, [](T a, T b) { return nan_max(a, b); }, store));
    } else if (std::isinf(p)) {
      run_reduce(xc, s, make_op<T, T, false>(highest<T>(), absv, [](T a, T b) { return nan_min(a, b); }, store));
    } else {
      const T pp = T(p), inv = T(1.0 / p);
      run_reduce(xc, s, make_op<T, T, true>(T(0), [pp](T v, T) { return std::pow(std::abs(v), pp); }, plus,
                                            [o, inv](int64_t i, T a) { o[i] = std::pow(a, inv); }));
    }
  });
  return as_dtype(finish(out, s), x.dtype());
}

namespace {
// all / any reduce bool tensors; other dtypes are compared with zero first (NaN is true).
template <bool All>
Tensor all_any(const char* op, const Tensor& x0, const DimList& dims, bool keepdim) {
  check_defined(x0, op);
  Tensor x = x0.dtype() == DType::Bool ? x0 : binary(BinaryOp::Ne, x0, Scalar(int64_t(0)));
  RedSpec s = make_spec(op, x, dims, keepdim);
  if (x.device().is_cuda()) {  // counts of true values
    Tensor trues = sum(x, dims, keepdim);
    Tensor r = All ? binary(BinaryOp::Eq, trues, Scalar(s.count)) : binary(BinaryOp::Ne, trues, Scalar(int64_t(0)));
    return as_dtype(r, x0.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool);
  }
  Tensor out = Tensor::empty(s.keep_shape, DType::Bool);
  bool* o = out.data<bool>();
  using A = uint8_t;
  auto map = [](bool v, A) { return A(v); };
  auto wr = [o](int64_t i, A a) { o[i] = a != 0; };
  if constexpr (All) run_reduce(x, s, make_op<bool, A, false>(A(1), map, [](A a, A b) { return A(a & b); }, wr));
  else run_reduce(x, s, make_op<bool, A, false>(A(0), map, [](A a, A b) { return A(a | b); }, wr));
  // uint8 inputs give uint8, as in PyTorch.
  return as_dtype(finish(out, s), x0.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool);
}
}  // namespace

Tensor all(const Tensor& x, const DimList& dims, bool keepdim) { return all_any<true>("all", x, dims, keepdim); }
Tensor any(const Tensor& x, const DimList& dims, bool keepdim) { return all_any<false>("any", x, dims, keepdim); }

Tensor logsumexp(const Tensor& x0, const DimList& dims, bool keepdim) {
  check_defined(x0, "logsumexp");
  // Integers and bool are computed in the default float dtype, as PyTorch does.
  const Tensor x = is_floating(x0.dtype()) ? x0 : x0.to(default_float_dtype());
  RedSpec s = make_spec("logsumexp", x, dims, keepdim);
  Tensor xc = canonical(x, false);
  if (x.device().is_cuda()) {  // log(sum(exp(x - m))) + m with m the finite max (0 if none)
    Tensor m = s.count > 0 ? amax(xc, dims, true) : zeros(s.keep_shape, xc.dtype(), x.device());
    m = where(unary(UnaryOp::IsInf, m), Scalar(0.0), m);
    Tensor e = unary(UnaryOp::Exp, binary(BinaryOp::Sub, xc, m));
    Tensor r = binary(BinaryOp::Add, unary(UnaryOp::Log, sum(e, dims, true)), m);
    return as_dtype(finish(r, s), x.dtype());
  }
  Tensor out = Tensor::empty(s.keep_shape, xc.dtype());
  dispatch_float(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Pass 1: the max of each output, replaced by 0 when infinite (so that all -inf gives
    // -inf and a +inf gives +inf instead of nan).
    std::vector<T> mx(size_t(s.out_numel), T(0));
    T* mp = mx.data();
    if (s.count > 0)
      run_reduce(xc, s, make_op<T, T, false>(lowest<T>(), [](T v, T) { return v; },
                                             [](T a, T b) { return nan_max(a, b); },
                                             [mp](int64_t i, T a) { mp[i] = std::isinf(a) ? T(0) : a; }));
    T* o = out.data<T>();
    run_reduce(xc, s, make_op<T, T, true, true>(T(0), [](T v, T m) { return std::exp(v - m); },
                                                [](T a, T b) { return a + b; },
                                                [o, mp](int64_t i, T a) { o[i] = std::log(a) + mp[i]; }, mp));
  });
  return as_dtype(finish(out, s), x.dtype());
}

// ---------------------------------------------------------------------------------------
// Scans.

namespace {

// outer x n x inner view of a contiguous tensor around dim d.
struct Around {
  int64_t outer = 1, n = 1, inner = 1;
};
Around around(const Tensor& x, int d) {
  Around a;
  Dims outer, inner;
  for (int i = 0; i < x.dim(); ++i) {
    if (i < d) outer.push_back(x.size(i));
    else if (i == d) a.n = x.size(i);
    else inner.push_back(x.size(i));
  }
  a.outer = shape_numel(outer);  // 0 when any size is 0: an empty x's products may pass int64
  a.inner = shape_numel(inner);
  return a;
}

// Accumulator of a scan: double for float32 (as PyTorch's CPU cumsum), float for
// float16/bfloat16, int64 for integers.
template <typename T>
using scan_acc_t = std::conditional_t<std::is_same_v<T, float>, double, sum_acc_t<T>>;

template <bool Prod>
Tensor scan(const char* op, const Tensor& x0, int dim, std::optional<DType> dtype) {
  check_defined(x0, op);
  int d = norm_dim(op, dim, x0.dim());
  if (is_complex(x0.dtype()) || (dtype && is_complex(*dtype))) return complex_scan(op, x0, d, dtype);
  DType od = sum_dtype(x0.dtype(), dtype);
  if (x0.device().is_cuda()) {  // rows along the last dim, scanned, moved back
    if (x0.dim() == 0) return cast(x0, od);
    Tensor rows = movedim(x0, {d}, {-1}).contiguous();
    Tensor out = Tensor::empty(rows.sizes(), od, x0.device());
    const int64_t n = x0.dim() ? x0.size(d) : 1;
    if (out.numel() > 0)
      backend_for(x0.device())
          .scan_rows(Prod ? ScanKind::Prod : ScanKind::Sum, rows.data_ptr(), rows.dtype(), out.data_ptr(), od,
                     out.numel() / n, n);
    return movedim(out, {-1}, {d}).contiguous();
  }
  Tensor x = x0.to(od).contiguous();
  Tensor out = Tensor::empty(x.sizes(), od);
  if (x.numel() == 0) return out;
  const Around g = around(x, d);
  TIDE_DISPATCH_ALL(od, op, [&] {
    using T = scalar_t;
    using A = scan_acc_t<T>;
    const T* in = x.data<T>();
    T* o = out.data<T>();
    auto f = [](A a, A v) { return Prod ? mul(a, v) : add(a, v); };
    const A id = A(Prod ? 1 : 0);
    if (g.inner == 1) {
      parallel_for(0, g.outer, std::max<int64_t>(1, kSerialWork / g.n), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T* p = in + r * g.n;
          T* q = o + r * g.n;
          A acc = id;
          for (int64_t i = 0; i < g.n; ++i) {
            acc = f(acc, A(compute_t<T>(p[i])));
            q[i] = T(acc);
          }
        }
      });
      return;
    }
    const int64_t nt = (g.inner + kTile - 1) / kTile;
    const int64_t grain = std::max<int64_t>(1, kSerialWork / (g.n * std::min(g.inner, kTile)));
    parallel_for(0, g.outer * nt, grain, [&](int64_t b, int64_t e) {
      A* acc = scratch<A>(size_t(kTile));
      for (int64_t u = b; u < e; ++u) {
        const int64_t r = u / nt, c0 = (u % nt) * kTile, w = std::min(kTile, g.inner - c0);
        for (int64_t j = 0; j < w; ++j) acc[j] = id;
        for (int64_t i = 0; i < g.n; ++i) {
          const T* p = in + (r * g.n + i) * g.inner + c0;
          T* q = o + (r * g.n + i) * g.inner + c0;
          for (int64_t j = 0; j < w; ++j) {
            acc[j] = f(acc[j], A(compute_t<T>(p[j])));
            q[j] = T(acc[j]);
          }
        }
      }
    });
  });
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int dim, std::optional<DType> dtype) { return scan<false>("cumsum", x, dim, dtype); }
Tensor cumprod(const Tensor& x, int dim, std::optional<DType> dtype) { return scan<true>("cumprod", x, dim, dtype); }

Tensor cumprod_backward(const Tensor& x, const Tensor& g, int dim) {
  if (!x.device().is_cpu())  // no device kernel: computed on host copies (docs/cuda.md)
    return cumprod_backward(x.to_device({}), g.to_device({}), dim).to_device(x.device());
  int d = wrap_dim("cumprod", dim, x.dim());
  // Rows of length n along dim, contiguous, in float64.
  Tensor xr = cast(movedim(x, {d}, {-1}), DType::Float64).contiguous();
  Tensor gr = cast(movedim(g, {d}, {-1}), DType::Float64).contiguous();
  int64_t n = x.size(d), rows = n ? x.numel() / n : 0;
  Tensor out = Tensor::empty(xr.sizes(), DType::Float64);
  const double *xv = xr.data<double>(), *gv = gr.data<double>();
  double* o = out.data<double>();
  parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const double *xs = xv + r * n, *gs = gv + r * n;
      double* os = o + r * n;
      double s = 0;
      for (int64_t i = n - 1; i >= 0; --i) {  // S_i, from the end
        s = gs[i] + (i + 1 < n ? xs[i + 1] * s : 0.0);
        os[i] = s;
      }
      double prefix = 1;
      for (int64_t i = 0; i < n; ++i) {  // times the product of the earlier elements
        os[i] *= prefix;
        prefix *= xs[i];
      }
    }
  });
  return cast(movedim(out, {-1}, {d}), x.dtype());
}

// ---------------------------------------------------------------------------------------
// Sorting.
//
// Values of 32 bits or less are sorted as 64-bit keys: an order-preserving 32-bit image of
// the value (NaN above +inf, -0 equal to +0) above the 32-bit position, so that plain
// integer order is the stable order. Wider values sort (value, position) pairs.

namespace {

// Strict orders with NaN as the largest value.
template <typename V>
inline bool less_nan(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) return a < b || (b != b && a == a);
  else return a < b;
}
template <typename V>
inline bool greater_nan(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) return a > b || (a != a && b == b);
  else return a > b;
}

template <typename T>
inline uint32_t ord_key(T x) {
  if constexpr (is_float_v<T>) {
    float f = float(x);
    if (f != f) return 0xFFFFFFFFu;
    if (f == 0) f = 0.0f;
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return (u >> 31) ? ~u : (u | 0x80000000u);
  } else if constexpr (std::is_signed_v<T>) {
    return uint32_t(int32_t(x)) ^ 0x80000000u;
  } else {
    return uint32_t(x);
  }
}

// Calls f(input row base, output row base, stride) for every row along dim d of the
// contiguous x (rows in parallel); out_n is the output length along d.
template <typename F>
void for_rows(const Around& g, int64_t out_n, F&& f) {
  const int64_t rows = g.outer * g.inner;
  const int64_t grain = std::max<int64_t>(1, kSerialWork / std::max<int64_t>(g.n, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / g.inner, i = r % g.inner;
      f(o * g.n * g.inner + i, o * out_n * g.inner + i, g.inner);
    }
  });
}

// A full stable sort of a row of 32-bit keys: LSD radix sort, 8 bits a pass (passes in
// which every key has the same digit are skipped). Stability makes ties keep their order.
template <typename T>
void radix_positions(const T* in, int64_t ib, int64_t st, int64_t n, bool descending, std::vector<int64_t>& pos) {
  thread_local std::vector<uint32_t> ka, kb, ia, ibuf;
  ka.resize(size_t(n)), kb.resize(size_t(n)), ia.resize(size_t(n)), ibuf.resize(size_t(n));
  uint32_t cnt[4][256] = {};
  for (int64_t j = 0; j < n; ++j) {
    uint32_t o = ord_key(in[ib + j * st]);
    if (descending) o = ~o;
    ka[size_t(j)] = o;
    ia[size_t(j)] = uint32_t(j);
    for (int b = 0; b < 4; ++b) ++cnt[b][(o >> (8 * b)) & 255];
  }
  uint32_t *k0 = ka.data(), *k1 = kb.data(), *i0 = ia.data(), *i1 = ibuf.data();
  for (int b = 0; b < 4; ++b) {
    const int shift = 8 * b;
    if (cnt[b][(k0[0] >> shift) & 255] == uint32_t(n)) continue;  // one digit value: nothing moves
    uint32_t off[256], sum = 0;
    for (int d = 0; d < 256; ++d) off[d] = sum, sum += cnt[b][d];
    for (int64_t j = 0; j < n; ++j) {
      uint32_t d = (k0[j] >> shift) & 255, t = off[d]++;
      k1[t] = k0[j];
      i1[t] = i0[j];
    }
    std::swap(k0, k1);
    std::swap(i0, i1);
  }
  for (int64_t j = 0; j < n; ++j) pos[size_t(j)] = i0[j];
}

// (value, position) pairs sorted with a comparator: for 64-bit values.
template <typename T>
void sorted_pairs(const T* in, int64_t ib, int64_t st, int64_t n, int64_t k, bool descending,
                  std::vector<int64_t>& pos);
template <typename T>
void radix_positions(const T* in, int64_t ib, int64_t st, int64_t n, bool descending, std::vector<int64_t>& pos);

// The first `k` positions of a row (n values at in[ib + j * st]) in sorted order: ascending
// (NaN last) or descending (NaN first), ties by position. k < n uses a partial sort.
template <typename T>
void sorted_positions(const T* in, int64_t ib, int64_t st, int64_t n, int64_t k, bool descending,
                      std::vector<int64_t>& pos) {
  pos.resize(size_t(k));
  if constexpr (sizeof(T) <= 4) {
    TIDE_CHECK(n <= int64_t(0xFFFFFFFFu), "sort: rows of more than 2^32 elements are not supported");
    if (k == n && n >= 128) {
      radix_positions(in, ib, st, n, descending, pos);
      return;
    }
    {
      thread_local std::vector<uint64_t> keys;
      keys.resize(size_t(n));
      for (int64_t j = 0; j < n; ++j) {
        uint32_t o = ord_key(in[ib + j * st]);
        keys[size_t(j)] = (uint64_t(descending ? ~o : o) << 32) | uint64_t(j);
      }
      if (k < n) std::partial_sort(keys.begin(), keys.begin() + k, keys.end());
      else std::sort(keys.begin(), keys.end());
      for (int64_t j = 0; j < k; ++j) pos[size_t(j)] = int64_t(keys[size_t(j)] & 0xFFFFFFFFu);
    }
  } else {
    sorted_pairs(in, ib, st, n, k, descending, pos);
  }
}

template <typename T>
void sorted_pairs(const T* in, int64_t ib, int64_t st, int64_t n, int64_t k, bool descending,
                  std::vector<int64_t>& pos) {
  using V = compute_t<T>;
  thread_local std::vector<std::pair<V, int64_t>> buf;
  buf.resize(size_t(n));
  for (int64_t j = 0; j < n; ++j) buf[size_t(j)] = {V(in[ib + j * st]), j};
  auto less = [descending](const std::pair<V, int64_t>& a, const std::pair<V, int64_t>& b) {
    bool before = descending ? greater_nan(a.first, b.first) : less_nan(a.first, b.first);
    bool after = descending ? greater_nan(b.first, a.first) : less_nan(b.first, a.first);
    return before || (!after && a.second < b.second);
  };
  if (k < n) std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), less);
  else std::sort(buf.begin(), buf.end(), less);
  for (int64_t j = 0; j < k; ++j) pos[size_t(j)] = buf[size_t(j)].second;
}

// Sorted values (when `values` is defined) and 1-based indices of the first k along dim d.
void sort_rows(const char* op, const Tensor& x, int d, int64_t k, bool descending, Tensor& values,
               Tensor& indices) {
  (void)op;  // named by the dispatch's message only
  const Around g = around(x, d);
  TIDE_DISPATCH_ALL(x.dtype(), op, [&] {
    using T = scalar_t;
    const T* in = x.data<T>();
    T* vo = values.defined() ? values.data<T>() : nullptr;
    int64_t* io = indices.data<int64_t>();
    for_rows(g, k, [&](int64_t ib, int64_t ob, int64_t st) {
      thread_local std::vector<int64_t> pos;
      sorted_positions(in, ib, st, g.n, k, descending, pos);
      for (int64_t j = 0; j < k; ++j) {
        int64_t src = pos[size_t(j)];
        if (vo) vo[ob + j * st] = in[ib + src * st];
        io[ob + j * st] = src + 1;
      }
    });
  });
}

// A result computed on host copies moved to `device` (ops with no device kernel, listed in
// docs/cuda.md).
ValuesIndices moved_to(Device device, ValuesIndices r) {
  if (r.values.defined()) r.values = r.values.to_device(device);
  if (r.indices.defined()) r.indices = r.indices.to_device(device);
  return r;
}

ValuesIndices sort_impl(const char* op, const Tensor& x0, int dim, bool descending, bool want_values) {
  check_defined(x0, op);
  if (!x0.device().is_cpu())
    return moved_to(x0.device(), sort_impl(op, x0.to_device({}), dim, descending, want_values));
  int d = norm_dim(op, dim, x0.dim());
  Tensor x = x0.contiguous();
  ValuesIndices r;
  if (want_values) r.values = Tensor::empty(x.sizes(), x.dtype());
  r.indices = Tensor::empty(x.sizes(), DType::Int64);
  if (x.numel() == 0) return r;
  sort_rows(op, x, d, around(x, d).n, descending, r.values, r.indices);
  return r;
}

}  // namespace

ValuesIndices sort(const Tensor& x, int dim, bool descending) { return sort_impl("sort", x, dim, descending, true); }

Tensor argsort(const Tensor& x, int dim, bool descending) {
  return sort_impl("argsort", x, dim, descending, false).indices;
}

ValuesIndices topk(const Tensor& x0, int64_t k, int dim, bool largest, bool /*sorted: always sorted*/) {
  check_defined(x0, "topk");
  if (!x0.device().is_cpu()) return moved_to(x0.device(), topk(x0.to_device({}), k, dim, largest, true));
  int d = norm_dim("topk", dim, x0.dim());
  Tensor x = x0.contiguous();
  const int64_t n = around(x, d).n;
  TIDE_CHECK(k >= 0 && k <= n, "topk: k (", k, ") is out of range for dim ", d + 1, " of size ", n, " (valid 0..", n,
             ")");
  Dims shape = x.sizes();
  if (x.dim() > 0) shape[d] = k;
  else TIDE_CHECK(k == 1, "topk: k must be 1 for a 0-dim tensor, got ", k);
  ValuesIndices r{Tensor::empty(shape, x.dtype()), Tensor::empty(shape, DType::Int64)};
  if (r.values.numel() == 0) return r;
  sort_rows("topk", x, d, k, largest, r.values, r.indices);
  return r;
}

}  // namespace tide::ops
