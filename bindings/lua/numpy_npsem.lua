-- NumPy's index constant (docs/translation.md, "Indexing"): np.newaxis in an index table
-- inserts a dim of size 1, as None does in NumPy (`a[{np.newaxis, ":"}]` is a[None, :]).
-- Lua lists cannot hold nil, so it is the string the index parser knows.
local np = ...

np.newaxis = "newaxis"
