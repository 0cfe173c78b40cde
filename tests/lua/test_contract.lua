-- einsum / einsum_path / tensordot / inner / kron in both spellings: exact values (NumPy 1.24's
-- results), the contraction paths each optimize= strategy takes (NumPy's einsum_path, 1-based),
-- autograd through torch.einsum, and the error messages.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local np = np or require("numpy")

-- A path as "(1,2) (1,2)".
local function P(p)
  T.eq(p[1], "einsum_path")
  local s = {}
  for k = 2, #p do s[#s + 1] = "(" .. p[k][1] .. "," .. p[k][2] .. ")" end
  return table.concat(s, " ")
end

-- np.einsum_path(sub, ones of each shape[, kw]) as "(1,2) (1,2)".
local function path_of(sub, shapes, kw)
  local args = {}
  for i, s in ipairs(shapes) do args[i] = torch.ones(s) end
  args[#args + 1] = kw
  return P(np.einsum_path(sub, table.unpack(args)))
end

T.test("einsum: values as NumPy gives them", function()
  local a, b = torch.arange(6):reshape(2, 3), torch.arange(12):reshape(3, 4)
  T.eq(np.einsum("ij,jk", a, b):tolist(), {{20, 23, 26, 29}, {56, 68, 80, 92}})
  T.eq(np.einsum("ij,jk", a, b).dtype, "int64")
  T.eq(torch.einsum("ij,jk->ik", {a, b}):tolist(), {{20, 23, 26, 29}, {56, 68, 80, 92}})
  local m = torch.arange(9):reshape(3, 3)
  T.eq(np.einsum("ii", m):item(), 12)
  T.eq(np.einsum("ii->i", m):tolist(), {0, 4, 8})
  T.eq(np.einsum("ij->ji", a):tolist(), {{0, 3}, {1, 4}, {2, 5}})
  T.eq(np.einsum("ji", a):tolist(), {{0, 3}, {1, 4}, {2, 5}})  -- implicit output: labels in order
  T.eq(np.einsum("i,j", torch.tensor{1, 2}, torch.tensor{3, 4, 5}):tolist(), {{3, 4, 5}, {6, 8, 10}})
  T.eq(np.einsum("...ij,...jk", torch.arange(12.0):reshape(2, 2, 3), torch.arange(6.0):reshape(3, 2)):tolist(),
    {{{10, 13}, {28, 40}}, {{46, 67}, {64, 94}}})
  T.eq(np.einsum(" i j , j k -> i k ", a, b):tolist(), {{20, 23, 26, 29}, {56, 68, 80, 92}})  -- spaces ignored
  T.eq(np.einsum("ij,jk", torch.ones(2, 0), torch.ones(0, 3)):tolist(), {{0, 0, 0}, {0, 0, 0}})
  T.eq(np.einsum("ii->i", torch.ones(0, 0)).shape, {0})
  T.eq(np.einsum("ij,jk", torch.tensor{{true, false}}, torch.tensor{{false}, {true}}):tolist(), {{false}})
  T.eq(np.einsum("ij,jk", torch.tensor{{true, true}}, torch.tensor{{true}, {true}}):tolist(), {{true}})
  T.eq(np.einsum("ii", torch.ones(3, 3, {dtype = "int32"})).dtype, "int32")
  T.eq(np.einsum("i,i", torch.tensor{1, 2}, torch.tensor{0.5, 0.25}):item(), 1.0)  -- promoted to float32
end)

T.test("einsum: every strategy gives the same values; paths as NumPy's einsum_path", function()
  local x, y, z, w = torch.randn(2, 30), torch.randn(30, 4), torch.randn(4, 30), torch.randn(30, 5)
  local ref = x:mm(y):mm(z):mm(w)
  for _, opt in ipairs({false, true, "greedy", "optimal", {"einsum_path", {3, 4}, {1, 2}, {1, 2}}}) do
    T.near(np.einsum("ab,bc,cd,de->ae", x, y, z, w, {optimize = opt}), ref, 1e-4)
    T.near(torch.einsum("ab,bc,cd,de->ae", x, y, z, w, {optimize = opt}), ref, 1e-4)
  end
  T.eq(path_of("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}), "(2,3) (1,2)")  -- NumPy: (1,2), (0,1)
  T.eq(path_of("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}, {optimize = "optimal"}), "(1,2) (1,2)")
  T.eq(path_of("ab,bc,cd,de->ae", {{2, 30}, {30, 4}, {4, 30}, {30, 5}}), "(3,4) (1,2) (1,2)")
  T.eq(path_of("ab,bc,cd,de->ae", {{2, 30}, {30, 4}, {4, 30}, {30, 5}}, {optimize = "optimal"}),
    "(1,2) (1,3) (1,2)")
  T.eq(path_of("ab,bc,cd,de->ae", {{2, 30}, {30, 4}, {4, 30}, {30, 5}}, {optimize = false}),
    "(1,2) (1,3) (1,2)")
  local five = {{10, 10}, {10, 10}, {10, 10, 10, 10}, {10, 10}, {10, 10}}
  T.eq(path_of("ea,fb,abcd,gc,hd->efgh", five), "(1,3) (1,4) (1,3) (1,2)")
  T.eq(path_of("ea,fb,abcd,gc,hd->efgh", five, {optimize = "optimal"}), "(1,3) (1,4) (1,3) (1,2)")
  T.eq(path_of("i,j,k->ijk", {{2}, {30}, {3}}), "(1,3) (1,2)")  -- outer products: smallest first
end)

T.test("einsum: gradients through torch.einsum", function()
  local a = torch.tensor({{1.0, 2.0}, {3.0, 4.0}}, {requires_grad = true})
  local b = torch.tensor({{0.5, -1.0}, {2.0, 1.0}}, {requires_grad = true})
  torch.einsum("ij,jk->", a, b):backward()
  T.eq(a.grad:tolist(), {{-0.5, 3.0}, {-0.5, 3.0}})  -- the row sums of b
  T.eq(b.grad:tolist(), {{4.0, 4.0}, {6.0, 6.0}})     -- the column sums of a
  local m = torch.tensor({{1.0, 2.0}, {3.0, 4.0}}, {requires_grad = true})
  torch.einsum("ii", m):backward()
  T.eq(m.grad:tolist(), {{1.0, 0.0}, {0.0, 1.0}})
  local v = torch.tensor({1.0, 2.0}, {requires_grad = true})
  local g = torch.autograd.grad(torch.kron(v, v):sum(), {v})[1]
  T.eq(g:tolist(), {6.0, 6.0})
end)

T.test("tensordot, inner, kron: values as NumPy gives them", function()
  local a = torch.arange(24.0):reshape(2, 3, 4)
  T.eq(np.tensordot(a, torch.arange(12.0):reshape(3, 4)):tolist(), {506.0, 1298.0})
  T.eq(torch.tensordot(a, torch.arange(12.0):reshape(3, 4), 2):tolist(), {506.0, 1298.0})
  T.eq(np.tensordot(a, torch.arange(24.0):reshape(4, 3, 2), {{2, 3}, {2, 1}}):tolist(), {{880.0, 946.0}, {2464.0, 2674.0}})
  T.eq(np.tensordot(a, torch.arange(24.0):reshape(4, 3, 2), {axes = {{-2, -1}, {-2, 1}}}):tolist(),
    {{880.0, 946.0}, {2464.0, 2674.0}})
  T.eq(torch.tensordot(a, torch.arange(24.0):reshape(4, 3, 2), {dims = {{2, 3}, {2, 1}}}):tolist(),
    {{880.0, 946.0}, {2464.0, 2674.0}})
  T.eq(np.tensordot(torch.ones(2), torch.ones(3), 0).shape, {2, 3})
  T.eq(np.inner(torch.arange(6):reshape(2, 3), torch.arange(3)):tolist(), {5, 14})
  T.eq(torch.inner(torch.tensor(2.0), torch.tensor{1.0, 2.0}):tolist(), {2.0, 4.0})
  T.eq(np.kron(torch.tensor{{1, 2}, {3, 4}}, torch.tensor{{0, 1}, {1, 0}}):tolist(),
    {{0, 1, 0, 2}, {1, 0, 2, 0}, {0, 3, 0, 4}, {3, 0, 4, 0}})
  T.eq(torch.kron(torch.tensor{1, 2}, torch.tensor{{1}, {10}}):tolist(), {{1, 2}, {10, 20}})
end)

T.test("errors name the op and the values", function()
  local a, b = torch.ones(2, 3), torch.ones(4, 4)
  T.error(function() np.einsum("ij,jk", a, b) end, "np.einsum: subscript 'j' has size 3 in operand 1 and 4 in operand 2")
  T.error(function() torch.einsum("ij,jk", a, b) end, "einsum: subscript 'j' has size 3 in operand 1 and 4 in operand 2")
  T.error(function() np.einsum("ij,jk", a) end, "np.einsum: the subscripts 'ij,jk' are for 2 operands, but 1 was given")
  T.error(function() np.einsum("ijk", a) end, "np.einsum: operand 1 has 2 dims, but its subscripts 'ijk' name 3")
  T.error(function() np.einsum("ij...k", a) end, "np.einsum: operand 1 has 2 dims, but its subscripts 'ij...k' name 3 besides '...'")
  T.error(function() np.einsum("i1", a) end, "np.einsum: bad subscripts 'i1': '1' is not a letter (subscripts are a-z and A-Z)")
  T.error(function() np.einsum("i..j", a) end, "np.einsum: bad subscripts 'i..j': '.' only appears as '...'")
  T.error(function() np.einsum("...i...", a) end, "np.einsum: bad subscripts '...i...': '...' appears twice in one term")
  T.error(function() np.einsum("ij->i->j", a) end, "np.einsum: bad subscripts 'ij->i->j': '->' may appear once")
  T.error(function() np.einsum("ij->k", a) end, "np.einsum: output subscript 'k' does not appear in the inputs")
  T.error(function() np.einsum("ij->ii", a) end, "np.einsum: output subscript 'i' appears twice")
  T.error(function() np.einsum("ii", a) end, "np.einsum: subscript 'i' is repeated in operand 1 with sizes 2 and 3")
  T.error(function() np.einsum("...i->i", torch.ones(2, 3)) end,
    "np.einsum: the output 'i' has no '...', but '...' stands for 1 dims in the inputs")
  T.error(function() np.einsum("...i,...i", torch.ones(2, 3), torch.ones(4, 3)) end,
    "np.einsum: the dims under '...' have sizes 2 in operand 1 and 4 in operand 2 (they must broadcast)")
  T.error(function() np.einsum("ij", a, {optimize = "best"}) end,
    "np.einsum: optimize must be true, false, \"greedy\", \"optimal\" or a path {\"einsum_path\", {i, j}, ...}, got 'best'")
  T.error(function() np.einsum("i,i,i", torch.ones(2), torch.ones(2), torch.ones(2), {optimize = {"einsum_path", {1, 4}}}) end,
    "np.einsum: optimize path step 1 must be a pair {i, j} of positions 1 <= i < j <= 3")
  T.error(function() np.einsum("i,i,i", torch.ones(2), torch.ones(2), torch.ones(2), {optimize = {"einsum_path", {1, 2}}}) end,
    "np.einsum: optimize path leaves 2 operands uncontracted")
  T.error(function() np.einsum("ij", a, {optimise = true}) end, "np.einsum: unknown keyword 'optimise'")
  T.error(function() np.einsum("ij", 5) end, "np.einsum: operand 1 must be a tensor, got a number")
  T.error(function() np.einsum("ij") end, "np.einsum: expected at least one operand after the subscripts")
  T.error(function() np.einsum("i,i", torch.ones(2), nil, torch.ones(2)) end, "np.einsum: operand 2 is nil")
  T.error(function() np.einsum(5, a) end, "np.einsum: expected the subscripts (a string) as argument 1, got number")
  T.error(function() np.einsum_path("ij,jk", a, b) end, "np.einsum_path: subscript 'j' has size 3")
  T.error(function() np.tensordot(a, b, 1) end, "np.tensordot: dim 2 of a has size 3, but dim 1 of b has size 4")
  T.error(function() np.tensordot(a, b, 3) end, "np.tensordot: axes=3 must be between 0 and the dims of both operands (2 and 2)")
  T.error(function() np.tensordot(a, b, {{1}, {1, 2}}) end, "np.tensordot: the axes lists have different lengths (1 for a, 2 for b)")
  T.error(function() np.tensordot(a, b, {{3}, {1}}) end, "np.tensordot: dim 3 is out of range for a with 2 dims (1-based, negative from the end)")
  T.error(function() np.tensordot(a, a, {{1, 1}, {1, 2}}) end, "np.tensordot: a dim is repeated in axes")
  T.error(function() np.tensordot(a, b, "x") end, "np.tensordot: axes must be an integer or a pair of lists of dims {{...}, {...}}, got string")
  T.error(function() np.tensordot(a, b, {axis = 1}) end, "np.tensordot: unknown keyword 'axis'")
  T.error(function() torch.tensordot(a, b, {dim = 1}) end, "tensordot: unknown keyword 'dim'")
  T.error(function() np.inner(a, b) end, "np.inner: the last dims differ: 3 (a, shape {2,3}) and 4 (b, shape {4,4})")
  T.error(function() np.kron(a, "x") end, "np.kron: operand 2 must be a tensor, got a string")
  T.error(function() torch.kron(a) end, "kron: operand 2 must be a tensor, got nothing")
  T.error(function() np.inner(nil, a) end, "np.inner: operand 1 must be a tensor, got nothing")
  T.error(function() np.kron(a, a, a) end, "np.kron: takes 2 arguments, got 3")
  T.error(function() np.inner(a, a, a) end, "np.inner: takes 2 arguments, got 3")
  T.error(function() np.tensordot(a, a, 1, 2) end, "np.tensordot: takes 3 arguments, got 4")
  T.error(function() torch.kron(a, a, a) end, "kron")
end)

T.done()
