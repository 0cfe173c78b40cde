// Element types, their names, and PyTorch's type promotion.
#pragma once
#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "half.hpp"

namespace tide {

// New dtypes are appended (the numbering is the C API's tide_dtype), so the categories below
// are explicit lists rather than enum ranges.
enum class DType : uint8_t {
  Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, UInt16, UInt32, UInt64,
  Complex64, Complex128
};
constexpr int kNumDTypes = 15;

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);
// Parses "float32", the aliases "float" "double" "half" "long" "int" "short" "byte" and a
// leading "torch." is not accepted: names only. Returns false for an unknown name.
bool parse_dtype(std::string_view name, DType& out);
// Complex dtypes are neither floating nor integral (torch.is_floating_point(cfloat) is false).
inline bool is_floating(DType t) { return t >= DType::Float16 && t <= DType::Float64; }
inline bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
inline bool is_integral(DType t) { return t != DType::Bool && !is_floating(t) && !is_complex(t); }
inline bool is_unsigned(DType t) {
  return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64;
}
inline bool is_bool(DType t) { return t == DType::Bool; }

// Binary promotion of two tensor dtypes: torch.promote_types, or NumPy 1.24's
// np.promote_types under numpy_semantics() (int64 + float32 = float64 there; bfloat16, which
// NumPy lacks, promotes as in PyTorch either way).
DType promote_types(DType a, DType b);

// The dtype of a default float (torch.set_default_dtype); float32 unless changed.
DType default_float_dtype();
// The same without the scope of the call running (a NumPy call's float64): the script's
// setting, which torch.compile guards.
DType script_default_float_dtype();
void set_default_float_dtype(DType t);
// While set (not nullptr), the default float dtype on the calling thread is read from and
// written to *slot: an embedded interpreter's own setting. Returns the previous slot.
DType* set_thread_default_dtype_slot(DType* slot);

// Overrides the default float dtype on this thread while it lives: NumPy-style calls run
// under float64, so that np.sqrt(int_array) or np.divide(ints, 2) give float64 as in NumPy.
class DefaultFloatScope {
 public:
  explicit DefaultFloatScope(DType t);
  ~DefaultFloatScope();
  DefaultFloatScope(const DefaultFloatScope&) = delete;
  DefaultFloatScope& operator=(const DefaultFloatScope&) = delete;

 private:
  int saved_;
};

// The type arithmetic on T is done in (float for the half types).
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <> struct ComputeType<BFloat16> { using type = float; };
template <typename T> constexpr bool is_complex_v = false;
template <typename T> constexpr bool is_complex_v<std::complex<T>> = true;
template <typename T> using compute_t = typename ComputeType<T>::type;
// Whether the calling thread runs an op with NumPy semantics (see NumpySemanticsScope).
bool numpy_semantics();

// Sets the semantics of the ops run on this thread while it lives. With NumPy semantics:
// float64 is the default float, and promote_types, promote_with_scalar and
// ops::result_type follow NumPy 1.24 (value-based casting of Python scalars); without, the
// PyTorch rules and the process's default float dtype. The bindings open one per call
// (docs/translation.md, "NumPy semantics").
class NumpySemanticsScope {
 public:
  explicit NumpySemanticsScope(bool numpy);
  ~NumpySemanticsScope();
  NumpySemanticsScope(const NumpySemanticsScope&) = delete;
  NumpySemanticsScope& operator=(const NumpySemanticsScope&) = delete;

 private:
  bool saved_numpy_;
  int saved_float_;
};

// A scalar from Lua: a boolean, an integer, a float or a complex number (f + im*i). It
// takes part in promotion with a lower priority than tensors (f32 * 2.5 stays float32).
// to_double/to_int of a complex scalar read its real part: ops that take complex scalars
// check kind first.
struct Scalar {
  enum Kind : uint8_t { Bool, Int, Float, Complex } kind = Float;
  union {
    double f;
    int64_t i;
  };
  double im = 0;  // the imaginary part of a Complex scalar
  Scalar() : f(0) {}
  static Scalar complex(double re, double imag) {
    Scalar s(re);
    s.kind = Complex, s.im = imag;
    return s;
  }
  bool is_complex() const { return kind == Complex; }
  Scalar(double v) : kind(Float), f(v) {}
  Scalar(int64_t v) : kind(Int), i(v) {}
  Scalar(int v) : kind(Int), i(v) {}
  Scalar(bool v) : kind(Bool), i(v) {}
  bool is_floatlike() const { return kind == Float || kind == Complex; }
  double to_double() const { return is_floatlike() ? f : double(i); }
  bool is_zero() const { return to_double() == 0 && im == 0; }
  int64_t to_int() const { return is_floatlike() ? int64_t(f) : i; }
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return is_floatlike() ? f != 0 || im != 0 : i != 0;
    else if constexpr (std::is_integral_v<T>) return is_floatlike() ? int_from_double<T>(f) : T(i);
    else if constexpr (is_complex_v<T>) {
      using R = typename T::value_type;
      return is_floatlike() ? T(R(f), R(im)) : T(R(double(i)), R(0));
    } else return is_floatlike() ? T(f) : T(double(i));
  }
  // The scalar holding one element of type T: a uint64 above INT64_MAX becomes a float (Lua
  // integers are int64), everything else keeps its kind.
  template <typename T>
  static Scalar of(T v) {
    if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_same_v<T, uint64_t>) return v > uint64_t(INT64_MAX) ? Scalar(double(v)) : Scalar(int64_t(v));
    else if constexpr (std::is_integral_v<T>) return Scalar(int64_t(v));
    else if constexpr (is_complex_v<T>) return complex(double(v.real()), double(v.imag()));
    else return Scalar(double(compute_t<T>(v)));
  }
  // An integer of type T from a finite double: through uint64 for values at or above 2^63
  // (only uint64 holds them), through int64 otherwise (wrapping to T's width).
  // v must lie in [-2^63, 2^64).
  template <typename T>
  static T int_from_double(double v) {
    return v >= 9223372036854775808.0 ? T(uint64_t(v)) : T(int64_t(v));
  }
  // The dtype a scalar alone would get: bool, int64 or the default float.
  DType natural_dtype() const;
};

// The dtype a scalar takes next to a tensor of dtype t: PyTorch's rule (the category only),
// or under numpy_semantics() NumPy's value-based one (an int8 array plus 1000 is int16).
DType promote_with_scalar(DType t, const Scalar& s);

// Type-level helpers: the C++ type of each dtype.
template <DType D> struct CType;
template <> struct CType<DType::Bool> { using type = bool; };
template <> struct CType<DType::UInt8> { using type = uint8_t; };
template <> struct CType<DType::Int8> { using type = int8_t; };
template <> struct CType<DType::Int16> { using type = int16_t; };
template <> struct CType<DType::Int32> { using type = int32_t; };
template <> struct CType<DType::Int64> { using type = int64_t; };
template <> struct CType<DType::UInt16> { using type = uint16_t; };
template <> struct CType<DType::UInt32> { using type = uint32_t; };
template <> struct CType<DType::UInt64> { using type = uint64_t; };
template <> struct CType<DType::Float16> { using type = Half; };
template <> struct CType<DType::BFloat16> { using type = BFloat16; };
template <> struct CType<DType::Float32> { using type = float; };
template <> struct CType<DType::Float64> { using type = double; };
template <> struct CType<DType::Complex64> { using type = std::complex<float>; };
template <> struct CType<DType::Complex128> { using type = std::complex<double>; };


template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtype_of<Half>() { return DType::Float16; }
template <> constexpr DType dtype_of<BFloat16>() { return DType::BFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<std::complex<float>>() { return DType::Complex64; }
template <> constexpr DType dtype_of<std::complex<double>>() { return DType::Complex128; }

// The complex dtype with real dtype t's precision (complex64 for float32 and the half types,
// complex128 for float64), and the real dtype of a complex one's parts.
inline DType complex_of(DType t) { return t == DType::Float64 || t == DType::Complex128 ? DType::Complex128 : DType::Complex64; }
inline DType real_of_complex(DType t) { return t == DType::Complex128 ? DType::Float64 : DType::Float32; }

template <typename T> constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T> constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

}  // namespace tide

// Runs the body once with `scalar_t` bound to the C++ type of runtime dtype DT.
// One runtime switch instead of token-pasted per-dtype code.
#define TIDE_DTYPE_CASE(D, ...) \
  case D: {                     \
    using scalar_t = typename ::tide::CType<D>::type; \
    __VA_ARGS__();              \
    break;                      \
  }

// The cases of the bool and integer dtypes, and of the floating-point ones.
#define TIDE_INTEGRAL_CASES(...)                                                       \
  TIDE_DTYPE_CASE(::tide::DType::Bool, __VA_ARGS__)                                   \
  TIDE_DTYPE_CASE(::tide::DType::UInt8, __VA_ARGS__)                                  \
  TIDE_DTYPE_CASE(::tide::DType::Int8, __VA_ARGS__)                                   \
  TIDE_DTYPE_CASE(::tide::DType::Int16, __VA_ARGS__)                                  \
  TIDE_DTYPE_CASE(::tide::DType::Int32, __VA_ARGS__)                                  \
  TIDE_DTYPE_CASE(::tide::DType::Int64, __VA_ARGS__)                                  \
  TIDE_DTYPE_CASE(::tide::DType::UInt16, __VA_ARGS__)                                 \
  TIDE_DTYPE_CASE(::tide::DType::UInt32, __VA_ARGS__)                                 \
  TIDE_DTYPE_CASE(::tide::DType::UInt64, __VA_ARGS__)

#define TIDE_FLOAT_CASES(...)                                                          \
  TIDE_DTYPE_CASE(::tide::DType::Float16, __VA_ARGS__)                                \
  TIDE_DTYPE_CASE(::tide::DType::BFloat16, __VA_ARGS__)                               \
  TIDE_DTYPE_CASE(::tide::DType::Float32, __VA_ARGS__)                                \
  TIDE_DTYPE_CASE(::tide::DType::Float64, __VA_ARGS__)

#define TIDE_COMPLEX_CASES(...)                                                        \
  TIDE_DTYPE_CASE(::tide::DType::Complex64, __VA_ARGS__)                              \
  TIDE_DTYPE_CASE(::tide::DType::Complex128, __VA_ARGS__)

// Every real dtype; a complex one fails with "<NAME>: complex64 is not supported" (the
// complex kernels dispatch with TIDE_DISPATCH_COMPLEX or TIDE_DISPATCH_ALL_AND_COMPLEX).
#define TIDE_DISPATCH_ALL(DT, NAME, ...)                                               \
  [&] {                                                                              \
    switch (DT) {                                                                    \
      TIDE_INTEGRAL_CASES(__VA_ARGS__)                                               \
      TIDE_FLOAT_CASES(__VA_ARGS__)                                                  \
      default:                                                                       \
        ::tide::detail::fail(NAME, ": ", ::tide::dtype_name(DT), " is not supported"); \
    }                                                                                \
  }()

#define TIDE_DISPATCH_ALL_AND_COMPLEX(DT, NAME, ...)                                   \
  [&] {                                                                              \
    switch (DT) {                                                                    \
      TIDE_INTEGRAL_CASES(__VA_ARGS__)                                               \
      TIDE_FLOAT_CASES(__VA_ARGS__)                                                  \
      TIDE_COMPLEX_CASES(__VA_ARGS__)                                                \
    }                                                                                \
  }()

#define TIDE_DISPATCH_COMPLEX(DT, NAME, ...)                                           \
  [&] {                                                                              \
    switch (DT) {                                                                    \
      TIDE_COMPLEX_CASES(__VA_ARGS__)                                                \
      default:                                                                       \
        ::tide::detail::fail(NAME, ": expected a complex tensor, got ",              \
                             ::tide::dtype_name(DT));                                \
    }                                                                                \
  }()

#define TIDE_DISPATCH_FLOAT(DT, NAME, ...)                                             \
  [&] {                                                                              \
    switch (DT) {                                                                    \
      TIDE_FLOAT_CASES(__VA_ARGS__)                                                  \
      default:                                                                       \
        ::tide::detail::fail(NAME, ": expected a floating-point tensor, got ",       \
                             ::tide::dtype_name(DT));                                \
    }                                                                                \
  }()

#define TIDE_DISPATCH_INTEGRAL(DT, NAME, ...)                                          \
  [&] {                                                                              \
    switch (DT) {                                                                    \
      TIDE_INTEGRAL_CASES(__VA_ARGS__)                                               \
      default:                                                                       \
        ::tide::detail::fail(NAME, ": expected a bool or integer tensor, got ",      \
                             ::tide::dtype_name(DT));                                \
    }                                                                                \
  }()
