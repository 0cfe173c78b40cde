// Bindings of the FFT ops (tensor/ops/fft.hpp): np.fft and torch.fft's transforms, with
// NumPy's and PyTorch's arguments (n / s, axis / axes / dim, norm) and result dtypes: NumPy
// semantics give complex128 (float64 for the inverse real transforms) whatever the input, as
// NumPy 1.24; PyTorch's keep the input's precision (float32 -> complex64, integers -> the
// default float's). Dims are 1-based. fftfreq, rfftfreq, fftshift, ifftshift are Lua-written
// (bindings/lua/torch_fft.lua).
#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/fft.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

using ops::FftNorm;

// HFFT: hfft, the c2r transform of x's conjugate with the norm's direction swapped (a real
// spectrum of a Hermitian signal); IHFFT: its inverse, the conjugate of an r2c transform.
enum class Kind { C2C, R2C, C2R, HFFT, IHFFT };

// The input x: a tensor (torch), or anything array-like (numpy); at least 1-D.
Tensor operand(const Args& a) {
  Tensor x = a.numpy ? a.tensor_like(1) : a.tensor(1);
  if (x.dim() == 0) a.error("expected an array of at least 1 dimension, got a 0-d one");
  return x;
}

// The transform's precision and complex result dtype.
DType complex_dtype(const Args& a, const Tensor& x, Kind kind) {
  if (a.numpy) return DType::Complex128;
  DType t = x.dtype();
  if ((kind == Kind::R2C || kind == Kind::IHFFT) && is_complex(t)) a.error("expected a real input, got " + std::string(dtype_name(t)));
  if (t == DType::Float64 || t == DType::Complex128) return DType::Complex128;
  if (is_floating(t) || t == DType::Complex64) return DType::Complex64;
  return complex_of(default_float_dtype());
}

FftNorm norm_arg(const Args& a) {
  std::optional<std::string> s;
  if (a.has(4)) {
    if (a.has_kw("norm")) a.error("norm given both as argument 4 and as a keyword");
    s = a.string(4);
  } else {
    s = a.kw_string("norm");
  }
  if (!s || *s == "backward") return FftNorm::Backward;
  if (*s == "ortho") return FftNorm::Ortho;
  if (*s == "forward") return FftNorm::Forward;
  a.error("norm must be 'backward', 'ortho' or 'forward', got '" + quote_user(*s) + "'");
}

// The keyword among `names` that the call gives (at most one, and not also at positional i);
// nullptr when none.
const char* keyword_of(const Args& a, int i, std::initializer_list<const char*> names) {
  const char* given = nullptr;
  for (const char* k : names) {
    if (!a.has_kw(k)) continue;
    if (given) a.error(std::string("give either ") + given + "= or " + k + "=, not both");
    given = k;
  }
  if (given && a.has(i)) a.error(std::string(given) + " given both as argument " + std::to_string(i) + " and as a keyword");
  return given;
}

// The dims (0-based, in the order given) from positional 3 or the dim/axis/axes keyword;
// nullopt when absent.
std::optional<std::vector<int>> dims_arg(const Args& a, int ndim, std::initializer_list<const char*> keys) {
  const char* key = keyword_of(a, 3, keys);
  if (!key && !a.has(3)) return std::nullopt;
  int idx = 3;  // positional i is at stack index i
  if (key) {
    a.push_kw(key);
    idx = lua_gettop(a.L);
  } else {
    a.consumed(3);
  }
  std::vector<int> dims = a.dims_at(idx, ndim);
  if (key) lua_pop(a.L, 1);
  return dims;
}

// The signal lengths from positional 2 or the `s` keyword (a table of integers); nullopt
// when absent.
std::optional<std::vector<int64_t>> sizes_arg(const Args& a) {
  const char* key = keyword_of(a, 2, {"s"});
  if (!key && !a.has(2)) return std::nullopt;
  std::vector<int64_t> s;
  if (key) {
    a.push_kw("s");
    int idx = lua_gettop(a.L);
    bool table = lua_type(a.L, idx) == LUA_TTABLE;
    int n = table ? int(lua_rawlen(a.L, idx)) : 0;
    for (int k = 1; table && k <= n; ++k) {
      lua_rawgeti(a.L, idx, k);
      int64_t v;
      table = integral_value(a.L, -1, v);
      lua_pop(a.L, 1);
      s.push_back(v);
    }
    lua_pop(a.L, 1);
    if (!table) a.error("s must be a table of integers");
  } else {
    if (!a.is_table(2)) a.error("s must be a table of integers");
    s = a.int_list_from(2);
  }
  return s;
}

// Runs the transform over dims with lengths n (for C2R: the output lengths).
int transform(lua_State* L, const Args& a, const Tensor& x, Kind kind, bool forward, std::vector<int> dims,
              std::vector<int64_t> n, FftNorm norm) {
  DType cdtype = complex_dtype(a, x, kind);
  if (dims.empty()) a.error("expected at least one dim to transform");
  bool hermitian = kind == Kind::HFFT || kind == Kind::IHFFT;
  if (hermitian && norm != FftNorm::Ortho) norm = norm == FftNorm::Backward ? FftNorm::Forward : FftNorm::Backward;
  Tensor r;
  if (kind == Kind::C2C) r = ag::fft_c2c(a.op, x, dims, n, norm, forward, cdtype);
  else if (kind == Kind::R2C || kind == Kind::IHFFT) r = ag::fft_r2c(a.op, x, dims, n, norm, cdtype, hermitian);
  else r = ag::fft_c2r(a.op, x, dims, n, norm, cdtype, hermitian);
  push_tensor(L, std::move(r));
  return 1;
}

// fft(x[, n][, dim][, norm]): one dim (default the last).
int one_dim(lua_State* L, Args& a, Kind kind, bool forward) {
  Tensor x = operand(a);
  const char* key = keyword_of(a, 3, {"dim", "axis"});
  int d = x.dim() - 1;
  if (key) d = a.dim_value(*a.kw_integer(key), x.dim());
  else if (a.has(3)) d = a.dim(3, x.dim());
  std::optional<int64_t> n;
  if (a.has(2)) {
    if (a.has_kw("n")) a.error("n given both as argument 2 and as a keyword");
    n = a.integer(2);
  } else {
    n = a.kw_integer("n");
  }
  int64_t len = n ? *n : kind == Kind::C2R || kind == Kind::HFFT ? 2 * (x.size(d) - 1) : x.size(d);
  return transform(L, a, x, kind, forward, {d}, {len}, norm_arg(a));
}

// fft2 / fftn (x[, s][, dims][, norm]): dims default to the last len(s) dims, or all of them
// (fftn) / the last two (fft2); s defaults to x's lengths along dims (C2R: 2 (m - 1) along
// the last).
int many_dims(lua_State* L, Args& a, Kind kind, bool forward, bool two) {
  Tensor x = operand(a);
  std::optional<std::vector<int64_t>> s = sizes_arg(a);
  std::optional<std::vector<int>> dims = dims_arg(a, x.dim(), {"dim", "axes"});
  if (!dims) {
    int count = two ? 2 : s ? int(s->size()) : x.dim();
    if (count > x.dim())
      a.error("got " + std::to_string(count) + " lengths in s for a tensor of " + std::to_string(x.dim()) + " dims");
    dims.emplace();
    for (int i = x.dim() - count; i < x.dim(); ++i) dims->push_back(i);
  }
  std::vector<int64_t> n;
  if (s) {
    if (s->size() != dims->size())
      a.error("s has " + std::to_string(s->size()) + " lengths for " + std::to_string(dims->size()) + " dims");
    n = *s;
  } else {
    for (int d : *dims) n.push_back(x.size(d));
    if ((kind == Kind::C2R || kind == Kind::HFFT) && !n.empty()) n.back() = 2 * (n.back() - 1);
  }
  return transform(L, a, x, kind, forward, *dims, n, norm_arg(a));
}

int fft_fn(lua_State* L, Args& a) { return one_dim(L, a, Kind::C2C, true); }
int ifft_fn(lua_State* L, Args& a) { return one_dim(L, a, Kind::C2C, false); }
int rfft_fn(lua_State* L, Args& a) { return one_dim(L, a, Kind::R2C, true); }
int irfft_fn(lua_State* L, Args& a) { return one_dim(L, a, Kind::C2R, false); }
int hfft_fn(lua_State* L, Args& a) { return one_dim(L, a, Kind::HFFT, false); }
int ihfft_fn(lua_State* L, Args& a) { return one_dim(L, a, Kind::IHFFT, true); }
int fft2_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::C2C, true, true); }
int ifft2_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::C2C, false, true); }
int rfft2_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::R2C, true, true); }
int irfft2_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::C2R, false, true); }
int fftn_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::C2C, true, false); }
int ifftn_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::C2C, false, false); }
int rfftn_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::R2C, true, false); }
int irfftn_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::C2R, false, false); }
int hfft2_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::HFFT, false, true); }
int ihfft2_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::IHFFT, true, true); }
int hfftn_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::HFFT, false, false); }
int ihfftn_fn(lua_State* L, Args& a) { return many_dims(L, a, Kind::IHFFT, true, false); }

#define TIDE_FFT1_ARGS "(x[, n][, dim][, norm][, {n=, dim=, axis=, norm=}]) -> Tensor: "
#define TIDE_FFTN_ARGS "(x[, s][, dim][, norm][, {s=, dim=, axes=, norm=}]) -> Tensor: "
#define TIDE_FFT_NOTE                                                                                           \
  " norm 'backward' (default: the inverse divides by n), 'ortho' (both by sqrt(n)) or 'forward'. np: complex128 " \
  "results; torch: complex64 for float32 input. CPU tensors only."

const Binding kFftBindings[] = {
    {"fft.fft", fft_fn, TORCH | NUMPY,
     "fft.fft" TIDE_FFT1_ARGS "the discrete Fourier transform along dim (default -1), the input cut or "
     "zero-padded to n points." TIDE_FFT_NOTE},
    {"fft.ifft", ifft_fn, TORCH | NUMPY,
     "fft.ifft" TIDE_FFT1_ARGS "the inverse discrete Fourier transform along dim (default -1)." TIDE_FFT_NOTE},
    {"fft.rfft", rfft_fn, TORCH | NUMPY,
     "fft.rfft" TIDE_FFT1_ARGS "the transform of a real input along dim: its n/2+1 non-negative frequencies."
     TIDE_FFT_NOTE},
    {"fft.irfft", irfft_fn, TORCH | NUMPY,
     "fft.irfft" TIDE_FFT1_ARGS "the inverse of rfft: n real points (default 2 (m - 1) for m inputs) from the "
     "non-negative frequencies." TIDE_FFT_NOTE},
    {"fft.hfft", hfft_fn, TORCH | NUMPY,
     "fft.hfft" TIDE_FFT1_ARGS "the real spectrum of a signal with Hermitian symmetry given by its first m "
     "points: irfft of the conjugate with the norm's direction swapped (n default 2 (m - 1))." TIDE_FFT_NOTE},
    {"fft.ihfft", ihfft_fn, TORCH | NUMPY,
     "fft.ihfft" TIDE_FFT1_ARGS "the inverse of hfft for a real input: the conjugate of rfft with the norm's "
     "direction swapped (n/2+1 outputs)." TIDE_FFT_NOTE},
    {"fft.fft2", fft2_fn, TORCH | NUMPY,
     "fft.fft2" TIDE_FFTN_ARGS "fftn over two dims (default the last two)." TIDE_FFT_NOTE},
    {"fft.ifft2", ifft2_fn, TORCH | NUMPY,
     "fft.ifft2" TIDE_FFTN_ARGS "ifftn over two dims (default the last two)." TIDE_FFT_NOTE},
    {"fft.rfft2", rfft2_fn, TORCH | NUMPY,
     "fft.rfft2" TIDE_FFTN_ARGS "rfftn over two dims (default the last two)." TIDE_FFT_NOTE},
    {"fft.irfft2", irfft2_fn, TORCH | NUMPY,
     "fft.irfft2" TIDE_FFTN_ARGS "irfftn over two dims (default the last two)." TIDE_FFT_NOTE},
    {"fft.fftn", fftn_fn, TORCH | NUMPY,
     "fft.fftn" TIDE_FFTN_ARGS "the n-dimensional discrete Fourier transform over dims (default: the last "
     "#s dims, or all), the input cut or zero-padded to the lengths s." TIDE_FFT_NOTE},
    {"fft.ifftn", ifftn_fn, TORCH | NUMPY,
     "fft.ifftn" TIDE_FFTN_ARGS "the inverse of fftn." TIDE_FFT_NOTE},
    {"fft.rfftn", rfftn_fn, TORCH | NUMPY,
     "fft.rfftn" TIDE_FFTN_ARGS "fftn of a real input, with the last dim's n/2+1 non-negative frequencies only."
     TIDE_FFT_NOTE},
    {"fft.irfftn", irfftn_fn, TORCH | NUMPY,
     "fft.irfftn" TIDE_FFTN_ARGS "the inverse of rfftn: real output of lengths s (the last by default "
     "2 (m - 1))." TIDE_FFT_NOTE},
    {"fft.hfft2", hfft2_fn, TORCH, "fft.hfft2" TIDE_FFTN_ARGS "hfftn over two dims (default the last two)." TIDE_FFT_NOTE},
    {"fft.ihfft2", ihfft2_fn, TORCH, "fft.ihfft2" TIDE_FFTN_ARGS "ihfftn over two dims (default the last two)." TIDE_FFT_NOTE},
    {"fft.hfftn", hfftn_fn, TORCH,
     "fft.hfftn" TIDE_FFTN_ARGS "the real n-dimensional spectrum of a signal with Hermitian symmetry along the "
     "last of dims given by its first m points there: irfftn of the conjugate with the norm's direction swapped "
     "(lengths s, the last by default 2 (m - 1))." TIDE_FFT_NOTE},
    {"fft.ihfftn", ihfftn_fn, TORCH,
     "fft.ihfftn" TIDE_FFTN_ARGS "the inverse of hfftn for a real input: the conjugate of rfftn with the norm's "
     "direction swapped (the last of dims keeps n/2+1 outputs)." TIDE_FFT_NOTE},
};

}  // namespace

void register_fft_bindings() {
  register_bindings(kFftBindings, sizeof(kFftBindings) / sizeof(kFftBindings[0]));
}

}  // namespace tide::lua
