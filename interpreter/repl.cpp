// The plain read-eval-print loop of the `tide` program, modelled on lua.c's: a line is
// tried as `return <line>` first (so `x` or `f(1), 2` print their values), then as a
// statement; a chunk whose syntax error is at "<eof>" is incomplete and continues on the
// next line with the ">> " prompt.
//
// The loop runs inside the program's protected main function, and a Lua error (out of
// memory) may unwind through it with longjmp, so the functions here hold no C++ objects
// with destructors: lines are accumulated on the Lua stack, as lua.c does.
#include "repl.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace tide::repl {
namespace {

constexpr const char* kPrompt1 = "> ";
constexpr const char* kPrompt2 = ">> ";
constexpr const char kEofMark[] = "<eof>";
constexpr size_t kEofMarkLen = sizeof(kEofMark) - 1;

bool g_interactive = false;  // stdin is a terminal: show prompts

// Shows the prompt (the global _PROMPT / _PROMPT2 when it is set) if stdin is a terminal.
void show_prompt(lua_State* L, bool first) {
  if (!g_interactive) return;
  lua_getglobal(L, first ? "_PROMPT" : "_PROMPT2");
  const char* p = lua_tostring(L, -1);
  fputs(p ? p : (first ? kPrompt1 : kPrompt2), stdout);
  fflush(stdout);
  lua_pop(L, 1);
}

// Reads one line of any length from stdin and pushes it without its newline. On the first
// line of a chunk, "=expr" is the old shorthand for "return expr". Returns false (pushing
// nothing) at end of input.
bool push_line(lua_State* L, bool first) {
  show_prompt(L, first);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char piece[1024];
  bool got_any = false;
  while (fgets(piece, sizeof piece, stdin) != nullptr) {
    got_any = true;
    size_t n = strlen(piece);
    bool end_of_line = n > 0 && piece[n - 1] == '\n';
    if (end_of_line) --n;
    luaL_addlstring(&b, piece, n);
    if (end_of_line) break;
  }
  luaL_pushresult(&b);
  if (!got_any) {
    lua_pop(L, 1);
    if (g_interactive) fputc('\n', stdout);  // end the prompt line on Ctrl-D
    return false;
  }
  if (first) {
    const char* line = lua_tostring(L, -1);
    if (line[0] == '=') {
      lua_pushfstring(L, "return %s", line + 1);
      lua_remove(L, -2);
    }
  }
  return true;
}

// True when `status` is a syntax error at the end of the input (the message is on top of
// the stack), i.e. the chunk is not finished yet.
bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len = 0;
  const char* msg = lua_tolstring(L, -1, &len);
  return msg && len >= kEofMarkLen && strcmp(msg + len - kEofMarkLen, kEofMark) == 0;
}

// With the line on top of the stack, tries to compile "return <line>;". On success the
// line is replaced by the compiled function; otherwise the stack is left as it was.
int try_as_expression(lua_State* L) {
  const char* line = lua_tostring(L, -1);
  const char* code = lua_pushfstring(L, "return %s;", line);
  int status = luaL_loadbuffer(L, code, strlen(code), "=stdin");
  if (status == LUA_OK) {
    lua_remove(L, -2);  // the "return ..." text
    lua_remove(L, -2);  // the line
  } else {
    lua_pop(L, 2);  // the error and the "return ..." text
  }
  return status;
}

// With the line on top of the stack, compiles it as a statement, reading continuation
// lines while it is incomplete. Replaces the text by the function (or the error).
int compile_statement(lua_State* L) {
  for (;;) {
    size_t len = 0;
    const char* code = lua_tolstring(L, -1, &len);
    int status = luaL_loadbuffer(L, code, len, "=stdin");
    // Done when complete, when not merely unfinished, or when the input ends (then the
    // "<eof>" syntax error is the result).
    if (!incomplete(L, status) || !push_line(L, false)) {
      lua_remove(L, -2);  // the text
      return status;
    }
    lua_remove(L, -2);  // the "<eof>" error
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);  // text .. "\n" .. new line
  }
}

// Reads and compiles the next chunk, leaving the function (or an error message) on the
// stack. Returns -1 at end of input.
int read_chunk(lua_State* L) {
  if (!push_line(L, true)) return -1;
  int status = try_as_expression(L);
  if (status != LUA_OK) status = compile_statement(L);
  return status;
}

void report(lua_State* L) {
  const char* msg = lua_tostring(L, -1);
  fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
  fflush(stderr);
  lua_pop(L, 1);
}

// Prints the values above `base` with the global `print`.
void print_results(lua_State* L, int base) {
  int n = lua_gettop(L) - base;
  if (n <= 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_getglobal(L, "print");
  lua_insert(L, base + 1);
  if (lua_pcall(L, n, 0, 0) != LUA_OK) {
    fprintf(stderr, "error calling 'print' (%s)\n", lua_tostring(L, -1));
    fflush(stderr);
    lua_pop(L, 1);
  }
}

}  // namespace

void run(lua_State* L, CallFn call) {
  g_interactive = isatty(fileno(stdin)) != 0;
  int base = lua_gettop(L);
  int status;
  while ((status = read_chunk(L)) != -1) {
    if (status == LUA_OK) status = call(L, 0, LUA_MULTRET);
    if (status == LUA_OK) {
      fflush(stdout);
      print_results(L, base);
    } else {
      fflush(stdout);
      report(L);
    }
    lua_settop(L, base);
  }
  lua_settop(L, base);
  fflush(stdout);
}

}  // namespace tide::repl
