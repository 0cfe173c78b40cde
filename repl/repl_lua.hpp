// The Lua half of the REPL: result formatting, completion candidates and help(), compiled
// once when the REPL starts.
#pragma once

namespace tide::repl {
extern const char* const kReplLua;
}  // namespace tide::repl
