-- Calls the API fuzzer found failing, kept as regression tests: run_api_fuzz.py --replay runs
-- each as a fuzzed call (same limits, same checks), and the suite fails if one dies, hangs,
-- leaks or allocates without limit. Each entry: {Lua source (with H = tests/fuzz/values.lua),
-- what went wrong}. Exact results are checked in the tests of the op (named in the note).
return {
  {"return torch.eye(2^53 + 1, -0.0)",
   "eye walked all 2^53 rows of an empty matrix (hang); tests/lua/test_creation.lua"},
  {"return np.count_nonzero(H.huge('bool', 1))",
   "count_nonzero over a huge expanded view ignored the interrupt (hang); tests/cpp/test_interrupt.cpp"},
  {"return M.nonzero(H.huge('float32', 4))",
   "nonzero over a huge expanded view ignored the interrupt (hang); tests/cpp/test_interrupt.cpp"},
  {"return M.tolist(H.huge('bool', 3))",
   "tolist of a {2^40, 0} view built 2^40 empty tables, deaf to the interrupt; tests/cpp/test_interrupt.cpp"},
  {"return torch.ones(1):expand(1 << 26):unbind()",
   "unbind of a 2^26-long expanded dim built its views in C++ past the memory limit; tests/lua/test_sizes.lua"},
  {"return torch.split(torch.ones(1):expand(1 << 26), 1)",
   "split(1) of a 2^26-long expanded dim, the same; tests/lua/test_sizes.lua"},
  {"return M.sub(H.t('bool', {1, 3}, 2), -2, math.mininteger)",
   "UBSan: an integer number times alpha overflowed int64 (now wraps as int64 tensors do); tests/lua/test_arguments.lua"},
  {"return M.round(H.t('float16', {}, 5), math.mininteger)",
   "UBSan: round negated decimals = INT64_MIN; tests/lua/test_arguments.lua"},
  {"return torch.linalg.pinv(H.t('bool', {3}, 5)[{{1, -1, 2}}], -2)",
   "UBSan: pinv read a 1-D tensor's size at index -1 before the decomposition rejected it"},
}
