// The profiler's recording core (torch.profiler, bindings/lua/torch_profiler.lua): while a
// session records, each op that opens a range (every binding call, every autograd backward
// node, every record_function label) becomes an event with its start and end times, its
// parent (the range open around it), optionally its inputs' shapes and the bytes the CPU
// allocator handed out net while it ran. Ranges nest as a stack; self times and self memory
// are derived from the tree afterwards.
//
// Cost when off: callers check recording() (one relaxed load of a global) before anything
// else, so an op pays a load and a predicted branch.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tide::profiler {

namespace detail {
// Hidden: libtide reads it without going through the GOT (the flag is for libtide's own
// code; another module asks through begin()).
extern std::atomic<bool> g_recording __attribute__((visibility("hidden")));
}

// Whether a session is recording (on any thread; begin() keeps only the owner thread's ops).
// For libtide's own code (the flag is hidden); other code asks current_session().
inline bool recording() { return detail::g_recording.load(std::memory_order_relaxed); }

struct Options {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
};

// What opened a range: a binding call, an autograd node's backward, a record_function label.
enum class Kind : uint8_t { Op, Backward, User };

struct Event {
  std::string name;
  Kind kind = Kind::Op;
  int64_t start_ns = 0, end_ns = 0;  // since the session started
  int parent = -1;                   // index of the enclosing event, -1 at the top
  std::vector<std::vector<int64_t>> shapes;  // one per input (empty for a non-tensor input)
  int64_t memory = 0;                // net CPU bytes allocated while open, children included
  std::vector<std::string> stack;    // innermost caller first (with_stack)
};

// Starts a session on the calling thread and returns its id (> 0); throws if one is already
// recording.
uint32_t start(const Options& options);
// The id of the session recording on this thread, 0 when none does.
uint32_t current_session();
// Stops the session (ends ranges still open at the current time) and returns its events in
// the order they began. Throws if none is recording.
std::vector<Event> stop();
// The options of the recording session (valid while recording()).
const Options& options();

// Opens a range named `name` and returns its token (>= 0), or -1 when no session records on
// this thread. The token stays valid for end() only within its session.
int64_t begin(std::string name, Kind kind = Kind::Op);
// Closes the range of token (and any range opened inside it that is still open: a scope that
// unwound without closing). A token of an ended session, or of a range already closed, is
// ignored.
void end(int64_t token);
// Attaches the inputs' shapes / the caller's stack to the open range of token.
void set_shapes(int64_t token, std::vector<std::vector<int64_t>> shapes);
void set_stack(int64_t token, std::vector<std::string> stack);

// A range for the lifetime of a C++ scope: opens when recording, closes at scope end.
class Range {
 public:
  explicit Range(int64_t token) : token_(token) {}
  ~Range() {
    if (token_ >= 0) end(token_);
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
  int64_t token() const { return token_; }

 private:
  int64_t token_;
};

}  // namespace tide::profiler
