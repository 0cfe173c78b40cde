// dtype names, sizes and PyTorch's promotion lattice.
#include "dtype.hpp"

#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdint>

namespace tide {

size_t dtype_size(DType t) {
  static constexpr size_t sizes[kNumDTypes] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 2, 4, 8, 8, 16};
  return sizes[int(t)];
}

std::string_view dtype_name(DType t) {
  static constexpr std::string_view names[kNumDTypes] = {
      "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
      "uint16", "uint32", "uint64", "complex64", "complex128"};
  return names[int(t)];
}

bool parse_dtype(std::string_view name, DType& out) {
  struct Alias {
    std::string_view name;
    DType dtype;
  };
  static constexpr Alias aliases[] = {
      {"bool", DType::Bool},        {"uint8", DType::UInt8},       {"byte", DType::UInt8},
      {"int8", DType::Int8},        {"int16", DType::Int16},       {"short", DType::Int16},
      {"int32", DType::Int32},      {"int", DType::Int32},         {"int64", DType::Int64},
      {"long", DType::Int64},       {"float16", DType::Float16},   {"half", DType::Float16},
      {"bfloat16", DType::BFloat16}, {"float32", DType::Float32},  {"float", DType::Float32},
      {"float64", DType::Float64},  {"double", DType::Float64},   {"uint16", DType::UInt16},
      {"uint32", DType::UInt32},    {"uint64", DType::UInt64},
      {"complex64", DType::Complex64}, {"cfloat", DType::Complex64}, {"complex128", DType::Complex128},
      {"cdouble", DType::Complex128}};
  for (const Alias& a : aliases)
    if (a.name == name) {
      out = a.dtype;
      return true;
    }
  return false;
}

// The calling thread's dtype settings, in one thread_local: in a shared library each access
// to one costs a __tls_get_addr call, once per function for a struct.
struct ThreadDTypes {
  bool numpy = false;            // NumpySemanticsScope
  int default_override = -1;     // a DefaultFloatScope's dtype, or -1
  DType* default_slot = nullptr;  // set_thread_default_dtype_slot
};
static thread_local ThreadDTypes t_dtypes;

bool numpy_semantics() { return t_dtypes.numpy; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  constexpr DType b1 = DType::Bool, u1 = DType::UInt8, i1 = DType::Int8, i2 = DType::Int16,
                  i4 = DType::Int32, i8 = DType::Int64, f2 = DType::Float16, bf = DType::BFloat16,
                  f4 = DType::Float32, f8 = DType::Float64, u2 = DType::UInt16, u4 = DType::UInt32,
                  u8 = DType::UInt64, c8 = DType::Complex64, c16 = DType::Complex128;
  // Row/column order follows the enum. The first ten columns are c10's table. PyTorch 1.13
  // has no uint16/32/64, so their rows follow NumPy's promote_types (uint64 with any signed
  // integer gives float64; uint32 with float16/float32 gives float64); bfloat16 acts there
  // as float16 does in NumPy. complex64 with float64 is complex128 in both libraries.
  static constexpr DType torch_table[kNumDTypes][kNumDTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, u2, u4, u8, c8, c16},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, u2, u4, u8, c8, c16},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, i4, i8, f8, c8, c16},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, i4, i8, f8, c8, c16},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, i4, i8, f8, c8, c16},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, i8, i8, f8, c8, c16},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, f4, f8, f8, c8, c16},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, f4, f8, f8, c8, c16},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, f4, f8, f8, c8, c16},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c16, c16},
      /* u2 */ {u2, u2, i4, i4, i4, i8, f4, f4, f4, f8, u2, u4, u8, c8, c16},
      /* u4 */ {u4, u4, i8, i8, i8, i8, f8, f8, f8, f8, u4, u4, u8, c16, c16},
      /* u8 */ {u8, u8, f8, f8, f8, f8, f8, f8, f8, f8, u8, u8, u8, c16, c16},
      /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c16, c8, c16, c16, c8, c16},
      /* c16*/ {c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16},
  };
  // np.promote_types (NumPy 1.24.2): an integer widens a float until it holds the integer's
  // range exactly (int16 + float16 = float32, int32 + float32 = float64). bfloat16 as torch.
  // complex64 takes the precision the real operand needs (int32 + complex64 = complex128).
  static constexpr DType numpy_table[kNumDTypes][kNumDTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, u2, u4, u8, c8, c16},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, u2, u4, u8, c8, c16},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, i4, i8, f8, c8, c16},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f4, bf, f4, f8, i4, i8, f8, c8, c16},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f8, bf, f8, f8, i4, i8, f8, c16, c16},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f8, bf, f8, f8, i8, i8, f8, c16, c16},
      /* f2 */ {f2, f2, f2, f4, f8, f8, f2, f4, f4, f8, f4, f8, f8, c8, c16},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, f4, f8, f8, c8, c16},
      /* f4 */ {f4, f4, f4, f4, f8, f8, f4, f4, f4, f8, f4, f8, f8, c8, c16},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c16, c16},
      /* u2 */ {u2, u2, i4, i4, i4, i8, f4, f4, f4, f8, u2, u4, u8, c8, c16},
      /* u4 */ {u4, u4, i8, i8, i8, i8, f8, f8, f8, f8, u4, u4, u8, c16, c16},
      /* u8 */ {u8, u8, f8, f8, f8, f8, f8, f8, f8, f8, u8, u8, u8, c16, c16},
      /* c8 */ {c8, c8, c8, c8, c16, c16, c8, c8, c8, c16, c8, c16, c16, c8, c16},
      /* c16*/ {c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16},
  };
  return (t_dtypes.numpy ? numpy_table : torch_table)[int(a)][int(b)];
}

static std::atomic<DType> g_default_float{DType::Float32};
DType script_default_float_dtype() {
  const ThreadDTypes& t = t_dtypes;
  return t.default_slot ? *t.default_slot : g_default_float.load(std::memory_order_relaxed);
}

DType default_float_dtype() {
  const ThreadDTypes& t = t_dtypes;
  if (t.default_override >= 0) return DType(t.default_override);
  return script_default_float_dtype();
}

DType* set_thread_default_dtype_slot(DType* slot) {
  DType* previous = t_dtypes.default_slot;
  t_dtypes.default_slot = slot;
  return previous;
}

DefaultFloatScope::DefaultFloatScope(DType t) : saved_(t_dtypes.default_override) { t_dtypes.default_override = int(t); }
DefaultFloatScope::~DefaultFloatScope() { t_dtypes.default_override = saved_; }

NumpySemanticsScope::NumpySemanticsScope(bool numpy) {
  ThreadDTypes& t = t_dtypes;
  saved_numpy_ = t.numpy, saved_float_ = t.default_override;
  t.numpy = numpy;
  t.default_override = numpy ? int(DType::Float64) : -1;
}
NumpySemanticsScope::~NumpySemanticsScope() {
  ThreadDTypes& t = t_dtypes;
  t.numpy = saved_numpy_;
  t.default_override = saved_float_;
}
void set_default_float_dtype(DType t) {
  if (t_dtypes.default_slot) *t_dtypes.default_slot = t;
  else g_default_float.store(t, std::memory_order_relaxed);
}

DType Scalar::natural_dtype() const {
  switch (kind) {
    case Bool: return DType::Bool;
    case Int: return DType::Int64;
    case Complex: return complex_of(default_float_dtype());
    default: return default_float_dtype();
  }
}

// NumPy 1.24's legacy value-based casting of a Python scalar next to an array of dtype t
// (bool, integer or float; bfloat16 is left to the PyTorch rule): a scalar of a higher
// category takes its default dtype (int64, float64); otherwise it counts as the smallest
// dtype holding its value (np.min_scalar_type, with a non-negative integer taken as signed
// next to a signed array and as unsigned next to an unsigned one, as NumPy does: uint8 + 1000
// is uint16, uint8 + -1 is int16).
static DType numpy_promote_with_scalar(DType t, const Scalar& s) {
  if (s.kind == Scalar::Bool) return t;
  const bool inexact = is_floating(t) || is_complex(t);
  if (s.kind == Scalar::Complex) {  // complex64 holds it when both parts fit a float32
    if (!inexact) return DType::Complex128;
    double v = std::fmax(std::fabs(s.f), std::fabs(s.im));
    return promote_types(t, !std::isfinite(v) || v <= double(FLT_MAX) ? DType::Complex64 : DType::Complex128);
  }
  if (s.kind == Scalar::Float) {
    if (!inexact) return DType::Float64;
    double v = std::fabs(s.f);
    DType need = !std::isfinite(v) || v <= 65504.0 ? DType::Float16
                 : v <= double(FLT_MAX)             ? DType::Float32
                                                    : DType::Float64;
    return promote_types(t, need);
  }
  int64_t v = s.i;
  if (is_bool(t)) return DType::Int64;
  if (inexact) {
    DType need = v >= -128 && v <= 255 ? DType::Float16 : v >= -32768 && v <= 65535 ? DType::Float32 : DType::Float64;
    return promote_types(t, need);
  }
  const bool unsigned_array = t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64;
  if (unsigned_array && v >= 0) {
    DType need = v <= 255 ? DType::UInt8 : v <= 65535 ? DType::UInt16 : v <= int64_t(UINT32_MAX) ? DType::UInt32 : DType::UInt64;
    return promote_types(t, need);
  }
  DType need = v >= -128 && v <= 127       ? DType::Int8
               : v >= -32768 && v <= 32767 ? DType::Int16
               : v >= INT32_MIN && v <= INT32_MAX ? DType::Int32
                                                  : DType::Int64;
  return promote_types(t, need);
}

// PyTorch: a scalar raises a tensor's dtype only when it is of a higher category
// (bool < integer < float < complex): then it takes the default dtype of its category; a
// complex scalar next to a float tensor gives that float's complex (float64 + 1j is
// complex128; float16's complex32 does not exist here: complex64).
DType promote_with_scalar(DType t, const Scalar& s) {
  if (t_dtypes.numpy && t != DType::BFloat16) [[unlikely]]
    return numpy_promote_with_scalar(t, s);
  if (s.kind == Scalar::Complex && !is_complex(t)) return complex_of(is_floating(t) ? t : default_float_dtype());
  if (s.kind == Scalar::Float && !is_floating(t) && !is_complex(t)) return default_float_dtype();
  if (s.kind == Scalar::Int && is_bool(t)) return DType::Int64;
  return t;
}

}  // namespace tide
