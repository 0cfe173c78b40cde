-- Rows of the conformance table for the contractions (einsum, tensordot, inner, kron), both
-- spellings, checked against NumPy. Loaded by ops.lua with its case generators G and add(row).
-- einsum cases pass their operands as a list in `a` (any count) with the subscripts in p.sub
-- and the path strategy in p.opt; the gradient rows pass up to three operands as a, b, c.
local G, add = ...

local TOL = {float32 = {1e-4, 1e-4}, float64 = {1e-10, 1e-10}}
local DTYPES = {"float32", "float64", "int64", "int32"}
local OPTS = {false, "greedy", "optimal", true}

-- An operand of `shape`: any layout, small values for integers (exact sums).
local function operand(shape, dt)
  local dom = G.is_float(dt) and nil or "small"
  return G.view(shape, dt, G.pick(G.LAYOUTS), {dom = dom})
end

-- {subscripts, operand shapes}: traces, diagonals, transposes, outer products, ellipsis with
-- broadcasting, size-1 broadcasting, chains of 3 to 5 operands, empty dims, 0-d operands.
local EINSUM = {
  {"ij,jk->ik", {{2, 3}, {3, 4}}},
  {"ij,jk", {{5, 1}, {1, 7}}},
  {"ii", {{4, 4}}},
  {"ii->i", {{3, 3}}},
  {"iij->j", {{2, 2, 5}}},
  {"iii->i", {{3, 3, 3}}},
  {"ijij->ij", {{2, 3, 2, 3}}},
  {"ij->", {{3, 4}}},
  {"ij->ji", {{2, 5}}},
  {"ij", {{2, 5}}},
  {"ji", {{2, 5}}},
  {"i,j->ij", {{3}, {4}}},
  {"i,i->", {{5}, {5}}},
  {"i,i", {{5}, {5}}},
  {"i,i->i", {{4}, {4}}},
  {"...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}},
  {"...ij,...jk", {{2, 1, 3, 4}, {5, 4, 2}}},
  {"b...,b->...", {{3, 2, 4}, {3}}},
  {"...", {{2, 3}}},
  {"i...->...", {{3, 2}}},
  {"...ii->...i", {{2, 3, 3}}},
  {"bij,bjk->bik", {{4, 2, 3}, {4, 3, 5}}},
  {"ij,ij->ij", {{1, 3}, {2, 3}}},
  {"ijk,jil->kl", {{2, 3, 4}, {3, 2, 5}}},
  {"Ba,aB", {{2, 3}, {3, 2}}},
  {"bA,Ab->", {{2, 3}, {3, 2}}},
  {"ij,kl->ijkl", {{2, 2}, {3, 1}}},
  {"i,->i", {{3}, {}}},
  {",", {{}, {}}},
  {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},
  {"ij,jk,ki", {{3, 4}, {4, 5}, {5, 3}}},
  {"i,j,k->ijk", {{2}, {3}, {2}}},
  {"abc,cd,de->abe", {{2, 3, 4}, {4, 3}, {3, 2}}},
  {"ab,bc,cd,de->ae", {{2, 3}, {3, 4}, {4, 2}, {2, 5}}},
  {"ab,bc,cd,de,ef->af", {{2, 3}, {3, 2}, {2, 4}, {4, 3}, {3, 2}}},
  {"ea,fb,abcd,gc,hd->efgh", {{2, 3}, {2, 3}, {3, 3, 3, 3}, {2, 3}, {2, 3}}},
  {"ij,jk->ik", {{3, 0}, {0, 4}}},
  {"ij,jk->ik", {{0, 3}, {3, 4}}},
  {"ii->i", {{0, 0}}},
  {"ij,jk,kl->il", {{2, 0}, {0, 4}, {4, 5}}},
}

local function einsum_cases(dtypes)
  return function()
    local cs = {}
    for _, dt in ipairs(dtypes) do
      for k, e in ipairs(EINSUM) do
        local ops, lays = {}, {}
        for i, s in ipairs(e[2]) do ops[i] = operand(s, dt) end
        cs[#cs + 1] = {a = ops, p = {sub = e[1], opt = OPTS[(k - 1) % #OPTS + 1]}}
      end
    end
    return cs
  end
end

add({name = "np.einsum", out = "same", ref = "np.einsum(p.sub, *a, optimize=p.opt)", tol = TOL, npstyle = true,
     cases = einsum_cases(DTYPES),
     call = function(a, _, _, p)
       local args = {table.unpack(a)}
       args[#args + 1] = {optimize = p.opt}
       return np.einsum(p.sub, table.unpack(args))
     end})
add({name = "einsum", out = "same", ref = "np.einsum(p.sub, *a)", tol = TOL,
     cases = einsum_cases({"float32", "float64"}),
     call = function(a, _, _, p)
       if p.opt == "optimal" then return torch.einsum(p.sub, a) end  -- the list form
       return torch.einsum(p.sub, table.unpack(a))
     end})
add({name = "np.einsum (bool)", out = "bool", cast = "none", ref = "np.einsum(p.sub, *a)", npstyle = true,
     cases = function()
       local cs = {}
       for _, e in ipairs({{"ij,jk", {{3, 4}, {4, 2}}}, {"i,i", {{5}, {5}}}, {"ii->i", {{3, 3}}}}) do
         local ops = {}
         for i, s in ipairs(e[2]) do ops[i] = G.make(s, "bool") end
         cs[#cs + 1] = {a = ops, p = {sub = e[1]}}
       end
       return cs
     end,
     call = function(a, _, _, p) return np.einsum(p.sub, table.unpack(a)) end})

-- Gradients: up to three operands as a, b, c.
local GRAD_EINSUM = {
  {"ij,jk->ik", {{2, 3}, {3, 4}}}, {"ii", {{3, 3}}}, {"ii->i", {{3, 3}}}, {"iij->j", {{2, 2, 3}}},
  {"i,j->ij", {{3}, {2}}}, {"...ij,...jk", {{2, 1, 3, 4}, {3, 4, 2}}}, {"ij,ij->ij", {{1, 3}, {2, 3}}},
  {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}}, {"ij,jk,ki", {{3, 4}, {4, 2}, {2, 3}}}, {"ijk,jil->kl", {{2, 3, 2}, {3, 2, 2}}},
  {"b...,b->...", {{3, 2, 2}, {3}}},
}
add({name = "einsum (grad)", out = "same", ref = "np.einsum(p.sub, *[x for x in (a, b, c) if x is not None])", tol = TOL,
     grad = {"a", "b", "c"},
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64"}) do
         for k, e in ipairs(GRAD_EINSUM) do
           local c = {p = {sub = e[1], opt = OPTS[(k - 1) % #OPTS + 1]}, layouts = {}}
           for i, s in ipairs(e[2]) do
             local nm = ({"a", "b", "c"})[i]
             c[nm], c.layouts[nm] = operand(s, dt)
           end
           cs[#cs + 1] = c
         end
       end
       return cs
     end,
     call = function(a, b, c, p)
       local args = {a, b, c}
       args[#args + 1] = {optimize = p.opt}
       return torch.einsum(p.sub, table.unpack(args))
     end})

-- tensordot: axes an integer or a pair of 1-based dim lists (negative from the end).
local TENSORDOT = {
  {{2, 3, 4}, {3, 4, 5}, 2}, {{2, 3}, {3, 4}, 1}, {{2, 3}, {4, 5}, 0}, {{3, 4, 2}, {4, 3, 5}, {{1, 2}, {2, 1}}},
  {{2, 3, 4}, {4, 2}, {{-1, 1}, {1, -1}}}, {{2, 0}, {0, 3}, 1}, {{3}, {3}, 1}, {{2, 3}, {3}, {{2}, {1}}},
}
local function tensordot_cases(dtypes)
  return function()
    local cs = {}
    for _, dt in ipairs(dtypes) do
      for _, t in ipairs(TENSORDOT) do
        cs[#cs + 1] = {a = operand(t[1], dt), b = operand(t[2], dt), p = {axes = t[3]}}
      end
    end
    return cs
  end
end
local TD_REF = "np.tensordot(a, b, axes=p.axes if isinstance(p.axes, int) else (ax(p.axes[0]), ax(p.axes[1])))"
add({name = "np.tensordot", out = "same", ref = TD_REF, tol = TOL, npstyle = true, cases = tensordot_cases(DTYPES),
     call = function(a, b, _, p)
       if p.axes == 2 then return np.tensordot(a, b) end
       if type(p.axes) == "table" then return np.tensordot(a, b, {axes = p.axes}) end
       return np.tensordot(a, b, p.axes)
     end})
add({name = "tensordot", out = "same", ref = TD_REF, tol = TOL, grad = {"a", "b"},
     cases = tensordot_cases({"float32", "float64"}),
     call = function(a, b, _, p)
       if type(p.axes) == "table" then return torch.tensordot(a, b, {dims = p.axes}) end
       return torch.tensordot(a, b, p.axes)
     end})

-- inner and kron over ranks 0 to 3.
local function pair_cases(shapes, dtypes)
  return function()
    local cs = {}
    for _, dt in ipairs(dtypes) do
      for _, s in ipairs(shapes) do cs[#cs + 1] = {a = operand(s[1], dt), b = operand(s[2], dt)} end
    end
    return cs
  end
end
local INNER = {{{4}, {4}}, {{2, 3}, {4, 3}}, {{2, 3, 4}, {4}}, {{3}, {2, 5, 3}}, {{}, {2, 3}}, {{2, 0}, {3, 0}}, {{0, 2}, {2}}}
add({name = "np.inner", out = "same", ref = "np.inner(a, b)", tol = TOL, npstyle = true, cases = pair_cases(INNER, DTYPES),
     call = function(a, b) return np.inner(a, b) end})
add({name = "inner", out = "same", ref = "np.inner(a, b)", tol = TOL, grad = {"a", "b"},
     cases = pair_cases(INNER, {"float32", "float64"}), call = function(a, b) return torch.inner(a, b) end})
local KRON = {{{2}, {3}}, {{2, 2}, {2, 3}}, {{2, 3}, {4}}, {{3}, {2, 2, 2}}, {{}, {2, 3}}, {{2, 0}, {3, 2}}, {{1, 2, 3}, {2, 1, 2}}}
add({name = "np.kron", out = "same", ref = "np.kron(a, b)", tol = TOL, npstyle = true, cases = pair_cases(KRON, DTYPES),
     call = function(a, b) return np.kron(a, b) end})
add({name = "kron", out = "same", ref = "np.kron(a, b)", tol = TOL, grad = {"a", "b"},
     cases = pair_cases(KRON, {"float32", "float64"}), call = function(a, b) return torch.kron(a, b) end})
