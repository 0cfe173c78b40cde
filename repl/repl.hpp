// The `tide` program's interactive read-eval-print loop: line editing, history and Tab
// completion through libedit when stdin is a terminal (plain reading otherwise), pretty
// results, short tracebacks, help(), and Ctrl-C that cancels the line being typed.
//
// This layer sees only Lua: it reaches tensors, modules and docs through the torch module.
#pragma once
#include <lua.hpp>

namespace tide::repl {

// Runs a function with `narg` arguments on top of the stack the way the program runs every
// chunk: under a traceback message handler, with Ctrl-C turned into an "interrupted" error
// (in Lua code and in the engine). Returns a Lua status; on error the message is left on
// the stack.
using CallFn = int (*)(lua_State* L, int narg, int nres);

// Reads chunks until end of input (Ctrl-D) and runs them with `call`:
// - a line is tried as `return <line>` first, so expressions print all their values
//   (tensors and modules in their pretty form, plain tables as {...}); statements run
//   silently, and a `local` is explained (it lasts only for its own chunk);
// - an unfinished chunk continues on the next line (prompt ">> " or the global _PROMPT2);
// - errors print their message and a short traceback on stderr, and the loop goes on;
// - `?expr` is `help(expr)`; the global `help` is defined for the session.
// When stdin is not a terminal there are no prompts and no escape codes. The history file
// is $TIDE_HISTORY, else ~/.tide_history (the last 1000 lines).
void run(lua_State* L, CallFn call);

}  // namespace tide::repl
