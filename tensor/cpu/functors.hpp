// Scalar functors of the pointwise ops. T is the compute type (float for half types).
// They are TIDE_HOST_DEVICE so that the CUDA backend can instantiate the very same code.
// Integer arithmetic wraps (through unsigned types) instead of being undefined on overflow.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../half.hpp"

namespace tide::fn {

template <typename T>
constexpr bool is_fp = std::is_floating_point_v<T>;
template <typename T>
constexpr bool is_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
TIDE_HOST_DEVICE inline T wrap(T a, T b, int op) {
  using U = std::make_unsigned_t<T>;
  U x = U(a), y = U(b);
  return T(op == 0 ? U(x + y) : op == 1 ? U(x - y) : U(x * y));
}

// Which compute types a functor accepts (others are rejected before dispatch).
struct Numeric {
  template <typename T> static constexpr bool accepts = !std::is_same_v<T, bool>;
};
struct AnyType {
  template <typename T> static constexpr bool accepts = true;
};
struct FloatOnly {
  template <typename T> static constexpr bool accepts = is_fp<T>;
};
struct IntegralOnly {
  template <typename T> static constexpr bool accepts = !is_fp<T>;
};

// The C++ types a pointwise functor runs with on inputs of one dtype: the storage type and
// the result's (bool when the functor returns bool, else the storage type).
template <typename S, typename O>
struct PointwiseTypes {
  using scalar_t = S;
  using out_t = O;
};

// The type functor F returns for Arity inputs of compute type C.
template <typename F, typename C, int Arity>
struct ResultOf {
  using type = decltype(F{}(C{}));
};
template <typename F, typename C>
struct ResultOf<F, C, 2> {
  using type = decltype(F{}(C{}, C{}));
};

// Calls body(PointwiseTypes<scalar_t, out_t>{}) for functor F taking `Arity` inputs of dtype
// `in` (computed in compute_t<scalar_t>), or throws "<op>: not supported for <dtype>
// tensors" when F rejects that compute type. Every backend picks its types here, so that the
// CPU loops and the device kernels agree.
template <typename F, int Arity, typename Body>
void dispatch_functor(const char* op, DType in, Body&& body) {
  TIDE_DISPATCH_ALL(in, op, [&] {
    using C = compute_t<scalar_t>;
    if constexpr (!F::template accepts<C>) {
      TIDE_FAIL(op, ": not supported for ", dtype_name(in), " tensors");
    } else {
      using R = typename ResultOf<F, C, Arity>::type;
      body(PointwiseTypes<scalar_t, std::conditional_t<std::is_same_v<R, bool>, bool, scalar_t>>{});
    }
  });
}

// ---- unary ----
struct Abs : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_fp<T>) return std::fabs(x);
    else if constexpr (std::is_signed_v<T>) return x < 0 ? T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(x)) : x;
    else return x;
  }
};
struct Neg : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_fp<T>) return -x;
    else return wrap<T>(T(0), x, 1);
  }
};
struct Sign : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_fp<T>) return x != x ? x : T((x > 0) - (x < 0));
    else return T((x > 0) - (x < 0));
  }
};
struct Square : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_fp<T>) return x * x;
    else return wrap<T>(x, x, 2);
  }
};
#define TIDE_FLOAT_UNARY(Name, expr)                                         \
  struct Name : FloatOnly {                                                  \
    template <typename T> TIDE_HOST_DEVICE T operator()(T x) const { return expr; } \
  };
TIDE_FLOAT_UNARY(Exp, std::exp(x))
TIDE_FLOAT_UNARY(Exp2, std::exp2(x))
TIDE_FLOAT_UNARY(Log, std::log(x))
TIDE_FLOAT_UNARY(Log2, std::log2(x))
TIDE_FLOAT_UNARY(Log10, std::log10(x))
TIDE_FLOAT_UNARY(Log1p, std::log1p(x))
TIDE_FLOAT_UNARY(Expm1, std::expm1(x))
TIDE_FLOAT_UNARY(Sqrt, std::sqrt(x))
TIDE_FLOAT_UNARY(Rsqrt, T(1) / std::sqrt(x))
TIDE_FLOAT_UNARY(Reciprocal, T(1) / x)
TIDE_FLOAT_UNARY(Sin, std::sin(x))
TIDE_FLOAT_UNARY(Cos, std::cos(x))
TIDE_FLOAT_UNARY(Tan, std::tan(x))
TIDE_FLOAT_UNARY(Asin, std::asin(x))
TIDE_FLOAT_UNARY(Acos, std::acos(x))
TIDE_FLOAT_UNARY(Atan, std::atan(x))
TIDE_FLOAT_UNARY(Sinh, std::sinh(x))
TIDE_FLOAT_UNARY(Cosh, std::cosh(x))
TIDE_FLOAT_UNARY(Tanh, std::tanh(x))
TIDE_FLOAT_UNARY(Sigmoid, T(1) / (T(1) + std::exp(-x)))
TIDE_FLOAT_UNARY(Erf, std::erf(x))
#undef TIDE_FLOAT_UNARY

struct Relu : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const { return x < T(0) ? T(0) : x; }
};
#define TIDE_ROUNDING(Name, f)                                               \
  struct Name : AnyType {                                                    \
    template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {         \
      if constexpr (is_fp<T>) return f(x);                                   \
      else return x;                                                         \
    }                                                                        \
  };
TIDE_ROUNDING(Floor, std::floor)
TIDE_ROUNDING(Ceil, std::ceil)
TIDE_ROUNDING(Round, std::nearbyint)
TIDE_ROUNDING(Trunc, std::trunc)
#undef TIDE_ROUNDING

struct IsNan : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T x) const {
    if constexpr (is_fp<T>) return x != x;
    else return false;
  }
};
struct IsInf : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T x) const {
    if constexpr (is_fp<T>) return std::isinf(x);
    else return false;
  }
};
struct IsFinite : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T x) const {
    if constexpr (is_fp<T>) return std::isfinite(x);
    else return true;
  }
};
struct LogicalNot : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T x) const { return !(x != T(0)); }
};
struct BitwiseNot : IntegralOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return !x;
    else return T(~x);
  }
};

// ---- binary ----
struct Add : AnyType {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (is_int<T>) return wrap(a, b, 0);
    else return a + b;
  }
};
struct Sub : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int<T>) return wrap(a, b, 1);
    else return a - b;
  }
};
struct Mul : AnyType {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (is_int<T>) return wrap(a, b, 2);
    else return a * b;
  }
};
struct Div : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const { return a / b; }
};
// Integer division by zero is rejected before the kernel runs; MIN / -1 wraps.
struct FloorDiv : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (b == T(0)) return a / b;
      T r = std::fmod(a, b);
      T q = (a - r) / b;
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) q -= T(1);
      return q;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return wrap<T>(T(0), a, 1);
        T q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return q;
      } else {
        return a / b;
      }
    }
  }
};
struct Remainder : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      T r = std::fmod(a, b);
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
      return r;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
        T r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      } else {
        return a % b;
      }
    }
  }
};
struct Fmod : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) return std::fmod(a, b);
    else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
      }
      return T(a % b);
    }
  }
};
struct Pow : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      return std::pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) return a == 1 ? T(1) : a == -1 ? T((b & 1) ? -1 : 1) : T(0);
      }
      T result = 1, base = a;
      using U = std::make_unsigned_t<T>;
      U e = U(b);
      while (e) {
        if (e & 1) result = wrap(result, base, 2);
        base = wrap(base, base, 2);
        e >>= 1;
      }
      return result;
    }
  }
};
struct Maximum : AnyType {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? b : a;
  }
};
struct Minimum : AnyType {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return b < a ? b : a;
  }
};
struct Atan2 : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const { return std::atan2(a, b); }
};
// The magnitude of a with the sign bit of b (so -0.0 and -NaN count as negative).
struct Copysign : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const { return std::copysign(a, b); }
};
#define TIDE_COMPARE(Name, op)                                                           \
  struct Name : AnyType {                                                                \
    template <typename T> TIDE_HOST_DEVICE bool operator()(T a, T b) const { return a op b; } \
  };
TIDE_COMPARE(Eq, ==)
TIDE_COMPARE(Ne, !=)
TIDE_COMPARE(Lt, <)
TIDE_COMPARE(Le, <=)
TIDE_COMPARE(Gt, >)
TIDE_COMPARE(Ge, >=)
#undef TIDE_COMPARE
struct LogicalAnd : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T a, T b) const { return (a != T(0)) && (b != T(0)); }
};
struct LogicalOr : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T a, T b) const { return (a != T(0)) || (b != T(0)); }
};
struct LogicalXor : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T a, T b) const { return (a != T(0)) != (b != T(0)); }
};
#define TIDE_BITWISE(Name, op)                                                          \
  struct Name : IntegralOnly {                                                          \
    template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const { return T(a op b); } \
  };
TIDE_BITWISE(BitwiseAnd, &)
TIDE_BITWISE(BitwiseOr, |)
TIDE_BITWISE(BitwiseXor, ^)
#undef TIDE_BITWISE
struct IntegerOnly {
  template <typename T> static constexpr bool accepts = is_int<T>;
};
// Shifts as NumPy's: a count outside [0, bits) (negative ones included) shifts every bit
// out, giving 0 for the left shift and the sign fill (0 or -1) for the right shift.
struct BitwiseLeftShift : IntegerOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    return U(b) < U(sizeof(T) * 8) ? T(U(a) << U(b)) : T(0);
  }
};
struct BitwiseRightShift : IntegerOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    return U(b) < U(sizeof(T) * 8) ? T(a >> U(b)) : a < T(0) ? T(-1) : T(0);
  }
};

}  // namespace tide::fn
