// Differentiable ops (namespace ag): each computes with the engine's op (tensor/ops) and,
// when grad mode is on and an input requires grad, records a node whose backward formula is
// written beside it, in terms of these same ops (so gradients are differentiable again).
// The bindings call these; C++ code that needs no autograd calls tensor/ops directly.
//
// `out` (NumPy's out=) is not differentiable: passing it while an input requires grad is an
// error. In-place forms (name_) follow the protocol in autograd.hpp.
#pragma once
#include <optional>
#include <vector>

#include "../ops/elementwise.hpp"
#include "../ops/fft.hpp"
#include "../ops/linalg.hpp"
#include "../ops/reduce.hpp"
#include "autograd.hpp"

namespace tide::ag {

using DimList = std::vector<int>;

// Throws "<op>: out= is not differentiable ..." when out is given and recording is needed.
void check_out(const char* op, const Tensor* out, std::initializer_list<const Tensor*> inputs);
// Sums g over the dims that broadcasting added or expanded, giving shape `sizes`.
Tensor sum_to(const Tensor& g, const Dims& sizes, const char* op = "sum_to");

// ---- complex numbers (complex.cpp): the gradient of a real loss L with respect to
// z = x + iy is dL/dx + i dL/dy (PyTorch's convention)
Tensor real(const Tensor& z);
Tensor imag(const Tensor& z);
Tensor view_as_real(const Tensor& z);
Tensor view_as_complex(const Tensor& x);
Tensor complex(const Tensor& re, const Tensor& im, const Tensor* out = nullptr);
Tensor conj(const Tensor& z, const Tensor* out = nullptr);

// ---- FFTs (fft.cpp): tensor/ops/fft.hpp's transforms, differentiable
Tensor fft_c2c(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               ops::FftNorm norm, bool forward, DType cdtype);
Tensor fft_r2c(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               ops::FftNorm norm, DType cdtype, bool conj_output = false);
Tensor fft_c2r(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               ops::FftNorm norm, DType cdtype, bool conj_input = false);

// ---- pointwise (pointwise.cpp)
Tensor unary(UnaryOp op, const Tensor& x, const Tensor* out = nullptr);
Tensor& unary_(UnaryOp op, Tensor& x);
Tensor binary(BinaryOp op, const TensorOrScalar& a, const TensorOrScalar& b, const Tensor* out = nullptr);
Tensor& binary_(BinaryOp op, Tensor& x, const TensorOrScalar& b);
Tensor clamp(const Tensor& x, const std::optional<TensorOrScalar>& lo, const std::optional<TensorOrScalar>& hi,
             const Tensor* out = nullptr);
Tensor& clamp_(Tensor& x, const std::optional<TensorOrScalar>& lo, const std::optional<TensorOrScalar>& hi);
Tensor where(const Tensor& cond, const TensorOrScalar& a, const TensorOrScalar& b, const Tensor* out = nullptr);
Tensor lerp(const Tensor& a, const Tensor& b, const TensorOrScalar& w, const Tensor* out = nullptr);
Tensor& lerp_(Tensor& a, const Tensor& b, const TensorOrScalar& w);
// x rounded to `decimals` digits after the point (before it when negative), half to even,
// as np.round / torch.round(decimals=); integers round to multiples of 10^-decimals.
Tensor round(const Tensor& x, int64_t decimals, const Tensor* out = nullptr);
// x converted to dtype (x itself when it already has it).
Tensor cast(const Tensor& x, DType dtype);
// x on another device (x itself when it is there); the gradient moves back.
Tensor to_device(const Tensor& x, Device device);
Tensor clone(const Tensor& x);
Tensor contiguous(const Tensor& x);
// dst = src (broadcast, converted): dst's history becomes src's.
Tensor& copy_(Tensor& dst, const Tensor& src, const char* op = "copy_");
Tensor& fill_(Tensor& dst, const Scalar& value, const char* op = "fill_");
Tensor& zero_(Tensor& dst);

// ---- reductions (reduce.cpp)
Tensor sum(const Tensor& x, const DimList& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, const DimList& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& x, const DimList& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor amax(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
ops::ValuesIndices max(const Tensor& x, int dim, bool keepdim = false);
ops::ValuesIndices min(const Tensor& x, int dim, bool keepdim = false);
Tensor var(const Tensor& x, const DimList& dims = {}, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& x, const DimList& dims = {}, double correction = 1, bool keepdim = false);
Tensor norm(const Tensor& x, double p = 2, const DimList& dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor cumsum(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);
ops::ValuesIndices sort(const Tensor& x, int dim = -1, bool descending = false);
ops::ValuesIndices topk(const Tensor& x, int64_t k, int dim = -1, bool largest = true, bool sorted = true);

// ---- linear algebra (linalg.cpp)
using ops::DTypePolicy;
Tensor mm(const Tensor& a, const Tensor& b, const Tensor* out = nullptr, DTypePolicy policy = DTypePolicy::Strict);
Tensor mv(const Tensor& a, const Tensor& v, const Tensor* out = nullptr, DTypePolicy policy = DTypePolicy::Strict);
Tensor bmm(const Tensor& a, const Tensor& b, const Tensor* out = nullptr, DTypePolicy policy = DTypePolicy::Strict);
Tensor matmul(const Tensor& a, const Tensor& b, const Tensor* out = nullptr, DTypePolicy policy = DTypePolicy::Strict,
              const char* op = "matmul");
Tensor dot(const Tensor& a, const Tensor& b, const Tensor* out = nullptr, DTypePolicy policy = DTypePolicy::Strict,
           const char* op = "dot");
Tensor outer(const Tensor& a, const Tensor& b, const Tensor* out = nullptr, bool flatten = false,
             const char* op = "outer");
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, const Scalar& beta = Scalar(1.0),
             const Scalar& alpha = Scalar(1.0), const Tensor* out = nullptr);
Tensor& addmm_(Tensor& bias, const Tensor& a, const Tensor& b, const Scalar& beta = Scalar(1.0),
               const Scalar& alpha = Scalar(1.0));
Tensor solve(const Tensor& A, const Tensor& B, DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.solve");
Tensor inv(const Tensor& A, DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.inv");
Tensor det(const Tensor& A, DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.det");
Tensor linalg_norm(const Tensor& x, ops::NormOrd ord, const std::vector<int>& dims, bool keepdim,
                   DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.norm");
// Decompositions (ops::svd ...) with PyTorch's gradient formulas. svd / eigh need distinct
// singular values / eigenvalues for the gradients of U, Vh / the eigenvectors.
std::vector<Tensor> svd(const Tensor& A, bool full_matrices = true, bool compute_uv = true,
                        DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.svd");
std::vector<Tensor> qr(const Tensor& A, ops::QrMode mode = ops::QrMode::Reduced,
                       DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.qr");
std::vector<Tensor> eigh(const Tensor& A, bool lower = true, bool compute_v = true,
                         DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.eigh");
Tensor cholesky(const Tensor& A, bool upper = false, DTypePolicy policy = DTypePolicy::Strict,
                const char* op = "linalg.cholesky");
std::vector<Tensor> lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
                          DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.lstsq");
std::vector<Tensor> slogdet(const Tensor& A, DTypePolicy policy = DTypePolicy::Strict,
                            const char* op = "linalg.slogdet");
// Moore-Penrose pseudo-inverse: singular values (|eigenvalues| with hermitian) at most
// max(atol, rtol * largest) are treated as zero.
Tensor pinv(const Tensor& A, double atol, double rtol, bool hermitian = false,
            DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.pinv");

// ---- shape (shape.cpp): views are recorded as views of their input
Tensor view(const Tensor& x, const Dims& shape);
Tensor reshape(const Tensor& x, const Dims& shape);
Tensor alias(const Tensor& x);
Tensor t(const Tensor& x);
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor reverse_dims(const Tensor& x);
Tensor movedim(const Tensor& x, const std::vector<int64_t>& src, const std::vector<int64_t>& dst);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& dims);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, const Dims& sizes);
Tensor expand_as(const Tensor& x, const Tensor& other);
Tensor flatten(const Tensor& x, int64_t start = 0, int64_t end = -1);
Tensor unflatten(const Tensor& x, int64_t dim, const Dims& sizes);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor flip_view(const Tensor& x, const std::vector<int64_t>& dims);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor repeat(const Tensor& x, const Dims& repeats);
Tensor tile(const Tensor& x, const Dims& repeats);
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);
// The view of the contiguous tensor base with these sizes, strides and offset (in base's
// elements); its gradient adds the incoming one back at the viewed places.
Tensor as_strided(const Tensor& base, const Dims& sizes, const Dims& strides, int64_t offset);
// base (contiguous) with the elements of that view replaced by src, out of place.
Tensor as_strided_scatter(const Tensor& base, const Tensor& src, const Dims& strides, int64_t offset);

// ---- index ops (index.cpp)
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src);
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index(const Tensor& x, const std::vector<Tensor>& indices, const std::vector<int>* dim_labels = nullptr,
             const char* op = "index");
// x with x[indices] = values (or += with accumulate), out of place.
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false,
                 const std::vector<int>* dim_labels = nullptr, const char* op = "index_put");
Tensor& index_put_(Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false,
                   const std::vector<int>* dim_labels = nullptr, const char* op = "index_put");
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                 const Scalar& alpha = Scalar(int64_t(1)));
Tensor& index_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                   const Scalar& alpha = Scalar(int64_t(1)));
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
Tensor& index_fill_(Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
Tensor take(const Tensor& x, const Tensor& index);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const TensorOrScalar& value);
Tensor& masked_fill_(Tensor& x, const Tensor& mask, const TensorOrScalar& value);
Tensor masked_select(const Tensor& x, const Tensor& mask);

// ---- neural-network functions (nn.cpp)
// x (*, in) @ weight (out, in)^T + bias (out): one addmm.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor* bias);
Tensor softmax(const Tensor& x, int dim);
Tensor log_softmax(const Tensor& x, int dim);
enum class Reduction : uint8_t { None, Mean, Sum };
Reduction parse_reduction(const std::string& s, const char* op);
// Cross-entropy of logits (N, C[, d...]) or (C) against 1-based class indices (N[, d...]) or
// class probabilities of logits' shape: log-softmax and NLL in one pass.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction, int64_t ignore_index,
                     double label_smoothing, const Tensor* weight = nullptr);
Tensor nll_loss(const Tensor& logp, const Tensor& target, Reduction reduction, int64_t ignore_index,
                const Tensor* weight = nullptr);
// Mean (or sum, or each) of (input - target)^2 over floating-point tensors of one shape: one
// graph node instead of sub, mul and mean's three, with their values and gradients.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction);
struct Conv2dOptions {
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t groups = 1;
};
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor* bias, const Conv2dOptions& o);
Tensor max_pool2d(const Tensor& x, const int64_t kernel[2], const Conv2dOptions& o);

}  // namespace tide::ag
