#include "scalar_fit.hpp"

#include <cmath>
#include <limits>

#include "error.hpp"

namespace tide {

namespace {

// Whether s lies in the integer type T's range, by PyTorch's c10::overflows rules except that
// a float is judged as stored, truncated (127.5 is int8's 127).
template <typename T>
bool fits(const Scalar& s) {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_integral_v<T>) {
    if (s.is_floatlike()) {  // truncated toward zero as stored; max + 1 is exact where max is not (2^63 - 1)
      const double t = std::trunc(s.f);
      return std::isfinite(t) && t >= double(L::lowest()) && t < double(L::max()) + 1.0;
    }
    if constexpr (std::is_unsigned_v<T>)
      return s.i >= 0 ? uint64_t(s.i) <= uint64_t(L::max()) : uint64_t(0) - uint64_t(s.i) <= uint64_t(L::max());
    else return s.i >= int64_t(L::lowest()) && s.i <= int64_t(L::max());
  }
}

// Whether s is within a floating type's largest finite magnitude (infinities and NaN fit).
bool fits_float(const Scalar& s, double largest) {
  const double v = s.to_double();
  return !std::isfinite(v) || std::fabs(v) <= largest;
}

}  // namespace

void check_scalar_fits(const char* op, const Scalar& s, DType dt) {
  bool ok = true;
  switch (dt) {
    case DType::Bool: case DType::Complex64: case DType::Complex128: case DType::Float64: break;
    case DType::UInt8: ok = fits<uint8_t>(s); break;
    case DType::Int8: ok = fits<int8_t>(s); break;
    case DType::Int16: ok = fits<int16_t>(s); break;
    case DType::Int32: ok = fits<int32_t>(s); break;
    case DType::Int64: ok = fits<int64_t>(s); break;
    case DType::UInt16: ok = fits<uint16_t>(s); break;
    case DType::UInt32: ok = fits<uint32_t>(s); break;
    case DType::UInt64: ok = fits<uint64_t>(s); break;
    case DType::Float16: ok = fits_float(s, 65504.0); break;
    case DType::BFloat16: ok = fits_float(s, 3.3895313892515355e38); break;
    case DType::Float32: ok = fits_float(s, double(std::numeric_limits<float>::max())); break;
  }
  if (ok) return;
  if (s.is_floatlike() && std::isnan(s.f)) TIDE_FAIL(op, ": value nan cannot be converted to ", dtype_name(dt));
  if (s.is_floatlike()) TIDE_FAIL(op, ": value ", s.f, " cannot be converted to ", dtype_name(dt), " without overflow");
  TIDE_FAIL(op, ": value ", s.i, " cannot be converted to ", dtype_name(dt), " without overflow");
}

}  // namespace tide
