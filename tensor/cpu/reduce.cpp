// The CPU backend's reductions and scans (the reduce and scan entries of the device table,
// tensor/backend.hpp); tensor/ops/reduce.cpp does their checks and dims.
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
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "../parallel.hpp"
#include "backend.hpp"
#include "vec_math.hpp"

// The per-leaf and per-row kernels are called once per block of work; keeping them out of
// line keeps this file's code size (and compile time) down at no measurable cost.
#if defined(__GNUC__)
#define TIDE_NOINLINE __attribute__((noinline))
#else
#define TIDE_NOINLINE
#endif

namespace tide::cpu {

namespace {

constexpr int64_t kLeaf = 4096;         // elements per leaf of a contiguous run
constexpr int64_t kRowLeaf = 16;        // rows accumulated directly before pairwise combining
constexpr int64_t kTile = 2048;         // columns per tile of an OUTER reduction

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
bool make_plan(const Tensor& x, const ReduceSpec& s, Plan& p) {
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
void run_reduce(const Tensor& x0, const ReduceSpec& s, const Op& op) {
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

// logsumexp's map, e^(v - m); named so that MapReduce::leaf can run it through exp's vector
// kernel (float and double).
template <typename T>
struct ExpOfShiftMap {
  T operator()(T v, T m) const { return std::exp(v - m); }
};
template <typename Map, typename T, typename A>
concept ExpOfShift = std::is_same_v<Map, ExpOfShiftMap<A>> && std::is_same_v<T, A> &&
                     (std::is_same_v<A, float> || std::is_same_v<A, double>);

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
    if constexpr (ExpOfShift<Map, T, A>) {
      if (n >= L) return exp_leaf<L>(p, n, m);
    }
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
  // leaf for a map of e^(v - m), through exp's vector kernel (vec_math.hpp) into L lanes.
  template <int L>
  A exp_leaf(const T* p, int64_t n, A m) const {
    A acc[L];
    for (int j = 0; j < L; ++j) acc[j] = ident;
    vec_detail::exp_shift_into_lanes<L>(p, n, m, acc, comb);
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


// sum / prod in the engine's dtypes (bool sums as int64).
template <bool Prod>
Tensor sum_prod(const Tensor& x, const ReduceSpec& s) {
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
  return out;
}

Tensor mean(const Tensor& x, const ReduceSpec& s) {
  Tensor xc = canonical(x, false);
  Tensor out = Tensor::empty(s.keep_shape, xc.dtype());
  dispatch_float(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const T count = T(s.count);
    run_reduce(xc, s, make_op<T, T, true>(T(0), [](T v, T) { return v; }, [](T a, T b) { return a + b; },
                                          [o, count](int64_t i, T a) { o[i] = a / count; }));
  });
  return out;
}

template <bool IsMax>
Tensor amax(const Tensor& x, const ReduceSpec& s) {
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
  return out;
}

template <bool IsMax>
Tensor argmax(const Tensor& x, const ReduceSpec& s, const ReduceArgs& a) {
  Tensor xc = canonical(x, false);
  Tensor values;
  if (a.want_values) values = Tensor::empty(s.keep_shape, xc.dtype());
  *a.indices = Tensor::empty(s.keep_shape, DType::Int64);
  dispatch_canonical<false>(xc.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ArgWriter<T> wr{a.want_values ? values.data<T>() : nullptr, a.indices->data<int64_t>()};
    run_reduce(xc, s, make_arg_op<T, IsMax>(wr));
  });
  return values;
}

// Two passes: the mean of each output, then the mean squared deviation from it.
Tensor var(const Tensor& x, const ReduceSpec& s, double correction, bool take_sqrt) {
  Tensor xc = canonical(x, false);
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
  return out;
}

Tensor norm(const Tensor& x, const ReduceSpec& s, double p) {
  Tensor xc = canonical(x, false);
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
  return out;
}

// all / any of a bool x.
template <bool All>
Tensor all_any(const Tensor& x, const ReduceSpec& s) {
  Tensor out = Tensor::empty(s.keep_shape, DType::Bool);
  bool* o = out.data<bool>();
  using A = uint8_t;
  auto map = [](bool v, A) { return A(v); };
  auto wr = [o](int64_t i, A a) { o[i] = a != 0; };
  if constexpr (All) run_reduce(x, s, make_op<bool, A, false>(A(1), map, [](A a, A b) { return A(a & b); }, wr));
  else run_reduce(x, s, make_op<bool, A, false>(A(0), map, [](A a, A b) { return A(a | b); }, wr));
  return out;
}

Tensor logsumexp(const Tensor& x, const ReduceSpec& s) {
  Tensor xc = canonical(x, false);
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
    run_reduce(xc, s, make_op<T, T, true, true>(T(0), ExpOfShiftMap<T>{},
                                                [](T a, T b) { return a + b; },
                                                [o, mp](int64_t i, T a) { o[i] = std::log(a) + mp[i]; }, mp));
  });
  return out;
}

// Accumulator of a scan: double for float32 (as PyTorch's CPU cumsum), float for
// float16/bfloat16, int64 for integers.
template <typename T>
using scan_acc_t = std::conditional_t<std::is_same_v<T, float>, double, sum_acc_t<T>>;

template <bool Prod>
Tensor scan(const Tensor& x0, int d, DType od) {
  Tensor x = x0.to(od).contiguous();
  Tensor out = Tensor::empty(x.sizes(), od);
  if (x.numel() == 0) return out;
  const Around g = around(x, d);
  TIDE_DISPATCH_ALL(od, Prod ? "cumprod" : "cumsum", [&] {
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

Tensor reduce(Reduction kind, const Tensor& x, const ReduceSpec& s, const ReduceArgs& a) {
  switch (kind) {
    case Reduction::Sum: return sum_prod<false>(x, s);
    case Reduction::Prod: return sum_prod<true>(x, s);
    case Reduction::Mean: return mean(x, s);
    case Reduction::Max: return amax<true>(x, s);
    case Reduction::Min: return amax<false>(x, s);
    case Reduction::ArgMax: return argmax<true>(x, s, a);
    case Reduction::ArgMin: return argmax<false>(x, s, a);
    case Reduction::Var: return var(x, s, a.param, false);
    case Reduction::Std: return var(x, s, a.param, true);
    case Reduction::Norm: return norm(x, s, a.param);
    case Reduction::LogSumExp: return logsumexp(x, s);
    case Reduction::All: return all_any<true>(x, s);
    case Reduction::Any: return all_any<false>(x, s);
  }
  TIDE_ASSERT(false);
}

Tensor scan(ScanKind kind, const Tensor& x, int d, DType out) {
  return kind == ScanKind::Prod ? scan<true>(x, d, out) : scan<false>(x, d, out);
}

}  // namespace tide::cpu
