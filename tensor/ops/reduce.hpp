// Reductions (sum mean prod amax amin max/min with indices argmax argmin var std norm all
// any logsumexp), scans (cumsum cumprod) and ordering (sort argsort topk).
//
// Dims are 0-based here (negative counts from the end); an empty dim list means every dim.
// Messages print dims 1-based, because scripts read them. Index *values* produced here
// (argmax, the indices of max/min/sort/topk) are 1-based int64, as everywhere in tide.
//
// Results are bit-identical for every thread count: work is cut into blocks whose
// boundaries depend only on the shape, and partial results are combined in a fixed order
// (pairwise, which also keeps float sums accurate).
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "../tensor.hpp"

namespace tide::ops {

using DimList = std::vector<int>;

// Sum of elements. bool and integer inputs give int64 (as PyTorch); `dtype` converts the
// input first and is the result's dtype. Empty reductions give 0.
Tensor sum(const Tensor& x, const DimList& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
// Mean; x must be floating point (or `dtype` a floating dtype). Empty reductions give nan.
Tensor mean(const Tensor& x, const DimList& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// Product; dtypes as sum. Empty reductions give 1.
Tensor prod(const Tensor& x, const DimList& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);

// Largest / smallest value over dims (the dtype is kept; NaN propagates). An empty
// reduction is an error ("amax: cannot reduce over an empty dim ...").
Tensor amax(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
// max(x) / min(x): every element, a 0-dim tensor.
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);

struct ValuesIndices {
  Tensor values;
  Tensor indices;  // int64, 1-based
};
// max(x, dim) / min(x, dim): values and their 1-based positions along dim (the first one on
// ties; a NaN wins and the first NaN is reported).
ValuesIndices max(const Tensor& x, int dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int dim, bool keepdim = false);
// 1-based int64 positions of the largest / smallest value along dim; without a dim, the
// 1-based position in the flattened (row-major) tensor.
Tensor argmax(const Tensor& x, std::optional<int> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int> dim = std::nullopt, bool keepdim = false);

// Variance and standard deviation: sum((x - mean)^2) / max(0, N - correction), computed in
// two passes. correction = 1 is PyTorch's default (unbiased), 0 NumPy's (ddof = 0).
// x must be floating point.
Tensor var(const Tensor& x, const DimList& dims = {}, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& x, const DimList& dims = {}, double correction = 1, bool keepdim = false);
// Vector p-norm over dims (all = the Frobenius norm for p = 2): p = 2, 1, INFINITY
// (max |x|), -INFINITY (min |x|), 0 (count of non-zeros) or any other p
// ((sum |x|^p)^(1/p)). x must be floating point.
Tensor norm(const Tensor& x, double p = 2, const DimList& dims = {}, bool keepdim = false);

// Whether every / any element is non-zero; a bool result (uint8 for uint8 input, as in
// PyTorch). Empty: all = true, any = false.
Tensor all(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
// log(sum(exp(x))) computed stably (the max is subtracted first). Integer and bool inputs
// give the default float dtype (PyTorch). Empty reductions give -inf.
Tensor logsumexp(const Tensor& x, const DimList& dims = {}, bool keepdim = false);

// Inclusive running sum / product along dim; dtypes as sum (integer inputs give int64).
Tensor cumsum(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);
// The gradient of cumprod(x, dim) for the output gradient g, for any x (zeros included):
// grad_i = (prod_{k<i} x_k) * S_i with S_i = g_i + x_{i+1} S_{i+1}, one pass each way
// along dim, in float64. The result has x's dtype (floating point) and shape.
Tensor cumprod_backward(const Tensor& x, const Tensor& g, int dim);

// Sorts along dim: values and 1-based int64 indices. Always stable (equal elements keep
// their order, also when descending). NaN sorts as the largest value, as in PyTorch.
ValuesIndices sort(const Tensor& x, int dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int dim = -1, bool descending = false);
// The k largest (or smallest) elements along dim, in sorted order, with 1-based indices.
// 0 <= k <= size of dim. Ties are broken by position (the earlier element first).
ValuesIndices topk(const Tensor& x, int64_t k, int dim = -1, bool largest = true, bool sorted = true);

// A check of an op's argument values that reads them, as a host kernel (DeviceBackend::host)
// instead of item(), so that torch.compile records it and repeats it on every replay: the
// smallest and largest elements of a real tensor, NaN when one is NaN (in double; an integer
// tensor's also exactly in `ilo`/`ihi`), go to `check`, which throws when they are not what
// the op needs. An empty tensor is not checked; a device tensor's extrema are read back.
struct Extrema {
  double lo, hi;
  int64_t ilo, ihi;
};
void check_extrema(const char* op, const Tensor& t, std::function<void(const Extrema&)> check);

}  // namespace tide::ops
