// Capture and replay of engine work (torch.compile, bindings/lua/torch_compile.lua).
//
// While a thread records, every call it makes into a device table (the CPU's or the CUDA
// module's) goes through a recording table that runs the kernel and appends a replay step
// holding the call's arguments by value: data pointers, strides, scalars, options. Every
// storage allocated meanwhile, host or device, is kept by the tape, so the pointers stay
// valid and no other tensor gets their memory. A replay runs the steps again on whatever
// data those buffers then hold: no Lua, no argument checks, no graph building, no allocation
// (the CPU's strided reduction, scan, sort entries allocate their result and it is copied
// into the recorded one). On CUDA a replay queues the recorded kernels on the stream.
//
// A recording is only sound if the table calls are all the work the ops did. Host code that
// reads or writes tensor memory outside a table call (an op's CPU-only loop, item(),
// printing, an index tensor read to find positions) calls note_host_access(), which marks
// the recording broken with the op's name; so does a random draw from a generator other
// than the thread's default, and foreign memory wrapped meanwhile. (Copies from a device to
// the host go into new tensors, which the tape keeps; host code reading them breaks it.) The Lua side (bindings/bind_compile.cpp) adds what the
// engine cannot see: Lua state.
//
// Cost when off: note_host_access() and the allocation hook are one relaxed load of a global
// and a predicted branch, like the profiler's.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tide {
class Storage;
struct DeviceBackend;
namespace cpu {
struct MatVec;
}
}  // namespace tide

namespace tide::capture {

namespace detail {
// Non-zero while some thread records (the slow paths then ask whether it is this one).
extern std::atomic<int> g_active;
// The CPU's table as backend_for returns it: kCpuBackend, or the recording table.
extern std::atomic<const DeviceBackend*> g_cpu_backend;
void host_access_slow();
void allocated_slow(const std::shared_ptr<Storage>& s);
// The CUDA module's table with its work entries recording (capture.cpp).
const DeviceBackend& recording_device_table();
}  // namespace detail

inline bool any_recording() { return detail::g_active.load(std::memory_order_relaxed) != 0; }

// Host code is about to read or write tensor memory: outside a table call during a
// recording on this thread, that breaks the recording.
inline void note_host_access() {
  if (any_recording()) [[unlikely]]
    detail::host_access_slow();
}
// Storage::allocate's hook: a recording keeps every block allocated on its thread.
inline void note_allocated(const std::shared_ptr<Storage>& s) {
  if (any_recording()) [[unlikely]]
    detail::allocated_slow(s);
}

struct Pointwise;     // a recorded pointwise call (capture.cpp)
struct FusedProgram;  // a group of them run chunk by chunk (capture.cpp)
struct ProductPair;   // two matrix-vector products over one matrix run in one pass (capture.cpp)

// A recorded sequence of table calls (filled by the recording table in capture.cpp).
struct Tape {
  struct Step {
    const char* entry;  // the table entry ("binary", "matmul", ...) for explain()
    const char* op;     // the binding that made the call
    std::function<void(uint64_t seed, uint64_t offset_shift)> run;
    std::shared_ptr<const Pointwise> pointwise;  // set for the pointwise entries
    const DeviceBackend* table = nullptr;        // the table whose entry it calls
    // Whether a graph of the table can hold it: device work whose arguments are all fixed
    // (not a random draw, whose offset moves; not a step count read on the host; not a copy
    // from or to the host; not a kernel-error check, which waits).
    bool graphable = false;
    // The memory a host, reduce or matmul call reaches (byte ranges, and whether it may
    // write them), for moving steps around a product pair; pointwise steps have their
    // iterator instead.
    struct Access {
      const char* lo;
      const char* hi;
      bool writes;
    };
    std::vector<Access> accesses;
    bool accesses_known = false;
    std::shared_ptr<const cpu::MatVec> gemv;  // a matmul call that is a matrix-vector product
  };
  // Steps [first, last) run together: one step, or a fused group of pointwise steps over the
  // same elements, run chunk by chunk by its program (each chunk through every step while it
  // is in L1, intermediates only the group uses in scratch).
  struct Segment {
    size_t first, last;
    std::shared_ptr<FusedProgram> program;  // set for a fused group
    int scratch = 0;  // its buffers in scratch
    int outputs = 0;  // and bound as outputs (bind_output)
    // A product pair (its products are steps first and last - 1), and the steps between
    // them: run row by row inside its pass, before it, after it (tape order in each).
    std::shared_ptr<ProductPair> pair;
    std::vector<size_t> row_steps, before, after;
  };
  std::vector<Step> steps;
  std::vector<Segment> segments;  // covering steps in order (made by plan())
  std::vector<std::shared_ptr<Storage>> retained;  // every block allocated while recording
  std::vector<const char*> addresses;              // first byte of each operand of each step
  bool uses_random = false;
  uint64_t start_offset = 0;   // the default generator's offset when the recording began
  uint64_t random_blocks = 0;  // and its advance over the recording
  // Replays as one graph of graph_table's device (a CUDA graph) when every step is graphable
  // on that one table; else graph_table is null and graph_reason says why not. The graph is
  // captured on the first replay; if that fails, replays run step by step.
  const DeviceBackend* graph_table = nullptr;
  mutable std::string graph_reason;
  mutable std::shared_ptr<void> graph;
  mutable bool graph_tried = false;

  // Groups the steps into segments and decides on a graph; after the recording ended. A
  // block the recording allocated that nothing but the tape holds any more may become a
  // fused group's scratch: collect the garbage that still holds blocks first.
  void plan();
  // Whether some segment is a fused group or a product pair.
  bool fuses() const;
  // Makes the recording's block `block` (a result the caller hands out) an output of the
  // replays: when one fused group alone writes all of it, and nothing else in the tape reads
  // it, each replay writes it into the memory the caller passes instead (no copy of the
  // result). Returns the output's index in replay()'s `outputs`, or -1 (the caller copies).
  int bind_output(const Storage* block);
  int outputs = 0;  // outputs bound
  // Runs every step. Random draws continue the thread's default generator exactly as the
  // recorded calls did from wherever it stands now, and advance it as they did.
  void replay(char* const* outputs = nullptr) const;
  // Whether replays launch a captured graph (after the first replay).
  bool replays_as_graph() const { return graph != nullptr; }

 private:
  void capture_graph() const;

 public:
  // Whether some step reads or writes memory in [p, p + nbytes).
  bool touches(const void* p, size_t nbytes) const;
  // Whether every address a step touched lies in a retained block or one of `known`'s
  // ranges (memory the caller guards); a tape that reaches other memory must not replay.
  bool touches_only(std::vector<std::pair<const char*, size_t>> known) const;
  size_t retained_bytes() const;
};

// Records the calling thread's table calls for the scope's lifetime (one per thread; the
// Lua side checks before starting). finish() returns the tape, still to be planned
// (Tape::plan), or null with reason() set when the recording broke.
class Recording {
 public:
  Recording();
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
  std::shared_ptr<Tape> finish();
  const std::string& reason() const;
  struct State;  // (capture.cpp)

 private:
  std::unique_ptr<State> state_;
};

// Whether the calling thread records; the binding running now (for break reasons) and where
// in the script it was called from (set by the binding layer when a break names no place).
bool recording_here();
void set_current_op(const char* op);
bool broken_here();
void set_break_location(const std::string& where);
// Marks the calling thread's recording broken (the first reason wins).
void mark_broken(std::string reason);

}  // namespace tide::capture
