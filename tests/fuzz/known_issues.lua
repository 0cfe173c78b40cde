-- Failures of the API fuzzer whose fixes are being made elsewhere (docs/fuzzing.md). A call
-- that matches an entry is not made: api_fuzz.lua prints "@@SKIP <i> <target> | <owner>"
-- instead, and run_api_fuzz.py counts the skipped calls per entry. An entry says which
-- targets it covers (covers(path)), a text the call's source must contain for it to apply
-- (optional, to skip evaluating the arguments twice) and when a call of one is skipped
-- (when(path, args), args a table with n); it goes away when its fix is merged (api_fuzz.lua known=0 makes every
-- call, to check).
-- The list is empty: every failure found so far is fixed and replayed from regressions.lua.
return {}
