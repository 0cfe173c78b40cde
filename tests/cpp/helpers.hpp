// Small helpers shared by the engine's C++ tests.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../../tensor/tensor.hpp"

namespace tide::test {

// Values of any tensor in row-major order, whatever its layout, as doubles.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.item_double(i));
  return v;
}

// The message of the tide::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// 0, 1, 2, ... in a new contiguous tensor of this shape.
inline Tensor iota(const Dims& shape, DType dt = DType::Float32) {
  Tensor t = Tensor::empty(shape, dt);
  TIDE_DISPATCH_ALL(dt, "iota", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = scalar_t(compute_t<scalar_t>(i));
  });
  return t;
}

}  // namespace tide::test
