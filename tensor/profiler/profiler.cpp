// The profiler's recording core: one session at a time, owned by the thread that started it
// (the thread running the script; the engine's workers run kernels, not ops, and record
// nothing).
#include "profiler.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "../allocator.hpp"
#include "../error.hpp"

namespace tide::profiler {

namespace detail {
std::atomic<bool> g_recording __attribute__((visibility("hidden"))){false};
}

namespace {

using Clock = std::chrono::steady_clock;

// The thread that records: other threads read it (begin() on an engine worker, a second
// interpreter), so it is atomic; the rest of the session is the owner's alone.
std::atomic<std::thread::id> g_owner;

struct Session {
  Options options;
  uint32_t id = 0;  // tokens carry it, so a stale token is recognised
  Clock::time_point t0;
  std::vector<Event> events;
  std::vector<int> open;               // indices of the open ranges, innermost last
  std::vector<int64_t> memory_at_begin;  // per event, with profile_memory
};

Session& session() {
  static Session s;
  return s;
}

int64_t now_ns(const Session& s) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - s.t0).count();
}

int64_t allocated_bytes() { return int64_t(cpu_allocator_stats().allocated_bytes); }

// The event of token when it belongs to the recording session on this thread, else -1.
int index_of(int64_t token) {
  if (token < 0 || !recording() || g_owner.load(std::memory_order_acquire) != std::this_thread::get_id()) return -1;
  if (uint32_t(token >> 32) != session().id) return -1;
  return int(token & 0xffffffff);
}

// Closes the innermost open range.
void close_innermost(Session& s, int64_t t) {
  int i = s.open.back();
  s.open.pop_back();
  Event& e = s.events[size_t(i)];
  e.end_ns = t;
  if (s.options.profile_memory) e.memory = allocated_bytes() - s.memory_at_begin[size_t(i)];
}

}  // namespace

uint32_t start(const Options& options) {
  TIDE_CHECK(!recording(), "a profiler is already recording (one session at a time)");
  Session& s = session();
  uint32_t id = s.id + 1;
  s = Session{};
  s.id = id;
  s.options = options;
  s.t0 = Clock::now();
  g_owner.store(std::this_thread::get_id(), std::memory_order_release);
  detail::g_recording.store(true, std::memory_order_release);
  return id;
}

uint32_t current_session() {
  return recording() && g_owner.load(std::memory_order_acquire) == std::this_thread::get_id() ? session().id : 0;
}

std::vector<Event> stop() {
  TIDE_CHECK(recording(), "no profiler is recording");
  Session& s = session();
  TIDE_CHECK(g_owner.load(std::memory_order_acquire) == std::this_thread::get_id(),
             "the profiler records on another thread");
  int64_t t = now_ns(s);
  while (!s.open.empty()) close_innermost(s, t);
  detail::g_recording.store(false, std::memory_order_relaxed);
  g_owner.store(std::thread::id(), std::memory_order_relaxed);
  s.memory_at_begin.clear();
  return std::move(s.events);
}

const Options& options() { return session().options; }

int64_t begin(std::string name, Kind kind) {
  if (!recording() || g_owner.load(std::memory_order_acquire) != std::this_thread::get_id()) return -1;
  Session& s = session();
  TIDE_CHECK(s.events.size() < 0x7fffffff, "profiler: more than 2^31 events in one session");
  Event e;
  e.name = std::move(name);
  e.kind = kind;
  e.parent = s.open.empty() ? -1 : s.open.back();
  int i = int(s.events.size());
  s.events.push_back(std::move(e));
  if (s.options.profile_memory) s.memory_at_begin.push_back(allocated_bytes());
  s.open.push_back(i);
  s.events.back().start_ns = now_ns(s);  // last: the bookkeeping above is not the op's time
  return int64_t(s.id) << 32 | i;
}

void end(int64_t token) {
  int i = index_of(token);
  if (i < 0) return;
  Session& s = session();
  int64_t t = now_ns(s);
  auto it = std::find(s.open.rbegin(), s.open.rend(), i);
  if (it == s.open.rend()) return;  // closed already (by an enclosing range's end, or stop)
  while (s.open.back() != i) close_innermost(s, t);
  close_innermost(s, t);
}

void set_shapes(int64_t token, std::vector<std::vector<int64_t>> shapes) {
  int i = index_of(token);
  if (i >= 0) session().events[size_t(i)].shapes = std::move(shapes);
}

void set_stack(int64_t token, std::vector<std::string> stack) {
  int i = index_of(token);
  if (i >= 0) session().events[size_t(i)].stack = std::move(stack);
}

}  // namespace tide::profiler
