// The read-eval-print loop of the `tide` program, modelled on lua.c's: a line is tried as
// `return <line>` first (so `x` or `f(1), 2` print their values), then as a statement; a
// chunk whose syntax error is at "<eof>" is incomplete and continues on the next line.
// Formatting, completion candidates and help() are written in Lua (repl_lua.cpp); this
// file reads lines (libedit or plain stdin), keeps the history and runs the chunks.
//
// The loop runs inside the program's protected main function, and a Lua error (out of
// memory) may unwind through it with longjmp, so the functions here hold no C++ objects
// with destructors: lines are accumulated on the Lua stack, as lua.c does. The libedit
// callbacks (completion) reach Lua only through lua_pcall.
#include "repl.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <climits>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>

#ifdef TIDE_HAVE_LIBEDIT
#include <histedit.h>
#endif

#include "repl_lua.hpp"
#include "tensor/interrupt.hpp"

namespace tide::repl {
namespace {

constexpr const char* kPrompt1 = "> ";
constexpr const char* kPrompt2 = ">> ";
constexpr const char kEofMark[] = "<eof>";
constexpr size_t kEofMarkLen = sizeof(kEofMark) - 1;
constexpr int kHistoryLines = 1000;
constexpr int kMaxListed = 100;  // completion candidates shown at most

bool g_interactive = false;          // stdin is a terminal: show prompts
int g_helper = LUA_NOREF;            // the table returned by kReplLua, in the registry
volatile sig_atomic_t g_sigint = 0;  // Ctrl-C arrived while a line was being read
char g_prompt[256];                  // the prompt shown now

enum class Read { Line, End, Cancel };

// ---- the Lua helper -------------------------------------------------------------------

// Calls helper.<name> with the `nargs` values on top of the stack, in protected mode.
// Leaves `nres` results (true) or prints why it failed and leaves nothing (false).
bool call_helper(lua_State* L, const char* name, int nargs, int nres) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, g_helper);
  if (lua_type(L, -1) != LUA_TTABLE) {
    lua_pop(L, nargs + 1);
    return false;
  }
  lua_getfield(L, -1, name);
  lua_remove(L, -2);
  lua_insert(L, -nargs - 1);
  if (lua_pcall(L, nargs, nres, 0) == LUA_OK) return true;
  fprintf(stderr, "tide repl: %s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object)");
  fflush(stderr);
  lua_pop(L, 1);
  return false;
}

// Compiles the helper, keeps it in the registry and defines the global `help`.
void load_helper(lua_State* L) {
  if (luaL_loadbuffer(L, kReplLua, strlen(kReplLua), "=[tide repl]") != LUA_OK ||
      lua_pcall(L, 0, 1, 0) != LUA_OK) {
    fprintf(stderr, "tide repl: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return;
  }
  lua_getfield(L, -1, "help");
  lua_setglobal(L, "help");
  g_helper = luaL_ref(L, LUA_REGISTRYINDEX);
}

// ---- prompts and Ctrl-C at the prompt ---------------------------------------------------

// The prompt for the first or a continuation line: the global _PROMPT / _PROMPT2 if set.
const char* prompt_text(lua_State* L, bool first) {
  lua_getglobal(L, first ? "_PROMPT" : "_PROMPT2");
  const char* p = lua_tostring(L, -1);
  snprintf(g_prompt, sizeof g_prompt, "%s", p ? p : (first ? kPrompt1 : kPrompt2));
  lua_pop(L, 1);
  return g_prompt;
}

// SIGINT while waiting for input: the reader sees the flag (the read fails with EINTR,
// as the handler is installed without SA_RESTART) and drops the pending chunk. On a worker
// thread (libedit's own handler re-raises the signal to the process, and the reading thread
// blocks it then) it is sent on to the reading thread, whose wait it must end.
void on_prompt_sigint(int sig) {
  if (tide::forward_to_interrupt_thread(sig)) return;
  g_sigint = 1;
}

struct sigaction g_saved_sigint;

void install_prompt_sigint() {
  struct sigaction sa;
  sa.sa_handler = on_prompt_sigint;
  sa.sa_flags = 0;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_saved_sigint);
}

// ---- libedit --------------------------------------------------------------------------

#ifdef TIDE_HAVE_LIBEDIT
EditLine* g_el = nullptr;
History* g_hist = nullptr;
HistEvent g_ev;
char g_history_path[PATH_MAX];  // empty: no history file
bool g_cancelled = false;       // the line in progress was cancelled by Ctrl-C
bool g_history_warned = false;

char* editline_prompt(EditLine*) { return g_prompt; }

// Waits until stdin is readable or a Ctrl-C arrived (true). SIGINT is blocked except
// inside ppoll, so a Ctrl-C between the flag's check and the wait cannot be missed.
bool wait_for_input_or_sigint() {
  sigset_t sigint, unblocked;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  sigprocmask(SIG_BLOCK, &sigint, &unblocked);
  sigdelset(&unblocked, SIGINT);
  struct pollfd input = {STDIN_FILENO, POLLIN, 0};
  while (!g_sigint && ppoll(&input, 1, nullptr, &unblocked) < 0 && errno == EINTR) {
  }
  bool interrupted = g_sigint != 0;
  g_sigint = 0;
  sigprocmask(SIG_UNBLOCK, &sigint, nullptr);
  return interrupted;
}

// libedit's character source: one (possibly multibyte) character from stdin. A Ctrl-C
// while it waits is delivered as the ^C character, which cancel_line handles.
int read_char(EditLine*, wchar_t* out) {
  mbstate_t state;
  memset(&state, 0, sizeof state);
  for (;;) {
    if (wait_for_input_or_sigint()) {
      *out = L'\x03';
      return 1;
    }
    char c;
    ssize_t got = read(STDIN_FILENO, &c, 1);
    if (got == 0) return 0;
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    wchar_t wc;
    size_t used = mbrtowc(&wc, &c, 1, &state);
    if (used == static_cast<size_t>(-2)) continue;  // the middle of a character
    if (used == static_cast<size_t>(-1)) {          // not valid in the locale: the byte
      memset(&state, 0, sizeof state);
      wc = static_cast<unsigned char>(c);
    }
    *out = wc;
    return 1;
  }
}

// Ctrl-C while typing: shows ^C, ends the line and marks it cancelled (the REPL drops it
// and any unfinished chunk).
unsigned char cancel_line(EditLine* el, int) {
  g_cancelled = true;
  const LineInfo* li = el_line(el);
  el_cursor(el, static_cast<int>(li->lastchar - li->cursor));
  el_insertstr(el, "^C");
  el_push(el, "\n");
  return CC_REFRESH;
}

// The terminal's width in columns (80 when it cannot be asked).
int terminal_columns() {
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

// Prints the candidates (strings in the table at `list`, `n` of them) in columns, sorted
// down the columns as readline does, under the line being edited.
void list_candidates(lua_State* L, int list, int n) {
  int shown = n < kMaxListed ? n : kMaxListed;
  size_t widest = 0;
  for (int i = 1; i <= shown; ++i) {
    lua_rawgeti(L, list, i);
    size_t len = 0;
    lua_tolstring(L, -1, &len);
    if (len > widest) widest = len;
    lua_pop(L, 1);
  }
  int width = static_cast<int>(widest) + 2;
  int columns = terminal_columns() / width;
  if (columns < 1) columns = 1;
  int rows = (shown + columns - 1) / columns;
  fputc('\n', stdout);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < columns; ++c) {
      int i = c * rows + r + 1;
      if (i > shown) break;
      lua_rawgeti(L, list, i);
      const char* word = lua_tostring(L, -1);
      if (c == columns - 1 || i + rows > shown)  // the last in its row: no padding
        fputs(word, stdout);
      else
        fprintf(stdout, "%-*s", width, word);
      lua_pop(L, 1);
    }
    fputc('\n', stdout);
  }
  if (shown < n) fprintf(stdout, "... and %d more\n", n - shown);
  fflush(stdout);
}

// Protected part of completion: helper.complete(text before the cursor) -> list, length
// of the word being completed.
int completion_candidates(lua_State* L) {
  const auto* li = static_cast<const LineInfo*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  lua_pushlstring(L, li->buffer, static_cast<size_t>(li->cursor - li->buffer));
  if (!call_helper(L, "complete", 1, 2)) return 0;
  return 2;
}

// Tab: completes the name before the cursor as far as all candidates agree; when they
// agree no further, lists them.
unsigned char complete_word(EditLine* el, int) {
  lua_State* L = nullptr;
  el_get(el, EL_CLIENTDATA, &L);
  int top = lua_gettop(L);
  lua_pushcfunction(L, completion_candidates);
  lua_pushlightuserdata(L, const_cast<LineInfo*>(el_line(el)));
  if (lua_pcall(L, 1, 2, 0) != LUA_OK || lua_type(L, top + 1) != LUA_TTABLE) {
    lua_settop(L, top);
    return CC_REFRESH_BEEP;
  }
  int list = top + 1;
  size_t typed = static_cast<size_t>(lua_tointeger(L, top + 2));
  int n = static_cast<int>(lua_rawlen(L, list));
  if (n == 0) {
    lua_settop(L, top);
    return CC_REFRESH_BEEP;
  }
  // The longest prefix every candidate shares.
  lua_rawgeti(L, list, 1);
  size_t common = 0;
  const char* first = lua_tolstring(L, -1, &common);
  for (int i = 2; i <= n; ++i) {
    lua_rawgeti(L, list, i);
    const char* other = lua_tostring(L, -1);
    size_t k = 0;
    while (k < common && other[k] == first[k]) ++k;
    common = k;
    lua_pop(L, 1);
  }
  unsigned char result = CC_REFRESH;
  if (common > typed) {
    char insert[512];
    snprintf(insert, sizeof insert, "%.*s", static_cast<int>(common - typed), first + typed);
    el_insertstr(el, insert);
  } else if (n > 1) {
    list_candidates(L, list, n);
    result = CC_REDISPLAY;
  }
  lua_settop(L, top);
  return result;
}

// The history file: $TIDE_HISTORY, else ~/.tide_history; none without either.
void find_history_path() {
  const char* env = getenv("TIDE_HISTORY");
  const char* home = getenv("HOME");
  if (env && *env)
    snprintf(g_history_path, sizeof g_history_path, "%s", env);
  else if (home && *home)
    snprintf(g_history_path, sizeof g_history_path, "%s/.tide_history", home);
  else
    g_history_path[0] = '\0';
}

// Sets up line editing on the terminal: emacs keys (and ~/.editrc), the history loaded
// from its file, Tab completion, Ctrl-C that cancels the line.
void open_editor(lua_State* L) {
  setlocale(LC_CTYPE, "");  // multibyte input and display
  g_el = el_init("tide", stdin, stdout, stderr);
  if (g_el == nullptr) return;
  g_hist = history_init();
  history(g_hist, &g_ev, H_SETSIZE, kHistoryLines);
  history(g_hist, &g_ev, H_SETUNIQUE, 1);
  find_history_path();
  if (g_history_path[0]) history(g_hist, &g_ev, H_LOAD, g_history_path);
  el_set(g_el, EL_EDITOR, "emacs");
  el_set(g_el, EL_SIGNAL, 1);  // libedit restores the terminal on ^Z, resizes on SIGWINCH
  el_set(g_el, EL_PROMPT, editline_prompt);
  el_set(g_el, EL_HIST, history, g_hist);
  el_set(g_el, EL_CLIENTDATA, L);
  el_set(g_el, EL_GETCFN, read_char);
  el_source(g_el, nullptr);  // ~/.editrc
  el_set(g_el, EL_ADDFN, "tide-complete", "complete the name before the cursor", complete_word);
  el_set(g_el, EL_BIND, "^I", "tide-complete", nullptr);
  el_set(g_el, EL_ADDFN, "tide-cancel", "drop the line (Ctrl-C)", cancel_line);
  el_set(g_el, EL_BIND, "^C", "tide-cancel", nullptr);
}

void close_editor() {
  if (g_el) el_end(g_el);
  if (g_hist) history_end(g_hist);
  g_el = nullptr;
  g_hist = nullptr;
}

// Adds a line to the history and rewrites the file (the last kHistoryLines lines), so a
// session that is killed keeps what it typed.
void remember(const char* line) {
  const char* p = line;
  while (*p == ' ' || *p == '\t') ++p;
  if (*p == '\0') return;
  history(g_hist, &g_ev, H_ENTER, line);
  if (g_history_path[0] && history(g_hist, &g_ev, H_SAVE, g_history_path) == -1 && !g_history_warned) {
    g_history_warned = true;
    fprintf(stderr, "tide: cannot write the history file %s\n", g_history_path);
  }
}

// Reads a line with libedit and pushes it without its newline.
Read edit_line(lua_State* L) {
  int count = 0;
  g_cancelled = false;
  const char* line = el_gets(g_el, &count);
  if (g_cancelled) return Read::Cancel;
  if (line == nullptr || count <= 0) {
    fputc('\n', stdout);  // end the prompt line on Ctrl-D
    fflush(stdout);
    return Read::End;
  }
  size_t len = strlen(line);
  if (len > 0 && line[len - 1] == '\n') --len;
  lua_pushlstring(L, line, len);
  remember(lua_tostring(L, -1));
  return Read::Line;
}
#endif  // TIDE_HAVE_LIBEDIT

bool editing() {
#ifdef TIDE_HAVE_LIBEDIT
  return g_el != nullptr;
#else
  return false;
#endif
}

// ---- reading chunks -------------------------------------------------------------------

// Reads one line of any length from stdin (showing the prompt on a terminal) and pushes it
// without its newline. A Ctrl-C that interrupts the read cancels it.
Read plain_line(lua_State* L) {
  if (g_interactive) {
    fputs(g_prompt, stdout);
    fflush(stdout);
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char piece[1024];
  bool got_any = false;
  for (;;) {
    if (fgets(piece, sizeof piece, stdin) == nullptr) {
      if (g_sigint) {
        g_sigint = 0;
        clearerr(stdin);
        luaL_pushresult(&b);
        lua_pop(L, 1);
        fputc('\n', stdout);
        return Read::Cancel;
      }
      break;
    }
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
    return Read::End;
  }
  return Read::Line;
}

// The next line, pushed; on the first line of a chunk "=expr" is the old shorthand for
// "return expr" and "?expr" asks for help(expr).
Read push_line(lua_State* L, bool first) {
  prompt_text(L, first);
  g_sigint = 0;
#ifdef TIDE_HAVE_LIBEDIT
  Read r = editing() ? edit_line(L) : plain_line(L);
#else
  Read r = plain_line(L);
#endif
  if (r != Read::Line || !first) return r;
  const char* line = lua_tostring(L, -1);
  if (line[0] == '=') {
    lua_pushfstring(L, "return %s", line + 1);
    lua_remove(L, -2);
  } else if (line[0] == '?') {
    lua_pushfstring(L, "help(%s)", line + 1);
    lua_remove(L, -2);
  }
  return r;
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
// function is pushed above the line; otherwise the stack is left as it was.
int try_as_expression(lua_State* L) {
  const char* line = lua_tostring(L, -1);
  const char* code = lua_pushfstring(L, "return %s;", line);
  int status = luaL_loadbuffer(L, code, strlen(code), "=stdin");
  lua_remove(L, -2);  // the "return ..." text
  if (status != LUA_OK) lua_pop(L, 1);
  return status;
}

// With the line on top of the stack, compiles it as a statement, reading continuation
// lines while it is incomplete. Leaves the whole text and above it the function (or the
// error); *cancelled tells that Ctrl-C dropped the chunk (then only the text is left).
int compile_statement(lua_State* L, bool* cancelled) {
  *cancelled = false;
  for (;;) {
    size_t len = 0;
    const char* code = lua_tolstring(L, -1, &len);
    int status = luaL_loadbuffer(L, code, len, "=stdin");
    if (!incomplete(L, status)) return status;
    lua_pop(L, 1);  // the "<eof>" error
    Read r = push_line(L, false);
    if (r == Read::Cancel) {
      *cancelled = true;
      return LUA_OK;
    }
    if (r == Read::End) {  // the input ends inside the chunk: its "<eof>" error is the result
      return luaL_loadbuffer(L, code, len, "=stdin");
    }
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);  // text .. "\n" .. new line
  }
}

// ---- running chunks -------------------------------------------------------------------

// Prints the error message on top of the stack (with its traceback shortened) and pops it.
void report(lua_State* L) {
  fflush(stdout);
  if (lua_type(L, -1) == LUA_TSTRING && call_helper(L, "error_text", 1, 1)) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
  } else {
    const char* msg = lua_tostring(L, -1);
    fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
  }
  fflush(stderr);
  lua_pop(L, 1);
}

// Prints the values above `base`, all on one line separated by tabs as print does, each
// in its pretty form.
void print_results(lua_State* L, int base) {
  int n = lua_gettop(L) - base;
  if (n <= 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  if (!call_helper(L, "format", n, 1)) return;
  size_t len = 0;
  const char* text = lua_tolstring(L, -1, &len);
  if (text) {
    fwrite(text, 1, len, stdout);
    fputc('\n', stdout);
  }
  fflush(stdout);
  lua_pop(L, 1);
}

// After a statement ran: a chunk that declares locals gets a note that they are gone.
void explain_locals(lua_State* L, int text) {
  lua_pushvalue(L, text);
  if (!call_helper(L, "local_note", 1, 1)) return;
  if (const char* note = lua_tostring(L, -1)) {
    fflush(stdout);
    fprintf(stderr, "%s\n", note);
    fflush(stderr);
  }
  lua_pop(L, 1);
}

// Reads, compiles and runs one chunk. Returns false at the end of input.
bool run_one(lua_State* L, CallFn call) {
  int base = lua_gettop(L);
  Read r = push_line(L, true);
  if (r == Read::End) return false;
  if (r == Read::Cancel) return true;
  bool statement = false;
  int status = try_as_expression(L);
  if (status != LUA_OK) {
    bool cancelled = false;
    status = compile_statement(L, &cancelled);
    if (cancelled) {
      lua_settop(L, base);
      return true;
    }
    statement = true;
  }
  // The stack is: base, text, function (or error).
  if (status == LUA_OK) status = call(L, 0, LUA_MULTRET);
  if (status == LUA_OK) {
    print_results(L, base + 1);
    if (statement) explain_locals(L, base + 1);
  } else {
    report(L);
  }
  lua_settop(L, base);
  return true;
}

}  // namespace

void run(lua_State* L, CallFn call) {
  g_interactive = isatty(STDIN_FILENO) != 0;
  load_helper(L);
#ifdef TIDE_HAVE_LIBEDIT
  if (g_interactive) open_editor(L);
#endif
  install_prompt_sigint();
  while (run_one(L, call)) {
  }
  sigaction(SIGINT, &g_saved_sigint, nullptr);
#ifdef TIDE_HAVE_LIBEDIT
  close_editor();
#endif
  if (g_helper != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, g_helper);
  g_helper = LUA_NOREF;
  fflush(stdout);
}

}  // namespace tide::repl
