// The `tide` program: Lua 5.4's standalone interpreter (`lua`) with torch and numpy
// preloaded. It takes the same options and sets `arg` the same way:
//
//   tide [options] [script [args]]
//     -e stat   run the string 'stat'         -l mod    require 'mod' into global 'mod'
//     -i        REPL after running 'script'   -l g=mod  require 'mod' into global 'g'
//     -v        print the version             -E        ignore LUA_INIT and LUA_PATH...
//     -W        turn warnings on              --        stop handling options
//     -         stop handling options and run stdin
//
// With no script and no -e/-v it opens the REPL when stdin is a terminal and otherwise runs
// stdin as a script. An uncaught error prints "progname: message" and a traceback on
// stderr and exits with status 1. Ctrl-C while a chunk runs raises "interrupted!" in Lua
// code and "interrupted" in a long engine op (tensor/interrupt.hpp). In a script a second
// Ctrl-C ends the program; in the REPL it never does (the session's state is kept).
//
// Everything that touches Lua runs inside one protected call (run_main), and the code
// reached from it holds no C++ objects with destructors, because Lua errors unwind with
// longjmp through it.
#include <lua.hpp>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bindings/modules.hpp"
#include "repl/repl.hpp"
#include "tensor/interrupt.hpp"
#include "tensor/distributed/process_group.hpp"
#include "tensor/ipc.hpp"
#include "tensor/parallel.hpp"

#ifndef TIDE_VERSION
#define TIDE_VERSION "0.1.0"
#endif

namespace {

const char* g_progname = "tide";  // prefix of error messages (argv[0] as lua does)
lua_State* g_state = nullptr;     // the state a Ctrl-C interrupts
bool g_in_repl = false;           // a REPL session runs: Ctrl-C never ends the program

void print_message(const char* prefix, const char* msg) {
  if (prefix) fprintf(stderr, "%s: ", prefix);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

void print_error(const std::string& text) { print_message(g_progname, text.c_str()); }

// Prints the error on top of the stack (if status is an error) and pops it. In a rank of a
// distributed job the message names this rank, and the other ranks learn of it.
int report(lua_State* L, int status) {
  if (status != LUA_OK) {
    const char* msg = lua_tostring(L, -1);
    std::string text = msg ? msg : "(error object is not a string)";
    if (g_in_repl) print_error(text);
    else tide::dist::uncaught_error(text, print_error);
    lua_pop(L, 1);
  }
  return status;
}

void print_version() {
  fputs("tide " TIDE_VERSION " (" LUA_RELEASE ")\n", stdout);
  fflush(stdout);
}

void print_usage(const char* bad_option) {
  if (bad_option[1] == 'e' || bad_option[1] == 'l')
    fprintf(stderr, "%s: '%s' needs argument\n", g_progname, bad_option);
  else
    fprintf(stderr, "%s: unrecognized option '%s'\n", g_progname, bad_option);
  fprintf(stderr,
          "usage: %s [options] [script [args]]\n"
          "Available options are:\n"
          "  -e stat   execute string 'stat'\n"
          "  -i        enter interactive mode after executing 'script'\n"
          "  -l mod    require library 'mod' into global 'mod'\n"
          "  -l g=mod  require library 'mod' into global 'g'\n"
          "  -v        show version information\n"
          "  -E        ignore environment variables\n"
          "  -W        turn warnings on\n"
          "  --        stop handling options\n"
          "  -         stop handling options and execute stdin\n",
          g_progname);
  fflush(stderr);
}

// ---- Ctrl-C -------------------------------------------------------------------------

// Hook installed by the signal handler: the next thing the VM does raises the error.
void interrupt_hook(lua_State* L, lua_Debug*) {
  lua_sethook(L, nullptr, 0, 0);
  luaL_error(L, "interrupted!");
}

// Installs `handler` for SIGINT and saves the action it replaces in *old (when given).
void set_sigint(void (*handler)(int), struct sigaction* old) {
  struct sigaction sa;
  sa.sa_handler = handler;
  sa.sa_flags = 0;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, old);
}

// A signal handler may only do async-signal-safe work: it sets a hook (lua_sethook is
// documented as safe to call from a signal) and the engine's interrupt flag (one atomic
// store). Outside the REPL it restores the default action, so a second Ctrl-C ends a
// program stuck where neither is checked.
void on_sigint(int sig) {
  if (tide::forward_to_interrupt_thread(sig)) return;
  if (!g_in_repl) set_sigint(SIG_DFL, nullptr);
  tide::request_interrupt();
  // Count and line events come only from Lua code, never from inside a binding (a call
  // event would fire for a finalizer that a binding's allocation runs, and the error would
  // unwind through the binding's C++ frames).
  lua_sethook(g_state, interrupt_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

// ---- OpenBLAS's threads at start-up --------------------------------------------------

// OpenBLAS starts its threads while the program loads, before main. When the system refuses
// one (an address-space or process limit), it prints why and raises SIGINT, which would end
// the program (or, where SIGINT is ignored, leave OpenBLAS waiting later for the thread it
// could not start). So a handler is installed before any library initialises, from
// .preinit_array (run before the constructors of the shared libraries), and notes that
// signal; main then keeps OpenBLAS on one thread and puts SIGINT's action back.
volatile sig_atomic_t g_blas_start_failed = 0;
struct sigaction g_sigint_at_start;  // the action the program was started with

// A SIGINT the process raised itself (raise() sends SI_TKILL from this process) is
// OpenBLAS's; any other (a Ctrl-C while loading) gets the action the program started with.
void on_sigint_while_loading(int sig, siginfo_t* info, void*) {
  if (info->si_code == SI_TKILL && info->si_pid == getpid()) {
    g_blas_start_failed = 1;
    return;
  }
  sigaction(sig, &g_sigint_at_start, nullptr);
  if (g_sigint_at_start.sa_handler != SIG_IGN) raise(sig);
}

void catch_sigint_while_loading(int, char**, char**) {
  struct sigaction sa;
  sa.sa_sigaction = on_sigint_while_loading;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_sigint_at_start);
}

[[gnu::section(".preinit_array"), gnu::used]] void (*const g_preinit)(int, char**, char**) =
    catch_sigint_while_loading;

// Called first in main, once every library has initialised.
void end_loading() {
  sigaction(SIGINT, &g_sigint_at_start, nullptr);
  if (g_blas_start_failed) tide::blas_threads_failed_to_start();
}

// ---- running chunks -----------------------------------------------------------------

// Message handler: appends a traceback to string errors; an error object with __tostring
// gives its string without one; any other object is described by its type.
int message_handler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (msg == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

// Calls the function below its `narg` arguments with the message handler and Ctrl-C
// turned into an error; afterwards SIGINT is handled as before (by the REPL at its prompt).
int docall(lua_State* L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  g_state = L;
  tide::clear_interrupt();
  struct sigaction saved;
  set_sigint(on_sigint, &saved);
  int status = lua_pcall(L, narg, nres, base);
  sigaction(SIGINT, &saved, nullptr);
  if (lua_gethook(L) == interrupt_hook) lua_sethook(L, nullptr, 0, 0);  // came as it returned
  tide::clear_interrupt();
  lua_remove(L, base);
  return status;
}

int dochunk(lua_State* L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

int dofile(lua_State* L, const char* name) {
  return dochunk(L, luaL_loadfile(L, name));
}

int dostring(lua_State* L, const char* code, const char* chunkname) {
  return dochunk(L, luaL_loadbuffer(L, code, strlen(code), chunkname));
}

// -l: `mod` sets global mod = require "mod" (a name like "mod-2" sets global "mod");
// `g=mod` sets global g = require "mod".
int dolibrary(lua_State* L, const char* spec) {
  const char* eq = strchr(spec, '=');
  size_t global_len;
  const char* modname;
  if (eq) {
    global_len = static_cast<size_t>(eq - spec);
    modname = eq + 1;
  } else {
    modname = spec;
    const char* mark = strchr(spec, '-');
    global_len = mark ? static_cast<size_t>(mark - spec) : strlen(spec);
  }
  lua_getglobal(L, "require");
  lua_pushstring(L, modname);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) {  // _G[name] = module, through _G's metamethods like setglobal
    lua_pushglobaltable(L);
    lua_insert(L, -2);
    lua_pushlstring(L, spec, global_len);
    lua_insert(L, -2);
    lua_settable(L, -3);
    lua_pop(L, 1);
  }
  return report(L, status);
}

// The script with the positive entries of `arg` as its arguments. "-" is stdin unless it
// follows "--".
int handle_script(lua_State* L, char** argv, int script) {
  const char* fname = argv[script];
  if (strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0) fname = nullptr;
  int status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
    int n = static_cast<int>(luaL_len(L, -1));
    luaL_checkstack(L, n + 3, "too many arguments to script");
    for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
    lua_remove(L, -n - 1);  // the arg table
    status = docall(L, n, 0);
  }
  return report(L, status);
}

// ---- options ------------------------------------------------------------------------

enum : int { kHasError = 1, kHasI = 2, kHasV = 4, kHasE = 8, kHasBigE = 16 };

// Scans the options. Sets *script to the index of the script name, or 0 if there is none
// (for an error: the index of the bad option). Returns the kHas* flags.
int collect_args(char** argv, int argc, int* script) {
  int flags = 0;
  *script = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (a[0] != '-') {
      *script = i;
      return flags;
    }
    switch (a[1]) {
      case '-':  // "--"
        if (a[2] != '\0') { *script = i; return kHasError; }
        *script = (i + 1 < argc) ? i + 1 : 0;
        return flags;
      case '\0':  // "-": stdin is the script
        *script = i;
        return flags;
      case 'E':
        if (a[2] != '\0') { *script = i; return kHasError; }
        flags |= kHasBigE;
        break;
      case 'W':
        if (a[2] != '\0') { *script = i; return kHasError; }
        break;
      case 'i':
        flags |= kHasI;
        [[fallthrough]];  // -i implies -v
      case 'v':
        if (a[2] != '\0') { *script = i; return kHasError; }
        flags |= kHasV;
        break;
      case 'e':
        flags |= kHasE;
        [[fallthrough]];
      case 'l':
        if (a[2] == '\0') {  // the argument is the next word
          if (i + 1 >= argc || argv[i + 1][0] == '-') { *script = i; return kHasError; }
          i++;
        }
        break;
      default:
        *script = i;
        return kHasError;
    }
  }
  return flags;
}

// `arg`: the script name at 0, its arguments at 1.., the interpreter and the options at
// negative indices. Without a script, arg[0] is the program and the options are 1...
void create_arg_table(lua_State* L, char** argv, int argc, int script) {
  lua_createtable(L, argc - script - 1 > 0 ? argc - script - 1 : 0, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

// Runs -e, -l and -W in the order given (options before `optlim`).
bool run_options(lua_State* L, char** argv, int optlim) {
  for (int i = 1; i < optlim; i++) {
    char opt = argv[i][1];
    switch (opt) {
      case 'e':
      case 'l': {
        const char* extra = argv[i] + 2;
        if (*extra == '\0') extra = argv[++i];
        int status = opt == 'e' ? dostring(L, extra, "=(command line)") : dolibrary(L, extra);
        if (status != LUA_OK) return false;
        break;
      }
      case 'W':
        lua_warning(L, "@on", 0);
        break;
      default:
        break;
    }
  }
  return true;
}

// LUA_INIT_5_4 or LUA_INIT: "@file" runs the file, anything else runs as code.
int handle_init(lua_State* L) {
  const char* name = "=LUA_INIT_5_4";
  const char* init = getenv(name + 1);
  if (init == nullptr) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (init == nullptr) return LUA_OK;
  if (init[0] == '@') return dofile(L, init + 1);
  return dostring(L, init, name);
}

// The REPL, with the globals as the script and options left them.
void run_repl(lua_State* L) {
  const char* saved = g_progname;
  g_progname = nullptr;  // errors in the REPL print without the program name
  g_in_repl = true;
  tide::repl::run(L, docall);
  g_in_repl = false;
  g_progname = saved;
}

// The whole program, in protected mode. Returns true on success.
int run_main(lua_State* L) {
  int argc = static_cast<int>(lua_tointeger(L, 1));
  char** argv = static_cast<char**>(lua_touserdata(L, 2));
  lua_settop(L, 0);
  int script = 0;
  int flags = collect_args(argv, argc, &script);
  int optlim = script > 0 ? script : argc;
  luaL_checkversion(L);
  if (flags == kHasError) {
    print_usage(argv[script]);
    return 0;
  }
  if (flags & kHasV) print_version();
  if (flags & kHasBigE) {  // tells the libraries (package) to ignore LUA_PATH etc.
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  tide::lua::open_tide(L, true);
  create_arg_table(L, argv, argc, script);
  // Generational mode, as lua.c: tensors' bytes are reported to the collector
  // (bindings/lua_api.cpp), and a minor collection frees the temporaries of the last few
  // operations without traversing the library's ~1.8 MB of Lua modules, so their buffers
  // come back warm from the allocator's cache. Incremental mode traverses that whole heap
  // per cycle, so a cycle spans several large results: on 2026-11-26, a + b on 10^6 float32
  // took 430 us there against 240 us here, a + b on 10^5 float64 54 against 33 us, a
  // linear-regression epoch 40 against 24 us, at a 70 MB peak against 118.
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (!(flags & kHasBigE) && handle_init(L) != LUA_OK) return 0;
  if (!run_options(L, argv, optlim)) return 0;
  if (script > 0 && handle_script(L, argv, script) != LUA_OK) return 0;
  if (flags & kHasI) {
    run_repl(L);
  } else if (script == 0 && !(flags & (kHasE | kHasV))) {
    if (isatty(fileno(stdin))) {
      print_version();
      run_repl(L);
    } else if (dofile(L, nullptr) != LUA_OK) {
      return 0;
    }
  }
  lua_pushboolean(L, 1);
  return 1;
}

// The path of this program, which torch.multiprocessing's workers run.
void register_program_path() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) tide::ipc::set_program_path(std::string(path, size_t(n)));
}

}  // namespace

int main(int argc, char** argv) {
  end_loading();
  if (argc > 0 && argv[0] && argv[0][0]) g_progname = argv[0];
  tide::set_interrupt_thread();
  register_program_path();
  lua_State* L = luaL_newstate();
  if (L == nullptr) {
    print_message(g_progname, "cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  // Lua leaves a new state's extra space uninitialised; tide keeps a pointer there (free = null).
  std::memset(lua_getextraspace(L), 0, LUA_EXTRASPACE);
  lua_pushcfunction(L, run_main);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  bool ok = lua_toboolean(L, -1);
  report(L, status);
  lua_close(L);
  return (ok && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
