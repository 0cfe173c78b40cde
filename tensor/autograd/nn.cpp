// Differentiable neural-network functions: linear (one addmm), softmax and log-softmax (one
// node each), cross-entropy (the fused row kernel), NLL, and convolution / max-pooling
// through image patches (unfold2d), whose adjoint (fold2d) is their gradient.
#include <cmath>

#include "../backend.hpp"
#include "conv.hpp"

#include "../ops/creation.hpp"
#include "../ops/index.hpp"
#include "../ops/linalg.hpp"
#include "../ops/nn.hpp"
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
  Tensor y = bias ? ops::addmm(*bias, x2, ops::t(weight)) : ops::mm(x2, ops::t(weight));
  if (needs_recording({&x2, &weight, bias})) {
    // One node where addmm (or mm) over t(weight) recorded two, with their gradients' ops
    // (so their values): g @ weight, (x2^T @ g)^T, and g for the bias.
    SavedTensor sx = needs_recording({&weight}) ? SavedTensor::input(x2) : SavedTensor();
    SavedTensor sw = needs_recording({&x2}) ? SavedTensor::input(weight) : SavedTensor();
    record(bias ? "addmm" : "mm", y, {&x2, &weight, bias}, [sx, sw](const Tensor& g, const Node& n) -> Grads {
      Grads r(3);
      if (n.needs_grad(0)) r[0] = ag::mm(g, sw.unpack(n), nullptr, DTypePolicy::Promote);
      if (n.needs_grad(1)) r[1] = t(ag::mm(t(sx.unpack(n)), g, nullptr, DTypePolicy::Promote));
      if (n.needs_grad(2)) r[2] = g;
      return r;
    });
  }
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
  Tensor w64 = r.weight.defined() ? ops::cast(r.weight, DType::Float64).to_device({}) : Tensor();
  Tensor class1 = r.class1, class0 = r.class0, row_w = r.row_w;
  run_host_kernel(op, {&t, &class1, &class0, &row_w, &w64}, [=] {
    const int64_t* tv = t.data<int64_t>();
    int64_t *c1 = class1.data<int64_t>(), *c0 = class0.data<int64_t>();
    double* rw = row_w.data<double>();
    for (int64_t i = 0; i < M; ++i) {
      if (tv[i] == ignore_index) {
        c1[i] = 1, c0[i] = -1, rw[i] = 0;
        continue;
      }
      TIDE_CHECK(tv[i] >= 1 && tv[i] <= C, op, ": target ", tv[i], " is out of range for ", C, " classes (valid 1..",
                 C, ")");
      c1[i] = tv[i], c0[i] = tv[i] - 1;
      rw[i] = w64.defined() ? w64.data<double>()[tv[i] - 1] : 1.0;
    }
  });
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
  return total / ops::sum(r.row_w);
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
    Tensor W = ops::sum(wvec);
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

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  const char* op = "mse_loss";
  for (auto [x, what] : {std::pair{&input, "input"}, std::pair{&target, "target"}})
    TIDE_CHECK(is_floating(x->dtype()), op, ": expected a floating-point ", what, ", got dtype ", dtype_name(x->dtype()));
  TIDE_CHECK(input.sizes() == target.sizes(), op, ": input shape ", input.sizes().str(), " and target shape ",
             target.sizes().str(), " differ");
  Tensor diff = ops::binary(BinaryOp::Sub, input, target);
  Tensor squares = ops::binary(BinaryOp::Mul, diff, diff);
  Tensor y = reduction == Reduction::None ? squares : reduction == Reduction::Sum ? ops::sum(squares) : ops::mean(squares);
  if (needs_recording({&input, &target})) {
    // The composed ops' gradient, in their order of operations: g (/ n for the mean) times
    // the difference, doubled (diff * diff's two equal terms), negated for the target. The
    // difference is taken again from the saved inputs, so that a second derivative sees it.
    SavedTensor si = SavedTensor::input(input), st = SavedTensor::input(target);
    // (The engine brings each gradient to its input's dtype.)
    const double n = double(input.numel());
    record(op, y, {&input, &target}, [si, st, n, reduction](const Tensor& g, const Node& node) -> Grads {
      Tensor scaled = (reduction == Reduction::Mean ? g / n : g) * (si.unpack(node) - st.unpack(node));
      Tensor gi = scaled + scaled;
      return {gi, node.needs_grad(1) ? -gi : Tensor()};
    });
  }
  return y;
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

// The gradients of Wg (G, Co, K) @ cols (N, G, K, L) -> (N, G, Co, L) from g, in
// differentiable ops (each where `need` says). The weight gradient sums g_n cols_n^T over
// the images: with few positions per image (L < Co) as one product over all N * L positions
// (the operands regrouped by a copy), else per image and then summed, so that the per-image
// products' (N, G, Co, K) results never outweigh the work.
Grads patch_grads(const Tensor& Wg, const Tensor& c, const Tensor& g, bool need_w, bool need_cols) {
  Tensor gw, gc;
  if (need_w) {
    int64_t N = c.size(0), G = c.size(1), K = c.size(2), L = c.size(3), Co = g.size(2);
    if (L < Co) {
      Tensor gp = reshape(permute(g, {1, 2, 0, 3}), {G, Co, N * L});
      Tensor cp = reshape(permute(c, {1, 0, 3, 2}), {G, N * L, K});
      gw = matmul(gp, cp);
    } else {
      gw = sum(matmul(g, transpose(c, 2, 3)), {0});
    }
  }
  if (need_cols) gc = matmul(transpose(Wg, 1, 2), g);
  return {gw, gc};
}

// The filters of each group times the image patches: Wg (G, Co, K) @ cols (N, G, K, L) ->
// (N, G, Co, L), one batched product (the path of devices and of float16 / bfloat16).
Tensor patch_product(const Tensor& Wg, const Tensor& cols) {
  Tensor y = ops::matmul(Wg, cols);
  if (!needs_recording({&Wg, &cols})) return y;
  SavedTensor sw = SavedTensor::input(Wg), sc = SavedTensor::input(cols);
  record("conv2d", y, {&Wg, &cols}, [sw, sc](const Tensor& g, const Node& n) -> Grads {
    return patch_grads(sw.unpack(n), sc.unpack(n), g, n.needs_grad(0), n.needs_grad(1));
  });
  return y;
}

// Conv2d of x4 (N, Cin, H, W) by weight (Cout, Cin/G, kh, kw) plus bias -> (N, Cout, L) on
// the CPU kernels that never store the batch's patches (ops::conv2d_cpu). The bias's
// gradient is sum_to's, as for an added bias. A backward that builds a graph (create_graph)
// goes through unfold and patch_grads, whose ops record.
Tensor conv_on_cpu(const Tensor& x4, const Tensor& weight, const Tensor* bias, const ops::Window2d& w, int64_t G) {
  const char* op = "conv2d";
  Tensor y = ops::conv2d_cpu(x4, weight, bias, w, G, op);
  if (!needs_recording({&x4, &weight, bias})) return y;
  SavedTensor sx = SavedTensor::input(x4), sw = SavedTensor::input(weight);
  record(op, y, {&x4, &weight, bias}, [sx, sw, w, G](const Tensor& g_, const Node& n) -> Grads {
    Tensor x = sx.unpack(n), wt = sw.unpack(n);
    // contiguous once for the kernel and the bias's sum (a sum's gradient arrives expanded:
    // reducing the expanded tensor costs 4x the contiguous one)
    const bool graph = autograd::grad_enabled();
    Tensor g = graph ? g_ : g_.contiguous();
    const int64_t N = x.size(0), Cout = wt.size(0), L = g.size(2), K = wt.size(1) * wt.size(2) * wt.size(3);
    Tensor gb = n.needs_grad(2) ? reshape(sum_to(g, {1, Cout, 1}), {Cout}) : Tensor();
    if (graph) {
      Tensor cols = unfold(x, w, 0);
      Grads d = patch_grads(reshape(wt, {G, Cout / G, K}), reshape(cols, {N, G, K, L}),
                            reshape(g, {N, G, Cout / G, L}), n.needs_grad(1), n.needs_grad(0));
      return {d[1].defined() ? fold(reshape(d[1], {N, cols.size(1), L}), x.size(2), x.size(3), w) : Tensor(),
              d[0].defined() ? reshape(d[0], wt.sizes()) : Tensor(), gb};
    }
    Tensor gx, gw;
    ops::conv2d_backward_cpu(x, wt, g, w, G, n.needs_grad(0) ? &gx : nullptr, n.needs_grad(1) ? &gw : nullptr, "conv2d");
    return {gx, gw, gb};
  });
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
  Tensor y;
  if (ops::conv2d_on_cpu(x4, weight, w, op)) {
    y = conv_on_cpu(x4, weight, bias, w, G);
  } else {
    Tensor cols = unfold(x4, w, 0);  // (N, Cin*kh*kw, L)
    y = reshape(patch_product(reshape(weight, {G, Cout / G, K}), reshape(cols, {N, G, K, L})), {N, Cout, L});
    if (bias) y = y + reshape(*bias, {1, Cout, 1});
  }
  y = reshape(y, {N, Cout, Ho, Wo});
  return x.dim() == 4 ? y : squeeze(y, {0});
}

// A 4-D view of a (N, C, H, W) or unbatched (C, H, W) input, and back.
static Tensor batched(const Tensor& x) { return x.dim() == 4 ? x : unsqueeze(x, 0); }
static Tensor unbatched_like(const Tensor& y, const Tensor& x) { return x.dim() == 4 ? y : squeeze(y, {0}); }

static void check_image(const Tensor& x, const char* op) {
  TIDE_CHECK(x.dim() == 3 || x.dim() == 4, op, ": expected input of shape (N, C, H, W) or (C, H, W), got ",
             x.sizes().str());
  check_float(x, op, "input");
}

// x4 with `extra[0]` rows and `extra[1]` columns of `value` appended (bottom, right).
static Tensor append_border(const Tensor& x4, const int64_t extra[2], const Scalar& value) {
  Tensor y = x4;
  for (int i = 0; i < 2; ++i) {
    if (extra[i] == 0) continue;
    Dims shape = y.sizes();
    shape[2 + i] = extra[i];
    y = cat({y, ops::full(shape, value, y.dtype(), y.device())}, 2 + i);
  }
  return y;
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor* bias, const ConvTranspose2dOptions& o) {
  const char* op = "conv_transpose2d";
  check_image(x, op);
  TIDE_CHECK(weight.dim() == 4, op, ": weight must have shape (in_channels, out_channels/groups, kH, kW), got ",
             weight.sizes().str());
  check_same_dtype(x, weight, op, "input", "weight");
  Tensor x4 = batched(x);
  int64_t G = o.groups, N = x4.size(0), Cin = x4.size(1), H = x4.size(2), W = x4.size(3);
  TIDE_CHECK(G >= 1 && Cin % G == 0, op, ": groups ", G, " must be positive and divide in_channels ", Cin);
  TIDE_CHECK(weight.size(0) == Cin, op, ": weight of shape ", weight.sizes().str(), " expects ", weight.size(0),
             " input channels, but the input of shape ", x.sizes().str(), " has ", Cin);
  int64_t Cout = checked_mul(op, weight.size(1), G, "out_channels");
  if (bias) {
    TIDE_CHECK(bias->dim() == 1 && bias->size(0) == Cout, op, ": bias must have shape {", Cout, "}, got ",
               bias->sizes().str());
    check_same_dtype(*bias, weight, op, "bias", "weight");
  }
  // The patches overlap, and summing their products rounded to a half-precision dtype loses
  // digits (-2.25 for -2.236 in bfloat16): such inputs are computed in float32 and the result
  // rounded once, as PyTorch's CPU kernels accumulate.
  if (x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16) {
    Tensor b32 = bias ? cast(*bias, DType::Float32) : Tensor();
    Tensor y = conv_transpose2d(cast(x, DType::Float32), cast(weight, DType::Float32), bias ? &b32 : nullptr, o);
    return cast(y, x.dtype());
  }
  ops::Window2d w;
  int64_t out[2], extra[2], in[2] = {H, W};
  for (int i = 0; i < 2; ++i) {
    w.kernel[i] = weight.size(2 + i), w.stride[i] = o.stride[i], w.padding[i] = o.padding[i];
    w.dilation[i] = o.dilation[i];
    TIDE_CHECK(w.stride[i] > 0 && w.dilation[i] > 0 && w.padding[i] >= 0, op,
               ": stride and dilation must be positive and padding non-negative, got stride ", w.stride[i],
               ", dilation ", w.dilation[i], ", padding ", w.padding[i]);
    TIDE_CHECK(o.output_padding[i] >= 0 && (o.output_padding[i] < w.stride[i] || o.output_padding[i] < w.dilation[i]),
               op, ": output_padding ", o.output_padding[i], " must be non-negative and smaller than either stride ",
               w.stride[i], " or dilation ", w.dilation[i]);
    // (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
    int64_t size = checked_add(op, checked_mul(op, in[i] - 1, w.stride[i], "the output size"),
                               checked_mul(op, w.dilation[i], w.kernel[i] - 1, "the kernel's extent"), "the output size");
    size = checked_add(op, size, o.output_padding[i] + 1, "the output size");
    size -= checked_mul(op, w.padding[i], int64_t(2), "the padding");  // both non-negative: no overflow
    TIDE_CHECK(size >= 1, op, ": the output size ", size, " along spatial dim ", i + 1, " is not positive (input ", in[i],
               ", kernel ", w.kernel[i], ", stride ", w.stride[i], ", padding ", w.padding[i], ", dilation ",
               w.dilation[i], ", output_padding ", o.output_padding[i], ")");
    out[i] = size;
    // An output_padding of a stride or more (below the dilation) gives windows past the
    // input's last row: they read zeros, appended to the input.
    extra[i] = (in[i] == 0 ? 0 : w.out_size(i, out[i], op) - in[i]);
  }
  Tensor xp = append_border(x4, extra, Scalar(0.0));
  int64_t L = xp.size(2) * xp.size(3), K = Cout / G * w.kernel[0] * w.kernel[1];
  // Each image's patches: weight^T (per group) times its pixels, then summed onto the output.
  Tensor cols = G == 1 ? matmul(t(reshape(weight, {Cin, K})), reshape(xp, {N, Cin, L}))
                       : reshape(matmul(transpose(reshape(weight, {G, Cin / G, K}), 1, 2), reshape(xp, {N, G, Cin / G, L})),
                                 {N, G * K, L});
  Tensor y = fold(cols, out[0], out[1], w);
  if (bias) y = y + reshape(*bias, {1, Cout, 1, 1});
  return unbatched_like(y, x);
}

namespace {

// The windows of a pooling over x4 (N, C, H, W): the window, the output size and, for
// ceil_mode, the rows/columns past the padded input that the last windows read. As
// PyTorch, a ceil_mode window must start inside the input or its left padding.
struct PoolWindows {
  ops::Window2d w;
  int64_t out[2], extra[2];
};

PoolWindows pool_windows(const char* op, const Tensor& x4, const Pool2dOptions& o) {
  PoolWindows p;
  for (int i = 0; i < 2; ++i) {
    p.w.kernel[i] = o.kernel[i], p.w.stride[i] = o.stride[i], p.w.padding[i] = o.padding[i];
    p.w.dilation[i] = o.dilation[i];
    // (a non-positive kernel is out_size's error)
    TIDE_CHECK(o.kernel[i] <= 0 || o.padding[i] <= o.kernel[i] / 2, op, ": padding ", o.padding[i],
               " must be at most half the kernel size ", o.kernel[i]);
    // out_size checks that the window fits the padded input without overflow, so span and
    // room below are in range; the ceil_mode window past them starts inside the padded input.
    int64_t n = x4.size(2 + i), size = p.w.out_size(i, n, op);
    int64_t span = o.dilation[i] * (o.kernel[i] - 1) + 1, room = n + 2 * o.padding[i] - span;
    int64_t next_start = 0;  // where a window after the last whole one starts
    if (o.ceil_mode && room % o.stride[i] != 0 && !__builtin_mul_overflow(size, o.stride[i], &next_start) &&
        next_start < n + o.padding[i])
      ++size;
    p.out[i] = size;
    p.extra[i] = std::max<int64_t>(0, (size - 1) * o.stride[i] - room);
  }
  return p;
}

}  // namespace

std::vector<Tensor> max_pool2d_ex(const Tensor& x, const Pool2dOptions& o, bool with_indices) {
  const char* op = "max_pool2d";
  check_image(x, op);
  Tensor x4 = batched(x);
  int64_t N = x4.size(0), C = x4.size(1), H = x4.size(2), W = x4.size(3);
  PoolWindows p = pool_windows(op, x4, o);
  Tensor cols = unfold(append_border(x4, p.extra, Scalar(-INFINITY)), p.w, -INFINITY);  // padding never wins
  // After unfold, whose message names a window too large for its patches; checked still,
  // for an input without channels (no patches to refuse).
  int64_t kk = checked_mul(op, o.kernel[0], o.kernel[1], "the window size"),
          L = checked_mul(op, p.out[0], p.out[1], "the number of windows");
  ops::ValuesIndices m = max(reshape(cols, {N, C, kk, L}), 2);
  std::vector<Tensor> r{unbatched_like(reshape(m.values, {N, C, p.out[0], p.out[1]}), x)};
  if (with_indices) {
    // Each window's input positions (1-based, 0 in the padding), picked at its maximum.
    Tensor pos = ops::reshape(ops::arange(Scalar(int64_t(1)), Scalar(H * W + 1), Scalar(int64_t(1)), DType::Int64),
                              {1, 1, H, W});
    pos = ops::unfold2d(append_border(pos, p.extra, Scalar(int64_t(0))), p.w, 0, op);
    pos = ops::expand(ops::reshape(pos, {1, 1, kk, L}), {N, C, kk, L}).to_device(x.device());
    Tensor idx = ops::squeeze(ops::gather(pos, 2, ops::unsqueeze(m.indices, 2)), {2});
    r.push_back(unbatched_like(ops::reshape(idx, {N, C, p.out[0], p.out[1]}), x));
  }
  return r;
}

Tensor max_pool2d(const Tensor& x, const int64_t kernel[2], const Conv2dOptions& o) {
  Pool2dOptions po;
  for (int i = 0; i < 2; ++i)
    po.kernel[i] = kernel[i], po.stride[i] = o.stride[i], po.padding[i] = o.padding[i], po.dilation[i] = o.dilation[i];
  return max_pool2d_ex(x, po, false)[0];
}

Tensor avg_pool2d(const Tensor& x, const Pool2dOptions& o, bool count_include_pad, int64_t divisor_override) {
  const char* op = "avg_pool2d";
  check_image(x, op);
  TIDE_CHECK(divisor_override >= 0, op, ": divisor_override must be positive, got ", divisor_override);
  Tensor x4 = batched(x);
  int64_t N = x4.size(0), C = x4.size(1), H = x4.size(2), W = x4.size(3);
  PoolWindows p = pool_windows(op, x4, o);
  Tensor cols = unfold(append_border(x4, p.extra, Scalar(0.0)), p.w, 0);
  // After unfold, whose message names a window too large for its patches; checked still,
  // for an input without channels (no patches to refuse).
  int64_t kk = checked_mul(op, o.kernel[0], o.kernel[1], "the window size"),
          L = checked_mul(op, p.out[0], p.out[1], "the number of windows");
  Tensor sums = sum(reshape(cols, {N, C, kk, L}), {2});
  // PyTorch's divisor per window: its extent clipped to the padded input (count_include_pad)
  // or to the input itself.
  // (Written by a host kernel, so that torch.compile records it.)
  Tensor div = Tensor::empty({L}, DType::Float64);
  run_host_kernel(op, {&div}, [div, p, o, H, W, divisor_override, count_include_pad] {
    double* d = div.data<double>();
    for (int64_t oy = 0; oy < p.out[0]; ++oy)
      for (int64_t ox = 0; ox < p.out[1]; ++ox) {
        int64_t y0 = oy * o.stride[0] - o.padding[0], x0 = ox * o.stride[1] - o.padding[1];
        int64_t y1 = std::min(y0 + o.kernel[0], H + o.padding[0]), x1 = std::min(x0 + o.kernel[1], W + o.padding[1]);
        int64_t padded = (y1 - y0) * (x1 - x0);
        int64_t inside = (std::min(y1, H) - std::max<int64_t>(y0, 0)) * (std::min(x1, W) - std::max<int64_t>(x0, 0));
        d[oy * p.out[1] + ox] = double(divisor_override > 0 ? divisor_override : count_include_pad ? padded : inside);
      }
  });
  Tensor y = sums / ops::cast(div, x.dtype()).to_device(x.device());
  return unbatched_like(reshape(y, {N, C, p.out[0], p.out[1]}), x);
}

}  // namespace tide::ag
