// Differentiable neural-network functions: linear (one addmm), softmax and log-softmax (one
// node each), cross-entropy (the fused row kernel), NLL, and convolution / max-pooling
// through image patches (unfold2d), whose adjoint (fold2d) is their gradient.
#include <cmath>

#include "../ops/nn.hpp"
#include "../ops/index.hpp"
#include "../ops/shape.hpp"
#include "../ops/softmax.hpp"
#include "formulas.hpp"

namespace tide::ag {

namespace {

void check_float(const Tensor& x, const char* op, const char* what) {
  TIDE_CHECK(is_floating(x.dtype()), op, ": ", what, " must be a floating-point tensor, got ", dtype_name(x.dtype()));
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* an, const char* bn) {
  TIDE_CHECK(a.dtype() == b.dtype(), op, ": ", an, " has dtype ", dtype_name(a.dtype()), " but ", bn, " has dtype ",
             dtype_name(b.dtype()));
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor* bias) {
  const char* op = "linear";
  TIDE_CHECK(weight.dim() == 2, op, ": weight must be 2-D (out_features, in_features), got shape ", weight.sizes().str());
  int64_t in = weight.size(1), outf = weight.size(0);
  TIDE_CHECK(x.dim() >= 1 && x.size(x.dim() - 1) == in, op, ": input of shape ", x.sizes().str(),
             " does not end in ", in, " features, as weight of shape ", weight.sizes().str(), " expects");
  check_same_dtype(x, weight, op, "input", "weight");
  if (bias) {
    TIDE_CHECK(bias->dim() == 1 && bias->size(0) == outf, op, ": bias must have shape {", outf, "}, got ",
               bias->sizes().str());
    check_same_dtype(*bias, weight, op, "bias", "weight");
  }
  Tensor x2 = x.dim() == 2 ? x : reshape(x, {x.numel() / std::max<int64_t>(in, 1), in});
  Tensor y = bias ? addmm(*bias, x2, t(weight)) : mm(x2, t(weight));
  if (x.dim() == 2) return y;
  Dims shape = x.sizes();
  shape[shape.size() - 1] = outf;
  return reshape(y, shape);
}

Tensor softmax(const Tensor& x, int dim) {
  check_float(x, "softmax", "input");
  int d = ops::wrap_dim("softmax", dim, std::max(x.dim(), 1));
  DimList dl = x.dim() ? DimList{d} : DimList{};
  // Over the last dim of a contiguous CPU float tensor: the row kernels (ops/softmax.hpp).
  const bool rows = x.dim() && d == x.dim() - 1 && ops::softmax_rows_fit(x);
  Tensor y;
  if (rows) {
    y = ops::softmax_rows(x);
  } else {
    Tensor e = ops::unary(UnaryOp::Exp, ops::binary(BinaryOp::Sub, x, ops::amax(x, dl, true)));
    y = ops::binary(BinaryOp::Div, e, ops::sum(e, dl, true), &e);
  }
  if (!needs_recording({&x})) return y;
  SavedTensor sy = SavedTensor::output(y);
  record("softmax", y, {&x}, [sy, dl, rows](const Tensor& g, const Node& n) -> Grads {
    Tensor yv = sy.unpack(n);
    // The row kernel unless this gradient is itself recorded (create_graph: it must be
    // differentiable).
    if (rows && !needs_recording({&g, &yv}) && g.dtype() == yv.dtype() && g.device().is_cpu())
      return {ops::softmax_rows_backward(yv, g.contiguous())};
    return {yv * (g - sum(g * yv, dl, true))};
  });
  return y;
}

Tensor log_softmax(const Tensor& x, int dim) {
  check_float(x, "log_softmax", "input");
  int d = ops::wrap_dim("log_softmax", dim, std::max(x.dim(), 1));
  DimList dl = x.dim() ? DimList{d} : DimList{};
  // x - logsumexp(x) cancels where x is the largest entry: half-precision inputs are computed
  // in float32 and rounded once, or the most likely class's log-probability loses its digits.
  bool half = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  Tensor xc = half ? ops::cast(x, DType::Float32) : x;
  Tensor y = ops::binary(BinaryOp::Sub, xc, ops::logsumexp(xc, dl, true));
  if (half) y = ops::cast(y, x.dtype());
  if (!needs_recording({&x})) return y;
  SavedTensor sy = SavedTensor::output(y);
  record("log_softmax", y, {&x}, [sy, dl](const Tensor& g, const Node& n) -> Grads {
    return {g - unary(UnaryOp::Exp, sy.unpack(n)) * sum(g, dl, true)};
  });
  return y;
}

Reduction parse_reduction(const std::string& s, const char* op) {
  if (s == "mean") return Reduction::Mean;
  if (s == "sum") return Reduction::Sum;
  if (s == "none") return Reduction::None;
  TIDE_FAIL(op, ": reduction must be \"mean\", \"sum\" or \"none\", got \"", s, "\"");
}

namespace {

// Class-index targets brought to rows: logits as (M, C) (class dim moved last), and per row
// the 1-based class (1 for ignored rows, so that gathers stay in range), the 0-based class
// (-1 for ignored rows) and the row's weight (0 for ignored rows).
struct ClassRows {
  Tensor x;        // (M, C), differentiable view of the logits
  Tensor class1;   // (M) int64
  Tensor class0;   // (M) int64
  Tensor row_w;    // (M) logits' dtype
  Tensor weight;   // (C) logits' dtype, or undefined
  Dims target_shape;
};

ClassRows class_rows(const char* op, const Tensor& logits, const Tensor& target, int64_t ignore_index,
                     const Tensor* weight) {
  check_float(logits, op, "input");
  TIDE_CHECK(logits.dim() >= 1, op, ": input must have a class dim, got a 0-dim tensor");
  TIDE_CHECK(is_integral(target.dtype()) && target.dtype() != DType::Bool, op,
             ": class targets must be an integer tensor (int64) of 1-based classes, got ", dtype_name(target.dtype()),
             " (probability targets must be floating point with the input's shape)");
  int cd = logits.dim() == 1 ? 0 : 1;
  int64_t C = logits.size(cd);
  Dims expect = logits.sizes();
  expect.erase(cd);
  TIDE_CHECK(target.sizes() == expect, op, ": target has shape ", target.sizes().str(), " but input of shape ",
             logits.sizes().str(), " needs a target of shape ", expect.str());
  ClassRows r;
  r.target_shape = expect;
  if (weight) {
    TIDE_CHECK(weight->dim() == 1 && weight->size(0) == C, op, ": weight must have shape {", C, "} (one per class), got ",
               weight->sizes().str());
    r.weight = ops::cast(*weight, logits.dtype()).contiguous();
  }
  Tensor x = logits.dim() == 1 ? unsqueeze(logits, 0) : logits;
  if (x.dim() > 2) x = movedim(x, {1}, {-1});
  r.x = contiguous(reshape(x, {target.numel(), C}));  // one row per target, even with no classes
  int64_t M = r.x.size(0);
  // Targets are validated on the host (a device tensor's classes are copied there).
  Tensor t = ops::cast(target, DType::Int64).to_device({}).contiguous();
  r.class1 = Tensor::empty({M}, DType::Int64);
  r.class0 = Tensor::empty({M}, DType::Int64);
  r.row_w = Tensor::empty({M}, DType::Float64);
  const int64_t* tv = t.data<int64_t>();
  int64_t *c1 = r.class1.data<int64_t>(), *c0 = r.class0.data<int64_t>();
  double* rw = r.row_w.data<double>();
  Tensor w64 = r.weight.defined() ? ops::cast(r.weight, DType::Float64).to_device({}) : Tensor();
  for (int64_t i = 0; i < M; ++i) {
    if (tv[i] == ignore_index) {
      c1[i] = 1, c0[i] = -1, rw[i] = 0;
      continue;
    }
    TIDE_CHECK(tv[i] >= 1 && tv[i] <= C, op, ": target ", tv[i], " is out of range for ", C, " classes (valid 1..", C,
               ")");
    c1[i] = tv[i], c0[i] = tv[i] - 1;
    rw[i] = w64.defined() ? w64.data<double>()[tv[i] - 1] : 1.0;
  }
  r.row_w = ops::cast(r.row_w, logits.dtype()).to_device(logits.device());
  r.class1 = r.class1.to_device(logits.device());
  r.class0 = r.class0.to_device(logits.device());
  return r;
}

// The reduction of per-row losses: mean divides by the total weight of the counted rows.
Tensor reduce_rows(const Tensor& per_row, const ClassRows& r, Reduction red) {
  if (red == Reduction::None) return reshape(per_row, r.target_shape);
  Tensor total = sum(per_row);
  if (red == Reduction::Sum) return total;
  return total / ops::sum(r.row_w).item_double();
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction, int64_t ignore_index,
                     double eps, const Tensor* weight) {
  const char* op = "cross_entropy";
  TIDE_CHECK(eps >= 0 && eps <= 1, op, ": label_smoothing must be in [0, 1], got ", eps);
  if (is_floating(target.dtype())) {
    // Class probabilities: -sum_c w_c t_c log_softmax(x)_c per sample.
    check_float(logits, op, "input");
    TIDE_CHECK(target.sizes() == logits.sizes(), op, ": probability targets must have the input's shape ",
               logits.sizes().str(), ", got ", target.sizes().str());
    int cd = logits.dim() == 1 ? 0 : 1;
    int64_t C = logits.size(cd);
    Tensor t = eps > 0 ? target * (1 - eps) + eps / double(C) : target;
    Tensor prod = t * log_softmax(logits, cd);
    if (weight) {
      Dims wshape(logits.dim(), 1);
      wshape[cd] = C;
      TIDE_CHECK(weight->dim() == 1 && weight->size(0) == C, op, ": weight must have shape {", C, "}, got ",
                 weight->sizes().str());
      prod = prod * reshape(*weight, wshape);
    }
    Tensor per = -sum(prod, {cd});
    if (reduction == Reduction::None) return per;
    return reduction == Reduction::Sum ? sum(per) : mean(per);
  }
  ClassRows r = class_rows(op, logits, target, ignore_index, weight);
  const Tensor* w = r.weight.defined() ? &r.weight : nullptr;
  Tensor per = ops::cross_entropy_rows(r.x, r.class0, w, -1, eps);
  if (needs_recording({&r.x})) {
    // d loss_i / d x_ic = (1-eps) w_t (p_ic - [c = t]) + eps/C (W p_ic - w_c), W = sum_c w_c.
    int64_t C = r.x.size(1);
    Tensor onehot = ops::zeros(r.x.sizes(), r.x.dtype(), r.x.device());
    ops::scatter_(onehot, 1, ops::unsqueeze(r.class1, 1), Scalar(1.0));
    Tensor active = as_mask(ops::binary(BinaryOp::Ne, r.class0, int64_t(-1)), r.x.dtype());
    Tensor hard = ops::unsqueeze(ops::binary(BinaryOp::Mul, r.row_w, 1 - eps), 1);
    Tensor wvec = w ? *w : ops::ones({C}, r.x.dtype(), r.x.device());
    double W = ops::sum(wvec).item_double();
    Tensor soft = ops::unsqueeze(ops::binary(BinaryOp::Mul, active, eps / double(C)), 1);
    // grad = g_i (coef_i p_ic - sub_ic), with coef and sub constants of the targets.
    Tensor coef = ops::binary(BinaryOp::Add, hard, ops::binary(BinaryOp::Mul, soft, W));
    Tensor sub = ops::binary(BinaryOp::Add, ops::binary(BinaryOp::Mul, hard, onehot), ops::binary(BinaryOp::Mul, soft, wvec));
    SavedTensor sx = SavedTensor::input(r.x);
    record(op, per, {&r.x}, [sx, coef, sub](const Tensor& g, const Node& n) -> Grads {
      return {unsqueeze(g, 1) * (coef * softmax(sx.unpack(n), 1) - sub)};
    });
  }
  return reduce_rows(per, r, reduction);
}

Tensor nll_loss(const Tensor& logp, const Tensor& target, Reduction reduction, int64_t ignore_index,
                const Tensor* weight) {
  ClassRows r = class_rows("nll_loss", logp, target, ignore_index, weight);
  Tensor picked = squeeze(gather(r.x, 1, ops::unsqueeze(r.class1, 1)), {1});
  return reduce_rows(-(picked * r.row_w), r, reduction);
}

namespace {

Tensor unfold(const Tensor& x, const ops::Window2d& w, double pad);

// fold2d recorded: its gradient is unfold2d of the incoming gradient.
Tensor fold(const Tensor& cols, int64_t H, int64_t W, const ops::Window2d& w) {
  Tensor y = ops::fold2d(cols, H, W, w);
  if (needs_recording({&cols}))
    record("fold", y, {&cols}, [w](const Tensor& g, const Node&) -> Grads { return {unfold(g, w, 0)}; });
  return y;
}

// unfold2d recorded: its gradient folds the patches' gradient back onto the image.
Tensor unfold(const Tensor& x, const ops::Window2d& w, double pad) {
  Tensor y = ops::unfold2d(x, w, pad);
  if (needs_recording({&x})) {
    int64_t H = x.size(2), W = x.size(3);
    record("unfold", y, {&x}, [w, H, W](const Tensor& g, const Node&) -> Grads { return {fold(g, H, W, w)}; });
  }
  return y;
}

ops::Window2d window(const int64_t kernel[2], const Conv2dOptions& o) {
  ops::Window2d w;
  for (int i = 0; i < 2; ++i) {
    w.kernel[i] = kernel[i];
    w.stride[i] = o.stride[i];
    w.padding[i] = o.padding[i];
    w.dilation[i] = o.dilation[i];
  }
  return w;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor* bias, const Conv2dOptions& o) {
  const char* op = "conv2d";
  TIDE_CHECK(x.dim() == 3 || x.dim() == 4, op, ": expected input of shape (N, C, H, W) or (C, H, W), got ",
             x.sizes().str());
  TIDE_CHECK(weight.dim() == 4, op, ": weight must have shape (out_channels, in_channels/groups, kH, kW), got ",
             weight.sizes().str());
  check_float(x, op, "input");
  check_same_dtype(x, weight, op, "input", "weight");
  Tensor x4 = x.dim() == 4 ? x : unsqueeze(x, 0);
  int64_t G = o.groups, Cin = x4.size(1), Cout = weight.size(0);
  TIDE_CHECK(G >= 1 && Cin % G == 0 && Cout % G == 0, op, ": groups ", G, " must divide in_channels ", Cin,
             " and out_channels ", Cout);
  TIDE_CHECK(weight.size(1) == Cin / G, op, ": weight of shape ", weight.sizes().str(), " expects ",
             weight.size(1) > INT64_MAX / G ? std::string("more than 2^63-1") : std::to_string(weight.size(1) * G),
             " input channels, but the input of shape ", x.sizes().str(), " has ", Cin);
  if (bias) {
    TIDE_CHECK(bias->dim() == 1 && bias->size(0) == Cout, op, ": bias must have shape {", Cout, "}, got ",
               bias->sizes().str());
    check_same_dtype(*bias, weight, op, "bias", "weight");
  }
  int64_t kernel[2] = {weight.size(2), weight.size(3)};
  ops::Window2d w = window(kernel, o);
  int64_t N = x4.size(0);
  int64_t Ho = w.out_size(0, x4.size(2), op), Wo = w.out_size(1, x4.size(3), op);
  int64_t L = w.positions(x4.size(2), x4.size(3), op);
  int64_t K = Cin / G * kernel[0] * kernel[1];
  Tensor cols = unfold(x4, w, 0);  // (N, Cin*kh*kw, L)
  Tensor y = G == 1 ? matmul(reshape(weight, {Cout, K}), cols)
                    : reshape(matmul(reshape(weight, {G, Cout / G, K}), reshape(cols, {N, G, K, L})), {N, Cout, L});
  if (bias) y = y + reshape(*bias, {1, Cout, 1});
  y = reshape(y, {N, Cout, Ho, Wo});
  return x.dim() == 4 ? y : squeeze(y, {0});
}

Tensor max_pool2d(const Tensor& x, const int64_t kernel[2], const Conv2dOptions& o) {
  const char* op = "max_pool2d";
  TIDE_CHECK(x.dim() == 3 || x.dim() == 4, op, ": expected input of shape (N, C, H, W) or (C, H, W), got ",
             x.sizes().str());
  check_float(x, op, "input");
  ops::Window2d w = window(kernel, o);
  for (int i = 0; i < 2; ++i)
    TIDE_CHECK(w.padding[i] <= w.kernel[i] / 2, op, ": padding ", w.padding[i], " must be at most half the kernel size ",
               w.kernel[i]);
  Tensor x4 = x.dim() == 4 ? x : unsqueeze(x, 0);
  int64_t N = x4.size(0), C = x4.size(1);
  int64_t Ho = w.out_size(0, x4.size(2), op), Wo = w.out_size(1, x4.size(3), op);
  Tensor cols = unfold(x4, w, -INFINITY);  // padding never wins
  Tensor y = max(reshape(cols, {N, C, kernel[0] * kernel[1], Ho * Wo}), 2).values;
  y = reshape(y, {N, C, Ho, Wo});
  return x.dim() == 4 ? y : squeeze(y, {0});
}

}  // namespace tide::ag
