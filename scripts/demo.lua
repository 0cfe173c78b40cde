-- tide's main demo: NumPy-style and PyTorch-style array programs in Lua.
--   1. the handwritten digits (data/digits.csv.gz, 1797 8x8 images) read with np.loadtxt,
--      split into train and test, classified by ridge regression solved with LAPACK;
--   2. the seed two-layer network trained by explicit backpropagation, timed.
-- Run: build/tide scripts/demo.lua
local dir = (arg and arg[0] and arg[0]:match("(.*/)")) or "./"
local clock = torch.utils.clock

print("== digits: ridge-regression classifier ==")
local t0 = clock()
local data = np.loadtxt(dir .. "../data/digits.csv.gz", {delimiter = ","})
local n = data:size(1)
local X = data[{":", {1, 64}}] / 16.0                  -- pixels 0..16 -> 0..1
local labels = data[{":", 65}]:long()                  -- digits 0..9
print(string.format("loaded %d images of %d pixels in %.1f ms", n, X:size(2), (clock() - t0) * 1000))

torch.manual_seed(0)
local perm = torch.randperm(n)                         -- a permutation of 1..n
local n_train = math.floor(n * 0.8)
local train_idx, test_idx = perm[{{1, n_train}}], perm[{{n_train + 1, n}}]
local Xtr, Xte = X:index_select(1, train_idx), X:index_select(1, test_idx)
local ytr, yte = labels:index_select(1, train_idx), labels:index_select(1, test_idx)

-- One-hot targets: Y[i, label + 1] = 1 (class columns are 1-based).
local Y = torch.zeros(n_train, 10, {dtype = "float64"})
Y:scatter_(2, (ytr + 1):unsqueeze(2), 1.0)

-- W = (X^T X + lambda I)^-1 X^T Y, with a bias column of ones.
local function with_bias(A) return torch.cat({A, torch.ones(A:size(1), 1, {dtype = "float64"})}, 2) end
local A = with_bias(Xtr)
local lambda = 1e-2
local W = torch.linalg.solve(A.T:mm(A) + torch.eye(A:size(2), {dtype = "float64"}) * lambda, A.T:mm(Y))
local pred = with_bias(Xte):mm(W):argmax(2) - 1       -- argmax is 1-based
local accuracy = pred:eq(yte):double():mean():item()
print(string.format("test accuracy: %.1f%% on %d held-out images", accuracy * 100, n - n_train))

print("== two-layer network, explicit backprop (N=64, D_in=1000, H=100, D_out=10) ==")
for _, dtype in ipairs({"float64", "float32"}) do
  torch.manual_seed(0)
  local N, D_in, H, D_out = 64, 1000, 100, 10
  local x = torch.randn(N, D_in, {dtype = dtype})
  local y = torch.randn(N, D_out, {dtype = dtype})
  local w1 = torch.randn(D_in, H, {dtype = dtype})
  local w2 = torch.randn(H, D_out, {dtype = dtype})
  local learning_rate = 1e-6
  local start = clock()
  local loss
  for t = 1, 500 do
    local h = x:mm(w1)
    local h_relu = h:clamp{min = 0}
    local y_pred = h_relu:mm(w2)
    loss = (y_pred - y):pow(2):sum():item()
    local grad_y_pred = (y_pred - y) * 2.0
    local grad_w2 = h_relu:t():mm(grad_y_pred)
    local grad_h_relu = grad_y_pred:mm(w2:t())
    local grad_h = grad_h_relu:clone()
    grad_h[h:lt(0)] = 0
    local grad_w1 = x:t():mm(grad_h)
    w1:sub_(grad_w1 * learning_rate)
    w2:sub_(grad_w2 * learning_rate)
  end
  print(string.format("%-8s final loss %.6g, 500 steps in %.0f ms", dtype, loss, (clock() - start) * 1000))
end
