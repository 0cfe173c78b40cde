-- torch.nn.utils: clip_grad_norm_ (every norm type, error_if_nonfinite), clip_grad_value_,
-- parameters_to_vector, vector_to_parameters and nn.utils.rnn.pad_sequence. The clipping
-- numbers are PyTorch 1.13's in float64, from tests/optim/make_expected.py
-- (tests/optim/expected_nn_utils.lua).
local here = arg[0]:match("(.*/)") or "./"
local T = dofile(here .. "harness.lua")
local torch = torch or require "torch"
local utils = torch.nn.utils
local E = dofile(here .. "../optim/expected_nn_utils.lua")
local f64 = {dtype = "float64"}

local function params_with_grads()
  local ps = {}
  for i, g in ipairs(E.grads) do
    local grad = torch.tensor(g, f64)
    ps[i] = torch.zeros(grad.shape, {dtype = "float64", requires_grad = true})
    ps[i].grad = grad
  end
  return ps
end

-- Within 2 ulp-ish (1e-15 relative): PyTorch's norm reductions sum in another order.
local function close(got, want, what)
  T.eq(#got, #want, what .. ": length")
  for i = 1, #want do
    if not (math.abs(got[i] - want[i]) <= 1e-15 * math.max(1, math.abs(want[i]))) then
      error(string.format("%s: element %d is %.17g, PyTorch %.17g", what, i, got[i], want[i]), 2)
    end
  end
end

for _, c in ipairs(E.clip) do
  local label = string.format("clip_grad_norm_(max_norm=%g, norm_type=%g)", c.max_norm, c.norm_type)
  T.test(label .. " matches PyTorch", function()
    local ps = params_with_grads()
    local total = utils.clip_grad_norm_(ps, c.max_norm, c.norm_type)
    T.eq(total.dtype, "float64")
    close({total:item()}, {c.total}, label .. " total norm")
    for i, p in ipairs(ps) do close(p.grad:reshape(-1):tolist(), c.grads[i], label .. " grad " .. i) end
  end)
end

T.test("clip_grad_norm_: keyword forms, a single tensor, no gradients", function()
  local ps = params_with_grads()
  local total = utils.clip_grad_norm_(ps, 1.0, {norm_type = math.huge, error_if_nonfinite = true})
  T.eq(total:item(), 4.0)
  ps = params_with_grads()
  total = utils.clip_grad_norm_{parameters = ps, max_norm = 1.0}
  close({total:item()}, {E.clip[1].total}, "total")
  local p = torch.zeros({2}, {dtype = "float64", requires_grad = true})
  p.grad = torch.tensor({3.0, 4.0}, f64)
  T.eq(utils.clip_grad_norm_(p, 10):item(), 5.0)
  T.eq(p.grad:tolist(), {3.0, 4.0})
  local none = utils.clip_grad_norm_({torch.zeros({2}, {requires_grad = true})}, 1.0)
  T.eq(none:item(), 0.0)
  T.eq(none.dtype, "float32")
end)

T.test("clip_grad_norm_: a non-finite norm is an error with error_if_nonfinite, else scales to nan", function()
  local p = torch.zeros({3}, {dtype = "float64", requires_grad = true})
  p.grad = torch.tensor({1.0, math.huge, 2.0}, f64)
  T.error(function() utils.clip_grad_norm_({p}, 1.0, 2.0, {error_if_nonfinite = true}) end,
          "clip_grad_norm_: the total norm of order 2.0 of the gradients is inf, so it cannot be clipped " ..
          "(set error_if_nonfinite = false to scale the gradients by it anyway)")
  T.eq(p.grad:tolist()[1], 1.0)  -- untouched
  local total = utils.clip_grad_norm_({p}, 1.0)
  T.eq(total:item(), math.huge)
  local g = p.grad:tolist()
  T.eq(g[1], 0.0)
  T.truthy(g[2] ~= g[2], "inf * 0 is nan")
end)

T.test("clip_grad_value_ clamps in place", function()
  local ps = params_with_grads()
  utils.clip_grad_value_(ps, 1.25)
  T.eq(ps[1].grad:tolist(), {{0.5, -1.25, 1.25}, {0.0, 1.25, -0.25}})
  T.eq(ps[2].grad:tolist(), {1.0, -1.25, 0.125, 0.0})
  T.eq(ps[3].grad:tolist(), {{-1.25}})
  local p = torch.zeros({2}, {requires_grad = true})
  utils.clip_grad_value_(p, 1)  -- no gradient: nothing to do
  T.eq(p.grad, nil)
end)

T.test("parameters_to_vector and vector_to_parameters", function()
  local a = torch.tensor({{1.0, 2.0}, {3.0, 4.0}}, {dtype = "float64", requires_grad = true})
  local b = torch.tensor({5.0, 6.0}, {dtype = "float64", requires_grad = true})
  local v = utils.parameters_to_vector({a, b})
  T.eq(v:tolist(), {1, 2, 3, 4, 5, 6})
  T.eq(v.requires_grad, true)
  v:mul(torch.arange(1, 7, f64)):sum():backward()
  T.eq(a.grad:tolist(), {{1, 2}, {3, 4}})
  T.eq(b.grad:tolist(), {5, 6})
  utils.vector_to_parameters(torch.tensor({-1.0, -2.0, -3.0, -4.0, -5.0, -6.0}, f64), {a, b})
  T.eq(a:tolist(), {{-1, -2}, {-3, -4}})
  T.eq(b:tolist(), {-5, -6})
  T.eq(a.requires_grad, true)
  T.error(function() utils.vector_to_parameters(torch.zeros({5}), {a, b}) end,
          "vector_to_parameters: vec has 5 elements but the parameters 6")
  T.error(function() utils.vector_to_parameters(torch.zeros({2, 3}), {a, b}) end,
          "vector_to_parameters: vec must be 1-D, got 2 dimensions")
  T.error(function() utils.vector_to_parameters({1, 2}, {a}) end, "vector_to_parameters: expected a tensor for vec, got a table")
  T.error(function() utils.parameters_to_vector({a, 3}) end, "parameters_to_vector: parameters[2] is 3, not a tensor")
end)

T.test("pad_sequence: time-major and batch_first, padding_value, trailing dimensions, gradients", function()
  local a = torch.tensor({1.0, 2.0, 3.0}, {requires_grad = true})
  local b = torch.tensor({4.0})
  local c = torch.tensor({5.0, 6.0})
  local pad = utils.rnn.pad_sequence
  T.eq(pad({a, b, c}):tolist(), {{1, 4, 5}, {2, 0, 6}, {3, 0, 0}})
  T.eq(pad({a, b, c}, true):tolist(), {{1, 2, 3}, {4, 0, 0}, {5, 6, 0}})
  T.eq(pad({a, b, c}, {batch_first = true, padding_value = -1}):tolist(), {{1, 2, 3}, {4, -1, -1}, {5, 6, -1}})
  T.eq(pad({a, b, c}, false, 9):tolist(), {{1, 4, 5}, {2, 9, 6}, {3, 9, 9}})
  local x = torch.ones({2, 2}, f64)
  local y = torch.full({1, 2}, 2.0, f64)
  local out = pad({x, y}, {batch_first = true})
  T.eq(out.shape, {2, 2, 2})
  T.eq(out.dtype, "float64")
  T.eq(out:tolist(), {{{1, 1}, {1, 1}}, {{2, 2}, {0, 0}}})
  pad({a, b, c}):mul(torch.tensor({{1.0, 10.0, 100.0}, {2.0, 20.0, 200.0}, {3.0, 30.0, 300.0}})):sum():backward()
  T.eq(a.grad:tolist(), {1, 2, 3})
  T.error(function() pad({a, torch.ones({2, 2})}) end, "pad_sequence: sequences[2] has shape {2, 2} and dtype float32")
  T.error(function() pad({a, torch.ones({2}, f64)}) end, "all must share the trailing dimensions and the dtype")
  T.error(function() pad({}) end, "pad_sequence: missing argument 'sequences'")  -- {} reads as keywords
  T.error(function() pad(3) end, "pad_sequence: sequences must be a non-empty list of tensors, got 3")
  T.error(function() pad({a}, {batch_frist = true}) end, "pad_sequence: unknown keyword 'batch_frist' (did you mean 'batch_first'?")
  T.error(function() pad({a}, "yes") end, 'pad_sequence: batch_first must be true or false, got "yes"')
end)

T.test("argument errors name the function and the value", function()
  local p = torch.zeros({2}, {requires_grad = true})
  T.error(function() utils.clip_grad_norm_({p}) end, "clip_grad_norm_: missing argument 'max_norm'")
  T.error(function() utils.clip_grad_norm_({p}, "1") end, 'clip_grad_norm_: max_norm must be a number, got "1"')
  T.error(function() utils.clip_grad_norm_({p}, 1, 2, {error_if_nonfinite = 1}) end,
          "clip_grad_norm_: error_if_nonfinite must be true or false, got 1")
  T.error(function() utils.clip_grad_norm_({p}, 1, {norm = 2}) end, "clip_grad_norm_: unknown keyword 'norm'")
  T.error(function() utils.clip_grad_norm_(3, 1) end, "clip_grad_norm_: parameters must be a tensor or a list of tensors, got 3")
  T.error(function() utils.clip_grad_value_({p}) end, "clip_grad_value_: missing argument 'clip_value'")
  T.error(function() utils.parameters_to_vector({p}, 2) end,
          "nn.utils.parameters_to_vector: unexpected argument 2 (the number 2)")
end)

if torch.cuda.is_available() then
  T.test("CUDA: clip_grad_norm_, clip_grad_value_ and pad_sequence on the device", function()
    for _, c in ipairs(E.clip) do
      local ps = params_with_grads()
      for i, p in ipairs(ps) do
        local g = p.grad
        ps[i] = p:detach():to("cuda"):requires_grad_()
        ps[i].grad = g:to("cuda")
      end
      local total = utils.clip_grad_norm_(ps, c.max_norm, c.norm_type)
      close({total:to("cpu"):item()}, {c.total}, "total on cuda")
      for i, p in ipairs(ps) do close(p.grad:to("cpu"):reshape(-1):tolist(), c.grads[i], "grad " .. i .. " on cuda") end
    end
    local seqs = {torch.tensor({1.0, 2.0, 3.0}):to("cuda"), torch.tensor({4.0}):to("cuda")}
    local out = utils.rnn.pad_sequence(seqs, true, -1)
    T.eq(tostring(out.device):sub(1, 4), "cuda")
    T.eq(out:to("cpu"):tolist(), {{1, 2, 3}, {4, -1, -1}})
  end)
end

T.done()
