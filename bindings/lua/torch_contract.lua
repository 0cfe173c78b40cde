-- Tensor contractions in both spellings' shared core (torch._contract, used by numpy_contract.lua
-- too) and their torch names: einsum, tensordot, inner, kron. Everything is composed of
-- differentiable ops (permute, reshape, expand, index_select, sum, bmm, mul), so autograd
-- comes for free, and every pairwise contraction runs through bmm (BLAS on the CPU).
--
-- einsum: subscripts are parsed into labels (letters; '...' becomes internal labels "@1".."@E"
-- aligned from the right, as broadcasting aligns dims). Each operand first loses its
-- repeated labels (diagonals) and the labels nobody else needs (summed); then pairs of operands
-- are contracted in the order of a path (left to right, greedy by intermediate size, or the
-- cheapest order by FLOPs), each pair permuted and reshaped to batch x M x K @ batch x K x N.
local torch = ...

local C = {}
torch._contract = C

local function fail(op, fmt, ...) error(op .. ": " .. string.format(fmt, ...), 0) end

-- A label for messages: 'j', or '...' for the ellipsis' internal labels.
local function show(l) return l:sub(1, 1) == "@" and "'...'" or "'" .. l .. "'" end

-- The labels of one term ("ij", "i...j"); e_dims: how many dims '...' stands for, nil when the
-- term has none.
local function term_labels(op, subscripts, term)
  local labels, ell, k = {}, nil, 1
  while k <= #term do
    local c = term:sub(k, k)
    if c == "." then
      if term:sub(k, k + 2) ~= "..." then fail(op, "bad subscripts '%s': '.' only appears as '...'", subscripts) end
      if ell then fail(op, "bad subscripts '%s': '...' appears twice in one term", subscripts) end
      ell = #labels + 1
      k = k + 3
    elseif c:match("%a") then
      labels[#labels + 1] = c
      k = k + 1
    else
      fail(op, "bad subscripts '%s': '%s' is not a letter (subscripts are a-z and A-Z)", subscripts, c)
    end
  end
  return labels, ell
end

-- Parses subscripts against the operands' dims: the label lists per operand (ellipsis
-- expanded), the output labels, and the size of every label (broadcast: 1 meets n).
local function parse(op, subscripts, ndims, shapes)
  if type(subscripts) ~= "string" then fail(op, "expected the subscripts (a string) as argument 1, got %s", type(subscripts)) end
  local s = subscripts:gsub("%s", "")
  local lhs, rhs = s:match("^(.-)%->(.*)$")
  if not lhs then lhs = s end
  if lhs:find("[%->]") or (rhs and rhs:find("[%->]")) then
    fail(op, "bad subscripts '%s': '->' may appear once, between the inputs and the output", subscripts)
  end
  local terms = {}
  for term in (lhs .. ","):gmatch("([^,]*),") do terms[#terms + 1] = term end
  if #terms ~= #ndims then
    fail(op, "the subscripts '%s' are for %d operand%s, but %d %s given", subscripts, #terms, #terms == 1 and "" or "s",
      #ndims, #ndims == 1 and "was" or "were")
  end
  local E = 0
  local parsed = {}
  for i, term in ipairs(terms) do
    local labels, ell = term_labels(op, subscripts, term)
    if ell then
      if #labels > ndims[i] then
        fail(op, "operand %d has %d dims, but its subscripts '%s' name %d besides '...'", i, ndims[i], term, #labels)
      end
      E = math.max(E, ndims[i] - #labels)
    elseif #labels ~= ndims[i] then
      fail(op, "operand %d has %d dims, but its subscripts '%s' name %d", i, ndims[i], term, #labels)
    end
    parsed[i] = {labels, ell}
  end
  local lists, sizes, where, count = {}, {}, {}, {}
  for i, p in ipairs(parsed) do
    local labels, ell = p[1], p[2]
    local list = {}
    for k = 1, (ell or #labels + 1) - 1 do list[#list + 1] = labels[k] end
    if ell then
      local e = ndims[i] - #labels
      for k = E - e + 1, E do list[#list + 1] = "@" .. k end
      for k = ell, #labels do list[#list + 1] = labels[k] end
    end
    local seen = {}
    for d, l in ipairs(list) do
      local n = shapes[i][d]
      if seen[l] and seen[l] ~= n then
        fail(op, "subscript %s is repeated in operand %d with sizes %d and %d", show(l), i, seen[l], n)
      end
      seen[l] = n
      count[l] = (count[l] or 0) + 1
      if sizes[l] == nil or sizes[l] == 1 then
        if sizes[l] == nil or n ~= 1 then sizes[l], where[l] = n, i end
      elseif n ~= 1 and n ~= sizes[l] then
        if l:sub(1, 1) == "@" then
          fail(op, "the dims under '...' have sizes %d in operand %d and %d in operand %d (they must broadcast)",
            sizes[l], where[l], n, i)
        end
        fail(op, "subscript '%s' has size %d in operand %d and %d in operand %d", l, sizes[l], where[l], n, i)
      end
    end
    lists[i] = list
  end
  local out = {}
  if rhs then
    local labels, ell = term_labels(op, subscripts, rhs)
    if not ell and E > 0 then
      fail(op, "the output '%s' has no '...', but '...' stands for %d dims in the inputs", rhs, E)
    end
    for k = 1, (ell or #labels + 1) - 1 do out[#out + 1] = labels[k] end
    if ell then
      for k = 1, E do out[#out + 1] = "@" .. k end
      for k = ell, #labels do out[#out + 1] = labels[k] end
    end
    local seen = {}
    for _, l in ipairs(out) do
      if l:sub(1, 1) ~= "@" then
        if not sizes[l] then fail(op, "output subscript '%s' does not appear in the inputs", l) end
        if seen[l] then fail(op, "output subscript '%s' appears twice", l) end
      end
      seen[l] = true
    end
  else  -- implicit: '...' first, then the labels seen exactly once, in ASCII order (A-Z before a-z)
    for k = 1, E do out[#out + 1] = "@" .. k end
    local once = {}
    for l, c in pairs(count) do
      if c == 1 and l:sub(1, 1) ~= "@" then once[#once + 1] = l end
    end
    table.sort(once)
    for _, l in ipairs(once) do out[#out + 1] = l end
  end
  return lists, out, sizes
end

-- The product of the sizes of a set of labels.
local function volume(set, sizes)
  local v = 1
  for l in pairs(set) do v = v * sizes[l] end
  return v
end

local function set_of(list)
  local s = {}
  for _, l in ipairs(list) do s[l] = true end
  return s
end

-- The labels of the result of contracting sets a and b when `others` (sets) and `out` remain.
local function result_set(a, b, others, out)
  local r = {}
  for _, s in ipairs({a, b}) do
    for l in pairs(s) do
      local keep = out[l]
      for _, o in ipairs(others) do keep = keep or o[l] end
      if keep then r[l] = true end
    end
  end
  return r
end

-- Everything but positions i and j of sets.
local function without(sets, i, j)
  local r = {}
  for k, s in ipairs(sets) do
    if k ~= i and k ~= j then r[#r + 1] = s end
  end
  return r
end

local function union(a, b)
  local r = {}
  for l in pairs(a) do r[l] = true end
  for l in pairs(b) do r[l] = true end
  return r
end

-- A contraction path in NumPy's einsum_path form (1-based): each step {i, j} contracts the
-- operands at positions i < j of the current list, removes them and appends the result.
-- "left": 1 with 2, that with 3, ...; "greedy": at each step the pair sharing labels whose
-- result shrinks the sizes most (opt_einsum's greedy; outer products last, smallest first);
-- "optimal": the order with the fewest multiply-adds over all orders (up to 6 operands,
-- greedy beyond).
local function contraction_path(sets, out, sizes, how)
  local path = {}
  sets = {table.unpack(sets)}
  if how == "optimal" and #sets > 6 then how = "greedy" end
  if how == "optimal" then
    local best, best_cost = nil, math.huge
    local function search(cur, cost, steps)
      if cost >= best_cost then return end
      if #cur == 1 then
        best, best_cost = {table.unpack(steps)}, cost
        return
      end
      for i = 1, #cur - 1 do
        for j = i + 1, #cur do
          local others = without(cur, i, j)
          local r = result_set(cur[i], cur[j], others, out)
          local nxt = {table.unpack(others)}
          nxt[#nxt + 1] = r
          steps[#steps + 1] = {i, j}
          search(nxt, cost + volume(union(cur[i], cur[j]), sizes), steps)
          steps[#steps] = nil
        end
      end
    end
    search(sets, 0, {})
    return best or {}
  end
  while #sets > 1 do
    local bi, bj = 1, #path == 0 and 2 or #sets  -- "left": the running result (last) with the next
    if how == "greedy" then
      local best
      bi = nil
      for i = 1, #sets - 1 do  -- pairs sharing a label: the one whose result grows least
        for j = i + 1, #sets do
          local shared = false
          for l in pairs(sets[i]) do shared = shared or sets[j][l] ~= nil end
          if shared then
            local r = result_set(sets[i], sets[j], without(sets, i, j), out)
            local cost = volume(r, sizes) - volume(sets[i], sizes) - volume(sets[j], sizes)
            if not best or cost < best then best, bi, bj = cost, i, j end
          end
        end
      end
      if not bi then  -- only outer products left: the smallest first
        for i = 1, #sets - 1 do
          for j = i + 1, #sets do
            local cost = volume(sets[i], sizes) * volume(sets[j], sizes)
            if not best or cost < best then best, bi, bj = cost, i, j end
          end
        end
      end
    end
    local r = result_set(sets[bi], sets[bj], without(sets, bi, bj), out)
    path[#path + 1] = {bi, bj}
    sets = without(sets, bi, bj)
    sets[#sets + 1] = r
  end
  return path
end

-- Position of l in list, or nil.
local function index_of(list, l)
  for k, v in ipairs(list) do
    if v == l then return k end
  end
end

-- Operand {t = tensor, labels = {...}} without repeated labels: each repeat taken as a
-- diagonal (the two dims moved last, flattened, every (n+1)-th element), label kept once, last.
local function take_diagonals(x)
  local k = 1
  while k <= #x.labels do
    local l = x.labels[k]
    local j
    for m = k + 1, #x.labels do
      if x.labels[m] == l then j = m break end
    end
    if j then
      local perm, labels, shape = {}, {}, {}
      for m = 1, #x.labels do
        if m ~= k and m ~= j then
          perm[#perm + 1] = m
          labels[#labels + 1] = x.labels[m]
          shape[#shape + 1] = x.t:size(m)
        end
      end
      perm[#perm + 1], perm[#perm + 2] = k, j
      local n = x.t:size(k)
      shape[#shape + 1] = n * n
      local flat = x.t:permute(perm):reshape(shape)
      x.t = flat:index_select(-1, torch.arange(1, n * n + 1, n + 1))
      labels[#labels + 1] = l
      x.labels = labels
    else
      k = k + 1
    end
  end
end

-- Sums the dims of x whose labels are not in keep (a set).
local function sum_unneeded(x, keep)
  local dims, labels = {}, {}
  for d, l in ipairs(x.labels) do
    if keep[l] then labels[#labels + 1] = l else dims[#dims + 1] = d end
  end
  if #dims > 0 then
    x.t = x.t:sum(dims, {dtype = x.t.dtype})  -- integers keep their dtype, as NumPy and PyTorch do in einsum
    x.labels = labels
  end
end

-- x's dims reordered as `order` (labels), each expanded to sizes[l] where `grow` says so, and
-- reshaped to the products of the groups' sizes.
local function arrange(x, groups, sizes, grow)
  local perm, shape, flat = {}, {}, {}
  for _, g in ipairs(groups) do
    local n = 1
    for _, l in ipairs(g) do
      local d = index_of(x.labels, l)
      perm[#perm + 1] = d
      local s = grow[l] and sizes[l] or x.t:size(d)
      shape[#shape + 1] = s
      n = n * s
    end
    flat[#flat + 1] = n
  end
  local t = x.t
  if #perm > 0 then t = t:permute(perm) end
  return t:expand(shape):reshape(flat), shape
end

-- The contraction of operands a and b keeping the labels in keep (a set): batch x M x K @
-- batch x K x N through bmm.
local function contract_pair(a, b, keep, sizes)
  local batch, con, aonly, bonly = {}, {}, {}, {}
  local inb = set_of(b.labels)
  for _, l in ipairs(a.labels) do
    if inb[l] then
      if keep[l] then batch[#batch + 1] = l else con[#con + 1] = l end
    else
      aonly[#aonly + 1] = l
    end
  end
  local ina = set_of(a.labels)
  for _, l in ipairs(b.labels) do
    if not ina[l] then bonly[#bonly + 1] = l end
  end
  local grow = {}
  for _, l in ipairs(batch) do grow[l] = true end
  for _, l in ipairs(con) do grow[l] = true end
  local A, ashape = arrange(a, {batch, aonly, con}, sizes, grow)
  local B, bshape = arrange(b, {batch, con, bonly}, sizes, grow)
  local R = torch.bmm(A, B)
  local shape, labels = {}, {}
  for k, l in ipairs(batch) do shape[#shape + 1], labels[#labels + 1] = ashape[k], l end
  for k, l in ipairs(aonly) do shape[#shape + 1], labels[#labels + 1] = ashape[#batch + k], l end
  for k, l in ipairs(bonly) do shape[#shape + 1], labels[#labels + 1] = bshape[#batch + #con + k], l end
  return {t = R:reshape(shape), labels = labels}
end

-- optimize= as a path strategy: false -> "left", true/"greedy", "optimal", or an explicit
-- path {"einsum_path", {1, 2}, ...} checked against the operand count.
function C.strategy(op, optimize, n)
  if optimize == nil then return nil end
  if optimize == false then return "left" end
  if optimize == true or optimize == "greedy" then return "greedy" end
  if optimize == "optimal" then return "optimal" end
  if type(optimize) == "table" and optimize[1] == "einsum_path" then
    local left = n
    for k = 2, #optimize do
      local s = optimize[k]
      if type(s) ~= "table" or #s ~= 2 or math.type(s[1]) ~= "integer" or math.type(s[2]) ~= "integer" or s[1] < 1
        or s[1] >= s[2] or s[2] > left then
        fail(op, "optimize path step %d must be a pair {i, j} of positions 1 <= i < j <= %d", k - 1, left)
      end
      left = left - 1
    end
    if left ~= 1 and n > 1 then fail(op, "optimize path leaves %d operands uncontracted", left) end
    return optimize
  end
  fail(op, "optimize must be true, false, \"greedy\", \"optimal\" or a path {\"einsum_path\", {i, j}, ...}, got %s",
    type(optimize) == "string" and "'" .. optimize .. "'" or tostring(optimize))
end

-- tensors[1..n] are tensors on one device (n: #tensors unless given, for lists with holes).
local function check_tensors(op, tensors, n)
  for i = 1, n or #tensors do
    local t = tensors[i]
    if not torch.is_tensor(t) then fail(op, "operand %d must be a tensor, got %s", i, t == nil and "nothing" or "a " .. type(t)) end
  end
  for i = 2, #tensors do
    if tensors[i].device ~= tensors[1].device then
      fail(op, "expected all operands on one device, got %s and %s", tensors[1].device, tensors[i].device)
    end
  end
end

-- The path einsum would take: parse, then the strategy's path.
function C.einsum_path(op, subscripts, tensors, how)
  if type(tensors) ~= "table" or torch.is_tensor(tensors) then fail(tostring(op), "expected a list of operands") end
  check_tensors(op, tensors)
  local ndims, shapes = {}, {}
  for i, t in ipairs(tensors) do ndims[i], shapes[i] = t:dim(), t.shape end
  local lists, out, sizes = parse(op, subscripts, ndims, shapes)
  local sets = {}
  for i, l in ipairs(lists) do sets[i] = set_of(l) end
  if type(how) == "table" then
    local p = {}
    for k = 2, #how do p[#p + 1] = {how[k][1], how[k][2]} end
    return p, lists, out, sizes
  end
  return contraction_path(sets, set_of(out), sizes, how), lists, out, sizes
end

-- einsum(subscripts, tensors) with strategy `how` (C.strategy's result).
function C.einsum(op, subscripts, tensors, how)
  local path, lists, out, sizes = C.einsum_path(op, subscripts, tensors, how)
  local dtype = tensors[1].dtype
  for i = 2, #tensors do dtype = torch.promote_types(dtype, tensors[i].dtype) end
  local work = dtype == "bool" and "int64" or dtype  -- bool: counted in int64, then any
  local ops = {}
  for i, t in ipairs(tensors) do
    ops[i] = {t = t.dtype == work and t or t:to(work), labels = {table.unpack(lists[i])}}
    take_diagonals(ops[i])
  end
  local outset = set_of(out)
  -- The labels operand i's neighbours or the output need.
  local function needed(skip_i, skip_j)
    local keep = {}
    for l in pairs(outset) do keep[l] = true end
    for k, o in ipairs(ops) do
      if k ~= skip_i and k ~= skip_j then
        for _, l in ipairs(o.labels) do keep[l] = true end
      end
    end
    return keep
  end
  for _, step in ipairs(path) do
    local i, j = step[1], step[2]
    local a, b = ops[i], ops[j]
    local keep = needed(i, j)
    sum_unneeded(a, union(keep, set_of(b.labels)))
    sum_unneeded(b, union(keep, set_of(a.labels)))
    local r = contract_pair(a, b, keep, sizes)
    table.remove(ops, j)
    table.remove(ops, i)
    ops[#ops + 1] = r
  end
  local x = ops[1]
  sum_unneeded(x, outset)
  local perm, shape = {}, {}
  for k, l in ipairs(out) do
    perm[k] = index_of(x.labels, l)
    shape[k] = sizes[l]
  end
  local t = x.t
  if #perm > 0 then t = t:permute(perm) end
  t = t:expand(shape)
  if dtype == "bool" then t = t:ne(0) end
  return t
end

-- Splits einsum's arguments: the tensors (varargs, or one list of them) and the keyword table.
function C.einsum_args(op, subscripts, ...)
  local args = table.pack(...)
  while args.n > 0 and args[args.n] == nil do args.n = args.n - 1 end  -- trailing nils are absent
  local kw = {}
  local last = args[args.n]
  if args.n > 0 and type(last) == "table" and not torch.is_tensor(last) and not torch.is_tensor(last[1]) then
    kw = last
    args.n = args.n - 1
  end
  local tensors = {}
  if args.n == 1 and type(args[1]) == "table" and not torch.is_tensor(args[1]) then  -- einsum(eq, {a, b})
    for i, t in ipairs(args[1]) do tensors[i] = t end
  else
    for i = 1, args.n do
      if args[i] == nil then fail(op, "operand %d is nil", i) end
      tensors[i] = args[i]
    end
  end
  if #tensors == 0 then fail(op, "expected at least one operand after the subscripts") end
  torch._check_keywords(op, kw, {"optimize"})
  return tensors, kw
end

-- The labels of tensordot(a, b, axes): a's dims then b's, the contracted pairs sharing labels.
-- axes: an integer n (a's last n dims with b's first n) or {{dims of a}, {dims of b}} (1-based,
-- negative from the end).
function C.tensordot(op, a, b, axes)
  check_tensors(op, {a, b}, 2)
  local da, db = {}, {}
  if math.type(axes) == "integer" then
    if axes < 0 or axes > a:dim() or axes > b:dim() then
      fail(op, "axes=%d must be between 0 and the dims of both operands (%d and %d)", axes, a:dim(), b:dim())
    end
    for k = 1, axes do da[k], db[k] = a:dim() - axes + k, k end
  elseif type(axes) == "table" and type(axes[1]) == "table" and type(axes[2]) == "table" and axes[3] == nil then
    if #axes[1] ~= #axes[2] then
      fail(op, "the axes lists have different lengths (%d for a, %d for b)", #axes[1], #axes[2])
    end
    for k, v in ipairs(axes[1]) do da[k] = v end
    for k, v in ipairs(axes[2]) do db[k] = v end
  elseif type(axes) == "table" and math.type(axes[1]) == "integer" and math.type(axes[2]) == "integer" and axes[3] == nil then
    da, db = {axes[1]}, {axes[2]}
  else
    fail(op, "axes must be an integer or a pair of lists of dims {{...}, {...}}, got %s", type(axes))
  end
  local function norm(d, t, which)
    if math.type(d) ~= "integer" or d == 0 or d > t:dim() or d < -t:dim() then
      fail(op, "dim %s is out of range for %s with %d dims (1-based, negative from the end)", tostring(d), which, t:dim())
    end
    return d < 0 and d + t:dim() + 1 or d
  end
  local la, lb, used_a, used_b = {}, {}, {}, {}
  for d = 1, a:dim() do la[d] = "a" .. d end
  for d = 1, b:dim() do lb[d] = "b" .. d end
  for k = 1, #da do
    local i, j = norm(da[k], a, "a"), norm(db[k], b, "b")
    if used_a[i] or used_b[j] then fail(op, "a dim is repeated in axes") end
    used_a[i], used_b[j] = true, true
    if a:size(i) ~= b:size(j) then
      fail(op, "dim %d of a has size %d, but dim %d of b has size %d", i, a:size(i), j, b:size(j))
    end
    lb[j] = la[i]
  end
  local out = {}
  for d = 1, a:dim() do
    if not used_a[d] then out[#out + 1] = la[d] end
  end
  for d = 1, b:dim() do
    if not used_b[d] then out[#out + 1] = lb[d] end
  end
  local sizes = {}
  for d = 1, a:dim() do sizes[la[d]] = a:size(d) end
  for d = 1, b:dim() do sizes[lb[d]] = b:size(d) end
  local dtype = torch.promote_types(a.dtype, b.dtype)
  local work = dtype == "bool" and "int64" or dtype
  local x = contract_pair({t = a:to(work), labels = la}, {t = b:to(work), labels = lb}, set_of(out), sizes)
  local perm = {}
  for k, l in ipairs(out) do perm[k] = index_of(x.labels, l) end
  local t = #perm > 0 and x.t:permute(perm) or x.t
  return dtype == "bool" and t:ne(0) or t
end

-- inner(a, b): the sum over the last dims (a scalar operand multiplies).
function C.inner(op, a, b)
  check_tensors(op, {a, b}, 2)
  if a:dim() == 0 or b:dim() == 0 then return a * b end
  if a:size(-1) ~= b:size(-1) then
    fail(op, "the last dims differ: %d (a, shape {%s}) and %d (b, shape {%s})", a:size(-1),
      table.concat(a.shape, ","), b:size(-1), table.concat(b.shape, ","))
  end
  return C.tensordot(op, a, b, {{-1}, {-1}})
end

-- kron(a, b): the Kronecker product (blocks a[i] * b), shapes aligned from the right.
function C.kron(op, a, b)
  check_tensors(op, {a, b}, 2)
  local nd = math.max(a:dim(), b:dim())
  local sa, sb = {}, {}
  for k = 1, nd do
    sa[k] = k > nd - a:dim() and a:size(k - nd + a:dim()) or 1
    sb[k] = k > nd - b:dim() and b:size(k - nd + b:dim()) or 1
  end
  local ra, rb, out = {}, {}, {}
  for k = 1, nd do
    ra[2 * k - 1], ra[2 * k] = sa[k], 1
    rb[2 * k - 1], rb[2 * k] = 1, sb[k]
    out[k] = sa[k] * sb[k]
  end
  return (a:reshape(ra) * b:reshape(rb)):reshape(out)
end

-- The torch spellings.
function torch.einsum(equation, ...)
  local tensors, kw = C.einsum_args("einsum", equation, ...)
  local how = C.strategy("einsum", kw.optimize, #tensors) or "greedy"
  return C.einsum("einsum", equation, tensors, how)
end

function torch.tensordot(a, b, dims)
  local axes = dims
  if type(dims) == "table" and not torch.is_tensor(dims) and dims[1] == nil then  -- {dims=}
    torch._check_keywords("tensordot", dims, {"dims"})
    axes = dims.dims
  end
  if axes == nil then axes = 2 end
  return C.tensordot("tensordot", a, b, axes)
end

function torch.inner(a, b) return C.inner("inner", a, b) end

function torch.kron(a, b) return C.kron("kron", a, b) end
