-- Rows of the conformance table for the convolution variants, pooling and resampling
-- (bindings/lua/torch_nn_conv.lua), checked against PyTorch's torch.nn.functional on float64
-- copies of the inputs. Rows alternate between the functional form (p.form = 1) and the layer
-- (p.form = 2; its weights loaded with load_state_dict), so both take every keyword. Indices
-- that tide returns are 1-based, PyTorch's 0-based. Loaded by ops.lua with G and add(row).
local G, add = ...

local MAIN = {"float32", "float64"}
local CONV_TOL = {float32 = {1e-4, 1e-5}, float64 = {1e-10, 1e-12}}
local F = torch.nn.functional
local kwargs = G.kwargs

-- Python keyword arguments from p.kw (a JSON object, or null).
local PYKW = "**(p.kw or {})"

-- A copy of t with the entries of more added.
local function merged(t, more)
  local r = {}
  for k, v in pairs(t or {}) do r[k] = v end
  for k, v in pairs(more or {}) do r[k] = v end
  return r
end

-- Cases from a list of {input shape, keywords, extra}: make(entry, dt) returns the case's
-- inputs; forms alternate.
local function cases_of(list, make)
  return function()
    local cs = {}
    for _, dt in ipairs(MAIN) do
      for i, entry in ipairs(list) do
        local case = make(entry, dt)
        case.p = merged(entry[3], {kw = entry[2], form = 1 + i % 2})
        cs[#cs + 1] = case
      end
    end
    return cs
  end
end

---------------------------------------------------------------------------------------------
-- Convolutions: {input shape, keywords, {w = weight shape, bias = bool}}. The layer gets the
-- channel counts and kernel from the weight and its keywords, then the weights.

local function conv_make(entry, dt)
  local x, lx = G.view(entry[1], dt, G.pick(G.LAYOUTS))
  local e = entry[3]
  return {a = x, b = G.make(e.w, dt), c = e.bias and G.make({e.cout}, dt) or nil, layouts = {a = lx}}
end

local function conv_row(fname, lname, list)
  local transposed = fname:find("transpose") ~= nil
  for _, entry in ipairs(list) do
    local e = entry[3]
    local groups = (entry[2] or {}).groups or 1
    e.cout = transposed and e.w[2] * groups or e.w[1]
    e.cin = transposed and e.w[1] or e.w[2] * groups
  end
  add({name = "F." .. fname, grad = {"a", "b", "c"}, gradgrad = true, out = "same", tol = CONV_TOL,
       ref = "N(F." .. fname .. "(T(a), T(b), T(c), " .. PYKW .. "))",
       cases = cases_of(list, conv_make),
       call = function(x, w, bias, p)
         local kw = merged(p.kw)
         -- The layer copies w and bias into its parameters, so it serves the float32 cases only:
         -- the gradient column (float64) differentiates w and bias through the functional form.
         if p.form == 2 and x.dtype == "float32" then
           local k = {table.unpack(w.shape, 3)}
           local layer = torch.nn[lname](p.cin, p.cout, #k == 1 and k[1] or k,
                                         merged(kw, {bias = bias ~= nil, dtype = x.dtype, device = x.device}))
           layer:load_state_dict({weight = w, bias = bias})
           return layer(x)
         end
         kw.bias = bias
         return F[fname](x, w, kwargs(kw))
       end})
end

conv_row("conv1d", "Conv1d", {
  {{2, 4, 9}, {groups = 2, stride = 2, padding = 1}, {w = {6, 2, 3}, bias = true}},
  {{3, 7}, {dilation = 2, padding = "same"}, {w = {2, 3, 3}}},
  {{2, 2, 8}, {padding = "same"}, {w = {3, 2, 4}, bias = true}},
  {{1, 3, 10}, {groups = 3, dilation = 3, padding = "valid"}, {w = {3, 1, 3}}},
  {{2, 1, 5}, nil, {w = {2, 1, 5}, bias = true}},
  {{2, 3, 6}, {stride = 3, padding = 2, dilation = 2}, {w = {4, 3, 2}}},
})
conv_row("conv2d", "Conv2d", {
  {{2, 4, 6, 5}, {groups = 2, dilation = {2, 1}, padding = 1}, {w = {6, 2, 3, 2}, bias = true}},
  {{3, 5, 6}, {padding = "same"}, {w = {2, 3, 2, 3}}},
  {{1, 2, 7, 6}, {padding = "same", dilation = {1, 3}}, {w = {4, 2, 3, 2}, bias = true}},
  {{2, 6, 5, 5}, {groups = 3, stride = {2, 1}, padding = "valid"}, {w = {3, 2, 2, 2}}},
  {{1, 3, 8, 8}, {groups = 3, stride = 2, padding = {2, 1}, dilation = 2}, {w = {6, 1, 3, 3}, bias = true}},
  -- Padding wider than the kernel's extent: whole rows and columns of patches in the padding.
  {{2, 2, 3, 2}, {padding = {4, 5}, stride = {3, 2}, dilation = {2, 3}}, {w = {2, 2, 2, 2}, bias = true}},
  -- Fewer positions per image than filters: the weight gradient as one product over the batch.
  {{3, 4, 3, 3}, {groups = 2}, {w = {10, 2, 2, 2}, bias = true}},
  {{2, 3, 3}, nil, {w = {6, 2, 2, 2}}},
})
conv_row("conv_transpose1d", "ConvTranspose1d", {
  {{2, 4, 5}, {stride = 2, padding = 1, output_padding = 1}, {w = {4, 3, 3}, bias = true}},
  {{3, 6}, {groups = 3}, {w = {3, 2, 2}}},
  {{1, 4, 4}, {groups = 2, dilation = 2, stride = 3, output_padding = 2}, {w = {4, 1, 3}, bias = true}},
  {{2, 2, 3}, {padding = 2, dilation = 3, output_padding = 2}, {w = {2, 2, 3}}},
  {{2, 3, 4}, nil, {w = {3, 5, 1}, bias = true}},
})
conv_row("conv_transpose2d", "ConvTranspose2d", {
  {{2, 4, 3, 4}, {stride = 2, padding = 1, output_padding = 1}, {w = {4, 3, 3, 3}, bias = true}},
  {{3, 4, 4}, {groups = 3, stride = {1, 2}}, {w = {3, 2, 2, 3}}},
  {{1, 4, 3, 3}, {groups = 2, dilation = {2, 1}, padding = {1, 0}, output_padding = {1, 0}, stride = {2, 1}},
   {w = {4, 1, 3, 2}, bias = true}},
  {{2, 2, 3, 2}, {stride = 1, dilation = 3, output_padding = 2}, {w = {2, 2, 2, 2}}},
  {{1, 3, 4, 4}, {stride = 3, padding = 2, output_padding = {2, 1}}, {w = {3, 2, 4, 3}, bias = true}},
})

-- The transposed layers' output_size: output_padding chosen to reach it.
add({name = "ConvTranspose2d output_size", grad = {"a"}, out = "same", tol = CONV_TOL,
     ref = "N(torch.nn.functional.conv_transpose2d(T(a), T(b), T(c), stride=p.stride, padding=p.padding,"
        .. " output_padding=p.op))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, s in ipairs({{{2, 3, 4, 4}, 2, 1, {8, 7}, {1, 0}}, {{3, 5, 5}, 3, 0, {3, 16, 17}, {1, 2}},
                             {{1, 3, 2, 3}, {2, 3}, {1, 0}, {3, 10}, {0, 1}}}) do
           cs[#cs + 1] = {a = G.make(s[1], dt), b = G.make({3, 4, 3, 3}, dt), c = G.make({4}, dt),
                          p = {stride = s[2], padding = s[3], size = s[4], op = s[5]}}
         end
       end
       return cs
     end,
     call = function(x, w, bias, p)
       local m = torch.nn.ConvTranspose2d(3, 4, 3, {stride = p.stride, padding = p.padding, dtype = x.dtype,
                                                    device = x.device})
       m:load_state_dict({weight = w, bias = bias})
       return m(x, p.size)
     end})

---------------------------------------------------------------------------------------------
-- Pooling: {input shape, keywords, extra}; p.fname / p.lname pick the functional and layer.

local function pool_make(entry, dt)
  local x, lx = G.view(entry[1], dt, G.pick(G.LAYOUTS))
  return {a = x, layouts = {a = lx}}
end

-- A pooling row: positional arguments `pos` (names of keywords given positionally, first
-- to the layer's constructor and the functional's second argument).
local function pool_row(name, fname, lname, first, list, opts)
  opts = opts or {}
  add({name = name, grad = not opts.indices and {"a"} or nil, out = opts.indices and "same,int64" or "same",
       tol = CONV_TOL, cast = opts.indices and "none" or nil,
       ref = opts.indices
         and "(lambda r: [N(r[0]), N(r[1]) + 1])(F." .. fname .. "(T(a), " .. PYKW .. "))"
         or "N(F." .. fname .. "(T(a), " .. PYKW .. "))",
       cases = cases_of(list, pool_make),
       call = function(x, _, _, p)
         local kw = merged(p.kw)
         local arg = kw[first]
         kw[first] = nil
         local rest = kwargs(kw)
         if p.form == 2 then return (rest and torch.nn[lname](arg, rest) or torch.nn[lname](arg))(x) end
         if rest then return F[fname](x, arg, rest) end
         return F[fname](x, arg)
       end})
end

local AVG = {
  {{2, 3, 6, 6}, {kernel_size = 2}},
  {{1, 2, 7, 7}, {kernel_size = 3, stride = 2, padding = 1}},
  {{2, 1, 7, 6}, {kernel_size = 3, stride = 2, padding = 1, count_include_pad = false}},
  {{3, 5, 5}, {kernel_size = {2, 3}, stride = {2, 2}, ceil_mode = true}},
  {{1, 2, 6, 7}, {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true, count_include_pad = false}},
  {{2, 2, 5, 6}, {kernel_size = 2, stride = {2, 3}, padding = 1, ceil_mode = true}},
  {{1, 3, 5, 5}, {kernel_size = 2, divisor_override = 3, padding = 1, stride = 1}},
}
pool_row("F.avg_pool2d", "avg_pool2d", "AvgPool2d", "kernel_size", AVG)

local MAX2 = {
  {{2, 3, 6, 6}, {kernel_size = 2, ceil_mode = true}},
  {{1, 2, 7, 7}, {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true}},
  {{3, 5, 6}, {kernel_size = {2, 3}, stride = {2, 2}, ceil_mode = true, dilation = {2, 1}}},
  {{2, 1, 8, 7}, {kernel_size = 2, stride = 3, dilation = 2, padding = 1}},
  {{1, 2, 5, 5}, {kernel_size = 3, stride = 2, padding = 1}},
}
pool_row("F.max_pool2d", "max_pool2d", "MaxPool2d", "kernel_size", MAX2)
local MAX2I = {}
for i, e in ipairs(MAX2) do MAX2I[i] = {e[1], merged(e[2], {return_indices = true})} end
pool_row("F.max_pool2d indices", "max_pool2d", "MaxPool2d", "kernel_size", MAX2I, {indices = true})

local MAX1 = {
  {{2, 3, 8}, {kernel_size = 2}},
  {{3, 9}, {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true}},
  {{2, 2, 10}, {kernel_size = 2, stride = 3, dilation = 3, ceil_mode = true}},
  {{1, 4, 7}, {kernel_size = 4, stride = 1, padding = 2}},
}
pool_row("F.max_pool1d", "max_pool1d", "MaxPool1d", "kernel_size", MAX1)
local MAX1I = {}
for i, e in ipairs(MAX1) do MAX1I[i] = {e[1], merged(e[2], {return_indices = true})} end
pool_row("F.max_pool1d indices", "max_pool1d", "MaxPool1d", "kernel_size", MAX1I, {indices = true})

local ADAPTIVE = {
  {{2, 3, 6, 6}, {output_size = 3}},
  {{1, 2, 7, 5}, {output_size = {3, 2}}},
  {{3, 5, 7}, {output_size = {4, 7}}},
  {{2, 2, 4, 5}, {output_size = {6, 8}}},
  {{1, 1, 9, 4}, {output_size = 1}},
}
pool_row("F.adaptive_avg_pool2d", "adaptive_avg_pool2d", "AdaptiveAvgPool2d", "output_size", ADAPTIVE)
pool_row("F.adaptive_max_pool2d", "adaptive_max_pool2d", "AdaptiveMaxPool2d", "output_size", ADAPTIVE)
local ADAPTIVE_I = {}
for i, e in ipairs(ADAPTIVE) do ADAPTIVE_I[i] = {e[1], merged(e[2], {return_indices = true})} end
pool_row("F.adaptive_max_pool2d indices", "adaptive_max_pool2d", "AdaptiveMaxPool2d", "output_size", ADAPTIVE_I,
         {indices = true})

---------------------------------------------------------------------------------------------
-- Resampling and pixel shuffles.

local INTERP = {
  {{2, 3, 4, 5}, {scale_factor = 2}},
  {{1, 2, 5, 4}, {size = {7, 3}}},
  {{2, 3, 6}, {size = 11}},
  {{1, 2, 3, 4}, {scale_factor = 1.7}},
  {{1, 2, 5, 3}, {scale_factor = {0.5, 2.5}, mode = "nearest"}},
  {{2, 2, 4, 5}, {scale_factor = 2, mode = "bilinear", align_corners = false}},
  {{1, 3, 5, 4}, {size = {8, 3}, mode = "bilinear", align_corners = true}},
  {{1, 2, 4, 4}, {scale_factor = 1.5, mode = "bilinear"}},
  {{1, 2, 3, 5}, {scale_factor = {2.2, 0.7}, mode = "bilinear", recompute_scale_factor = true}},
  {{2, 3, 7}, {size = 4, mode = "linear", align_corners = false}},
  {{1, 2, 5}, {scale_factor = 3, mode = "linear", align_corners = true}},
  {{1, 1, 4, 4}, {size = {1, 1}, mode = "bilinear", align_corners = true}},
}
add({name = "F.interpolate", grad = {"a"}, out = "same", tol = CONV_TOL,
     ref = "N(F.interpolate(T(a), " .. PYKW .. "))",
     cases = cases_of(INTERP, pool_make),
     call = function(x, _, _, p)
       if p.form == 2 then return torch.nn.Upsample(p.kw)(x) end
       return F.interpolate(x, p.kw)
     end})

for _, spec in ipairs({{"pixel_shuffle", "PixelShuffle", {{{2, 8, 3, 2}, 2}, {{12, 2, 3}, 2}, {{2, 1, 9, 2, 2}, 3},
                                                           {{1, 4, 1, 1}, 1}}},
                       {"pixel_unshuffle", "PixelUnshuffle", {{{2, 2, 4, 6}, 2}, {{3, 6, 3}, 3}, {{2, 2, 1, 4, 4}, 2}}}}) do
  local fname, lname, list = spec[1], spec[2], spec[3]
  add({name = "F." .. fname, grad = {"a"}, out = "same", cast = "none",
       ref = "N(F." .. fname .. "(T(a), p.r))",
       cases = function()
         local cs = {}
         for _, dt in ipairs(MAIN) do
           for i, e in ipairs(list) do
             local x, lx = G.view(e[1], dt, G.pick(G.LAYOUTS))
             cs[#cs + 1] = {a = x, layouts = {a = lx}, p = {r = e[2], form = 1 + i % 2}}
           end
         end
         return cs
       end,
       call = function(x, _, _, p)
         if p.form == 2 then return torch.nn[lname](p.r)(x) end
         return F[fname](x, p.r)
       end})
end
