// Creation ops: constant fills, ranges, identity matrices and random tensors.
// Every op takes a dtype and a device. Fills and random draws run on the device (the same
// numbers as on the CPU for a seed); ranges, eye and randperm are computed on the host and
// moved. An unavailable device is an error that says why (the device table in backend.hpp).
// Random ops draw from a Generator (the global one unless given); see random.hpp for the
// exact scheme, which makes every value depend only on (seed, offset, element index).
#pragma once
#include <optional>

#include "../random.hpp"
#include "../tensor.hpp"

namespace tide::ops {

// Checks that tensors can be created on `device` (its backend loads and the index exists);
// throws naming `op` and the reason.
void check_creation_device(const char* op, Device device);

Tensor empty(const Dims& shape, DType dtype = default_float_dtype(), Device device = {});
Tensor zeros(const Dims& shape, DType dtype = default_float_dtype(), Device device = {});
Tensor ones(const Dims& shape, DType dtype = default_float_dtype(), Device device = {});
// dtype absent: the value's own dtype (bool, int64 or the default float), as torch.full.
Tensor full(const Dims& shape, const Scalar& value, std::optional<DType> dtype = std::nullopt,
            Device device = {});

// Values start, start + step, ... below end (above end for a negative step);
// length ceil((end - start) / step). dtype absent: int64 when start, end and step are all
// integers, else `float_dtype`. Errors for step 0, non-finite bounds, and a step whose sign
// does not lead from start to end.
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = Scalar(int64_t(1)),
              std::optional<DType> dtype = std::nullopt, Device device = {},
              DType float_dtype = default_float_dtype());
// `steps` values evenly spaced from start to end inclusive (PyTorch's symmetric formula:
// the first half counted up from start, the second half down from end). steps >= 0.
Tensor linspace(double start, double end, int64_t steps, DType dtype = default_float_dtype(),
                Device device = {});
// n x m (m < 0: m = n) with ones on diagonal k (k > 0 above the main one, as NumPy's eye).
Tensor eye(int64_t n, int64_t m = -1, DType dtype = default_float_dtype(), Device device = {},
           int64_t k = 0);

// Random: uniform [0, 1), standard normal, integers in [low, high), a permutation of 1..n.
Tensor rand(const Dims& shape, DType dtype = default_float_dtype(), Device device = {},
            Generator* gen = nullptr);
Tensor randn(const Dims& shape, DType dtype = default_float_dtype(), Device device = {},
             Generator* gen = nullptr);
Tensor randint(int64_t low, int64_t high, const Dims& shape, DType dtype = DType::Int64,
               Device device = {}, Generator* gen = nullptr);
Tensor randperm(int64_t n, DType dtype = DType::Int64, Device device = {},
                Generator* gen = nullptr);

// n draws of 1-based category indices from each row of the non-negative weights `probs`
// (1-D: shape {n}; 2-D: {rows, n}); without replacement a category is drawn at most once.
// int64, on probs' device (drawn on the host; the scheme is in random.hpp).
Tensor multinomial(const Tensor& probs, int64_t n, bool replacement = false, Generator* gen = nullptr);

// In place (any layout; values follow the row-major element order). Float dtypes only.
// uniform_ needs a <= b; normal_ needs std >= 0. Both bump the tensor's version.
Tensor& uniform_(Tensor& t, double a = 0.0, double b = 1.0, Generator* gen = nullptr);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);

// The *_like forms: x's shape, and x's dtype and device unless given.
Tensor empty_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt);
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt);
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                 std::optional<Device> device = std::nullopt);
Tensor full_like(const Tensor& x, const Scalar& value, std::optional<DType> dtype = std::nullopt,
                 std::optional<Device> device = std::nullopt);
Tensor rand_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                 std::optional<Device> device = std::nullopt, Generator* gen = nullptr);
Tensor randn_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt, Generator* gen = nullptr);

}  // namespace tide::ops
