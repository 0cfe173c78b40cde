// The exact overlap tests behind tensor/overlap.hpp. Both ask whether bounded integers x_i
// exist with sum(coef_i * x_i) == target (NumPy's solve_may_share_memory): a depth-first
// search over the terms, largest coefficient first, where each level tries only the values
// that leave a reachable remainder, so that the usual layouts take one path. The search is
// bounded; when it gives up the answer is "they may overlap", which is always safe: a copy
// of an input, or a refused write into a tensor made by as_strided-like means.
#include "overlap.hpp"

#include <algorithm>
#include <cstdint>

namespace tide {

namespace {

constexpr int64_t kMaxWork = int64_t(1) << 16;  // search nodes before giving up

struct Term {
  int64_t coef, bound;  // coef > 0; the unknown lies in [0, bound] (signed: [-bound, bound])
};

// Up to two tensors' dims and a unit term, largest coefficient first.
struct Terms {
  Term t[2 * kMaxDims + 1];
  int64_t rest[2 * kMaxDims + 2];  // rest[i]: the largest sum the terms from i on can reach
  int n = 0;
  void add(int64_t coef, int64_t bound) {
    if (bound > 0) t[n++] = {coef, bound};
  }
  // Sorts by coefficient (descending), merging equal coefficients when `merge`.
  void finish(bool merge) {
    std::sort(t, t + n, [](const Term& x, const Term& y) { return x.coef > y.coef; });
    if (merge) {
      int m = 0;
      for (int i = 0; i < n; ++i) {
        if (m > 0 && t[m - 1].coef == t[i].coef) t[m - 1].bound += t[i].bound;
        else t[m++] = t[i];
      }
      n = m;
    }
    rest[n] = 0;
    for (int i = n - 1; i >= 0; --i) rest[i] = rest[i + 1] + t[i].coef * t[i].bound;
  }
};

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }
int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 && a > 0); }

// A solution of sum(coef * x) == target with 0 <= x <= bound for terms i.. (true when the
// work runs out).
bool solvable(const Terms& s, int i, int64_t target, int64_t& work) {
  if (i == s.n) return target == 0;
  const Term& k = s.t[i];
  const int64_t lo = std::max<int64_t>(0, ceil_div(target - s.rest[i + 1], k.coef));
  const int64_t hi = std::min(k.bound, floor_div(target, k.coef));
  for (int64_t x = hi; x >= lo; --x) {
    if (--work < 0) return true;
    if (solvable(s, i + 1, target - x * k.coef, work)) return true;
  }
  return false;
}

// A solution of sum(coef * c) == target with |c| <= bound and c not all zero for terms i..;
// `nonzero`: an earlier c is nonzero. The first nonzero c is taken positive (c and -c are
// both solutions). True when the work runs out.
bool signed_solvable(const Terms& s, int i, int64_t target, bool nonzero, int64_t& work) {
  if (i == s.n) return target == 0 && nonzero;
  const Term& k = s.t[i];
  const int64_t after = s.rest[i + 1];
  const int64_t lo = std::max(nonzero ? -k.bound : 0, ceil_div(target - after, k.coef));
  const int64_t hi = std::min(k.bound, floor_div(target + after, k.coef));
  for (int64_t c = lo; c <= hi; ++c) {
    if (--work < 0) return true;
    if (signed_solvable(s, i + 1, target - c * k.coef, nonzero || c != 0, work)) return true;
  }
  return false;
}

// No elements (a size-0 dim), decided without the product of the sizes, which an expanded
// view may take beyond int64.
bool is_empty(const Tensor& t) {
  for (int d = 0; d < t.dim(); ++d)
    if (t.size(d) == 0) return true;
  return false;
}

// The lowest address of t's elements (below address() where a stride is negative) and the
// span of its bytes from there to one past its last. Seen from that address, a reversed dim
// is the same set of bytes with the stride's magnitude, which is how the tests below take it.
intptr_t lowest_address(const Tensor& t, int64_t& extent) {
  const int64_t item = int64_t(t.itemsize());
  intptr_t low = reinterpret_cast<intptr_t>(t.address());
  extent = item;
  for (int d = 0; d < t.dim(); ++d) {
    const int64_t reach = (t.size(d) - 1) * t.stride(d) * item;
    if (reach < 0) low += reach;
    extent += reach < 0 ? -reach : reach;
  }
  return low;
}

int64_t magnitude(int64_t stride) { return stride < 0 ? -stride : stride; }

// Same address, element size, and sizes and strides over the dims of size > 1.
bool same_layout(const Tensor& a, const Tensor& b) {
  if (a.address() != b.address() || a.itemsize() != b.itemsize()) return false;
  int i = 0, j = 0;
  for (;; ++i, ++j) {
    while (i < a.dim() && a.size(i) == 1) ++i;
    while (j < b.dim() && b.size(j) == 1) ++j;
    if (i == a.dim() || j == b.dim()) return i == a.dim() && j == b.dim();
    if (a.size(i) != b.size(j) || a.stride(i) != b.stride(j)) return false;
  }
}

}  // namespace

namespace detail {

MemOverlap view_overlap(const Tensor& a, const Tensor& b) {
  if (is_empty(a) || is_empty(b)) return MemOverlap::None;
  int64_t ea, eb;
  const intptr_t a0 = lowest_address(a, ea), b0 = lowest_address(b, eb);
  if (a0 >= b0 + eb || b0 >= a0 + ea) return MemOverlap::None;
  if (same_layout(a, b)) return MemOverlap::Same;
  // Bytes a0 + sum(x_i p_i) + u of a and b0 + sum(y_j q_j) + v of b meet (p, q: the strides'
  // magnitudes in bytes), with y' = size - 1 - y and v' = itemsize - 1 - v, when
  // sum(x_i p_i) + sum(y'_j q_j) + u + v' = b0 - a0 + eb - 1.
  Terms s;
  for (const Tensor* t : {&a, &b})
    for (int d = 0; d < t->dim(); ++d)
      if (t->stride(d) != 0) s.add(magnitude(t->stride(d)) * int64_t(t->itemsize()), t->size(d) - 1);
  s.add(1, int64_t(a.itemsize() + b.itemsize()) - 2);
  s.finish(true);
  int64_t work = kMaxWork;
  return solvable(s, 0, int64_t(b0 - a0) + eb - 1, work) ? MemOverlap::Partial : MemOverlap::None;
}

// Two index vectors i != j of t with the same address: sum(c_d stride_d) == 0 for some
// nonzero c with |c_d| < size_d (c_d's range is symmetric, so only |stride_d| matters).
bool strided_self_overlap(const Tensor& t) {
  Terms s;
  for (int d = 0; d < t.dim(); ++d) {
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
    s.add(magnitude(t.stride(d)), t.size(d) - 1);
  }
  s.finish(false);
  for (int i = 0; i + 1 < s.n; ++i)
    if (s.t[i].coef == s.t[i + 1].coef) return true;  // two dims one stride apart: c = (1, -1)
  int64_t work = kMaxWork;
  return signed_solvable(s, 0, 0, false, work);
}

}  // namespace detail

void fail_internal_overlap(const char* op, const char* what) {
  TIDE_FAIL(op, ": unsupported operation: more than one element of ", what,
            " refers to a single memory location. Please clone() the tensor before performing the operation.");
}

void fail_read_only(const char* op, const char* what) {
  TIDE_FAIL(op, ": cannot write to ", what, ": it is read-only (a file mapped by np.load with mmap_mode=\"r\"); "
            "write to a copy (x:clone()), or load with mmap_mode=\"c\" or \"r+\"");
}

Tensor readable_input(const Tensor& out, const Tensor& in, Reads reads) {
  return needs_copy(out, in, reads) ? in.clone() : in;
}

}  // namespace tide
