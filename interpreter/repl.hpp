// The `tide` program's read-eval-print loop (a plain one: line editing, history and
// completion come with the REPL issue).
#pragma once
#include <lua.hpp>

namespace tide::repl {

// Runs a function with `narg` arguments on top of the stack the way the program runs every
// chunk: under a traceback message handler, with Ctrl-C turned into an "interrupted!" error.
// Returns a Lua status; on error the message is left on the stack.
using CallFn = int (*)(lua_State* L, int narg, int nres);

// Reads chunks from stdin until end of file and runs them. Each line is first tried as
// `return <line>` so that expressions print their values (through the global `print`);
// an incomplete chunk (a syntax error at "<eof>") continues on the next line; errors are
// printed to stderr and the loop goes on. Prompts ("> ", ">> ", or the globals _PROMPT and
// _PROMPT2) are shown only when stdin is a terminal.
void run(lua_State* L, CallFn call);

}  // namespace tide::repl
