// The FFT ops: the input is converted to the transform's precision and resized (a view when
// truncated, a zero-padded copy when longer), then every dim is one call into the FFT module
// over the whole batch with the tensors' strides: the first out of place into the result,
// the others in place on it. The normalisation is one pass over the result.
#include "fft.hpp"

#include <cmath>
#include <complex>
#include <cstring>

#include "../fft/engine.hpp"
#include "../memory_budget.hpp"
#include "elementwise.hpp"
#include "shape.hpp"

namespace tide::ops {

namespace {

TideFftPrecision precision_of(DType cdtype) {
  return cdtype == DType::Complex128 ? TIDE_FFT_DOUBLE : TIDE_FFT_FLOAT;
}

void check_input(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
                 DType cdtype) {
  check_defined(x, op);
  TIDE_CHECK(x.device().is_cpu(), op, ": the FFT runs on the CPU only, got a tensor on ", x.device().str(),
             " (move it with x:cpu())");
  TIDE_ASSERT(is_complex(cdtype) && dims.size() == n.size() && !dims.empty());
  for (size_t i = 0; i < dims.size(); ++i) {
    TIDE_ASSERT(dims[i] >= 0 && dims[i] < x.dim());
    TIDE_CHECK(n[i] >= 1, op, ": invalid number of data points (", n[i], ") specified");
  }
}

// x with each dims[i] cut to, or zero-padded to, n[i].
Tensor resized(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n) {
  Tensor v = x;
  Dims shape = x.sizes();
  bool pad = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    int d = dims[i];
    if (n[i] < v.size(d)) v = narrow(v, d, 0, n[i]);
    pad = pad || n[i] > x.size(d);
    shape[d] = n[i];
  }
  if (!pad) return v;
  Tensor z = Tensor::empty(shape, x.dtype(), {}, op);
  if (z.numel() > 0) std::memset(z.data_ptr(), 0, z.nbytes());  // all-zero bits: 0.0 and 0 + 0i
  Tensor corner = z;
  for (int d = 0; d < x.dim(); ++d) corner = narrow(corner, d, 0, v.size(d));
  copy_(corner, v);
  return z;
}

// Whether n has a prime factor above 64 (FFTW then uses Rader's or Bluestein's algorithm).
bool has_large_prime_factor(int64_t n) {
  for (int64_t p = 2; p <= 64 && n > 1; ++p)
    while (n % p == 0) n /= p;
  return n > 1;
}

// One batch of 1-D transforms of length n along dim d, from `in` to `out` (equal except
// along d), the batch being every other dim. FFTW's own memory is not a tensor: about n
// points of twiddles and buffers, and for large prime factors Bluestein's buffers of up to
// 4n points, two of them; it is checked against the interpreter's memory budget first.
void run(const char* op, TideFftKind kind, DType cdtype, int sign, int d, int64_t n, const Tensor& in,
         const Tensor& out) {
  check_host_memory(op, size_t(n) * (has_large_prime_factor(n) ? 10 : 2) * dtype_size(cdtype));
  std::vector<TideFftDim> batch;
  for (int i = 0; i < out.dim(); ++i) {
    if (i == d || out.size(i) == 1) continue;
    batch.push_back({out.size(i), in.stride(i), out.stride(i)});
  }
  fft::execute(op, kind, precision_of(cdtype), sign, {n, in.stride(d), out.stride(d)}, batch, in.data_ptr(),
               out.data_ptr());
}

double product(const std::vector<int64_t>& n) {
  double p = 1;
  for (int64_t v : n) p *= double(v);
  return p;
}

// Multiplies a new contiguous tensor (complex or real) by the normalisation of a transform
// over `points` points.
void normalise(Tensor& t, FftNorm norm, bool forward, double points) {
  double s = 1;
  if (norm == FftNorm::Ortho) s = 1 / std::sqrt(points);
  else if ((norm == FftNorm::Backward) != forward) s = 1 / points;
  if (s == 1 || t.numel() == 0) return;
  int64_t count = t.numel() * (is_complex(t.dtype()) ? 2 : 1);
  if (t.dtype() == DType::Complex128 || t.dtype() == DType::Float64) {
    double* p = static_cast<double*>(t.data_ptr());
    for (int64_t i = 0; i < count; ++i) p[i] *= s;
  } else {
    float* p = static_cast<float*>(t.data_ptr());
    float f = float(s);
    for (int64_t i = 0; i < count; ++i) p[i] *= f;
  }
}

// In a contiguous complex tensor whose rows along d hold the DFTs of real sequences in their
// first n/2+1 entries, fills the others: X[k] = conj(X[n - k]).
template <typename R>
void complete_hermitian(Tensor& t, int d) {
  auto* p = static_cast<std::complex<R>*>(t.data_ptr());
  int64_t n = t.size(d), inner = t.stride(d), outer = n == 0 ? 0 : t.numel() / (n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    std::complex<R>* row = p + o * n * inner;
    for (int64_t k = n / 2 + 1; k < n; ++k)
      for (int64_t i = 0; i < inner; ++i) row[k * inner + i] = std::conj(row[(n - k) * inner + i]);
  }
}

// Conjugates a new contiguous complex tensor in place.
void conjugate(Tensor& t) {
  int64_t count = t.numel();
  if (t.dtype() == DType::Complex128)
    for (auto* p = static_cast<std::complex<double>*>(t.data_ptr()); count-- > 0; ++p) *p = std::conj(*p);
  else
    for (auto* p = static_cast<std::complex<float>*>(t.data_ptr()); count-- > 0; ++p) *p = std::conj(*p);
}

}  // namespace

Tensor fft_c2c(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, bool forward, DType cdtype) {
  check_input(op, x, dims, n, cdtype);
  int sign = forward ? -1 : 1;
  bool real = !is_complex(x.dtype());
  Tensor in = resized(op, x.to(real ? real_of_complex(cdtype) : cdtype), dims, n);
  Tensor out = Tensor::empty(in.sizes(), cdtype, {}, op);
  if (out.numel() == 0) return out;
  size_t last = dims.size() - 1;
  if (real) {
    // r2c into the first n/2+1 entries of each row along the last dim, then the rest by
    // symmetry: X[n - k] = conj(X[k]).
    int d = dims[last];
    run(op, TIDE_FFT_R2C, cdtype, -1, d, n[last], in, narrow(out, d, 0, n[last] / 2 + 1));
    if (cdtype == DType::Complex128) complete_hermitian<double>(out, d);
    else complete_hermitian<float>(out, d);
    if (!forward) conjugate(out);  // the backward transform of a real sequence is the forward's conjugate
  } else {
    run(op, TIDE_FFT_C2C, cdtype, sign, dims[last], n[last], in, out);
  }
  for (size_t i = last; i-- > 0;) run(op, TIDE_FFT_C2C, cdtype, sign, dims[i], n[i], out, out);
  normalise(out, norm, forward, product(n));
  return out;
}

Tensor fft_r2c(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, DType cdtype, bool conj_output) {
  check_input(op, x, dims, n, cdtype);
  Tensor in = resized(op, x.to(real_of_complex(cdtype)), dims, n);
  size_t last = dims.size() - 1;
  Dims shape = in.sizes();
  shape[dims[last]] = n[last] / 2 + 1;
  Tensor out = Tensor::empty(shape, cdtype, {}, op);
  if (out.numel() == 0) return out;
  run(op, TIDE_FFT_R2C, cdtype, -1, dims[last], n[last], in, out);
  for (size_t i = last; i-- > 0;) run(op, TIDE_FFT_C2C, cdtype, -1, dims[i], n[i], out, out);
  normalise(out, norm, true, product(n));
  if (conj_output) conjugate(out);
  return out;
}

Tensor fft_c2r(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, DType cdtype, bool conj_input) {
  check_input(op, x, dims, n, cdtype);
  size_t last = dims.size() - 1;
  std::vector<int64_t> half = n;
  half[last] = n[last] / 2 + 1;
  Tensor in = resized(op, x.to(cdtype), dims, half);
  Dims shape = in.sizes();
  shape[dims[last]] = n[last];
  Tensor out = Tensor::empty(shape, real_of_complex(cdtype), {}, op);
  if (out.numel() == 0) return out;
  // c2r overwrites its input: it gets a new contiguous buffer (the c2c passes' result, or a
  // copy when `in` still shares x's memory or may overlap itself).
  Tensor work;
  if (last > 0) {
    work = Tensor::empty(in.sizes(), cdtype, {}, op);
    if (conj_input) {
      in = in.clone();
      conjugate(in);
    }
    run(op, TIDE_FFT_C2C, cdtype, 1, dims[last - 1], n[last - 1], in, work);
    for (size_t i = last - 1; i-- > 0;) run(op, TIDE_FFT_C2C, cdtype, 1, dims[i], n[i], work, work);
  } else {
    work = in.storage() == x.storage() || !in.is_contiguous() ? in.clone() : in;
    if (conj_input) conjugate(work);
  }
  run(op, TIDE_FFT_C2R, cdtype, 1, dims[last], n[last], work, out);
  normalise(out, norm, false, product(n));
  return out;
}

}  // namespace tide::ops
