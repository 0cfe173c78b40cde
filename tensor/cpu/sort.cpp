// The CPU backend's sort (the sort entry of the device table, tensor/backend.hpp).
//
// Values of 32 bits or less are sorted as 64-bit keys: an order-preserving 32-bit image of
// the value (NaN above +inf, -0 equal to +0) above the 32-bit position, so that plain
// integer order is the stable order. Wider values sort (value, position) pairs.

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "../parallel.hpp"
#include "backend.hpp"

namespace tide::cpu {

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

}  // namespace

void sort(const char* op, const Tensor& x, int d, int64_t k, bool descending, Tensor& values, Tensor& indices) {
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

}  // namespace tide::cpu
