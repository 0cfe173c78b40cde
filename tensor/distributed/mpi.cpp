// libtide_mpi.so: process groups on MPI (Open MPI as Debian ships it), and on NCCL for CUDA
// tensors with MPI starting it.
//
// One communication thread per process makes every MPI call (MPI_THREAD_FUNNELED, the thread
// that called MPI_Init_thread). Operations arrive in a queue and run as small state machines
// on non-blocking MPI calls: (1) the ranks exchange a description of their arguments
// (MPI_Iallgather) and compare them, so that a mismatch is the same error on every rank;
// (2) the data moves (MPI_Iallreduce, ...). A collective starts only after the one before it
// has reached its data stage, so that every rank starts collectives in the same order, as
// MPI requires; point-to-point operations start as soon as they are dequeued, so that an
// irecv waiting for its message does not hold back an isend behind it.
//
// The thread polls (MPI_Test) every operation in flight, and meanwhile a receive posted on a
// communicator of its own for failure notices: when a rank ends with an error, it sends its
// message to every other rank (uncaught_error), whose operations in flight and queued then
// fail with "rank R failed: message", and whose Lua code is interrupted (on_peer_failure).
// An operation that waits longer than the group's timeout fails, and the group with it.
//
// Buffers are made on the calling thread when the operation is submitted (a contiguous copy
// of a non-contiguous tensor, the inputs of a list op packed into one buffer), and results
// that could not be written in place are copied out by Work::wait on the waiting thread, so
// the communication thread only ever touches raw memory.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "../backend.hpp"
#include "../half.hpp"
#include "../interrupt.hpp"
#include "../ops/elementwise.hpp"
#include "modules.hpp"

namespace tide::dist {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNoticeTag = 7;
constexpr int kNoticeBytes = 2048;
// The description of one rank's arguments that the ranks compare (int64 entries).
enum Desc : int { kKind, kDtype, kRoot, kOp, kNumel, kNdim, kSizes, kDescLen = kSizes + kMaxDims };

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// ---- dtypes and reductions

MPI_Datatype mpi_type(DType dt) {
  switch (dt) {
    case DType::Bool: case DType::UInt8: return MPI_UINT8_T;
    case DType::Int8: return MPI_INT8_T;
    case DType::Int16: return MPI_INT16_T;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::Float16: case DType::BFloat16: return MPI_UINT16_T;
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::UInt16: return MPI_UINT16_T;
    case DType::UInt32: return MPI_UINT32_T;
    case DType::UInt64: return MPI_UINT64_T;
    case DType::Complex64: return MPI_C_FLOAT_COMPLEX;
    case DType::Complex128: return MPI_C_DOUBLE_COMPLEX;
  }
  return MPI_BYTE;
}

// Reductions of float16 / bfloat16 in float, rounded back (MPI has no 16-bit float type).
template <typename H, int Op>
void half_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const H*>(in);
  auto* b = static_cast<H*>(inout);
  for (int i = 0; i < *len; ++i) {
    float x = float(a[i]), y = float(b[i]);
    float r = Op == 0 ? x + y : Op == 1 ? x * y : Op == 2 ? (x < y ? x : y) : (x > y ? x : y);
    b[i] = H(r);
  }
}

MPI_Op g_half_ops[2][4];  // [float16, bfloat16][sum, product, min, max]

void create_half_ops() {
  MPI_Op_create(half_reduce<Half, 0>, 1, &g_half_ops[0][0]);
  MPI_Op_create(half_reduce<Half, 1>, 1, &g_half_ops[0][1]);
  MPI_Op_create(half_reduce<Half, 2>, 1, &g_half_ops[0][2]);
  MPI_Op_create(half_reduce<Half, 3>, 1, &g_half_ops[0][3]);
  MPI_Op_create(half_reduce<BFloat16, 0>, 1, &g_half_ops[1][0]);
  MPI_Op_create(half_reduce<BFloat16, 1>, 1, &g_half_ops[1][1]);
  MPI_Op_create(half_reduce<BFloat16, 2>, 1, &g_half_ops[1][2]);
  MPI_Op_create(half_reduce<BFloat16, 3>, 1, &g_half_ops[1][3]);
}

// The MPI reduction for op on dt (AVG is a SUM that Work::wait divides). Bool: SUM and MAX
// are OR, PRODUCT and MIN are AND.
MPI_Op mpi_op(ReduceOp op, DType dt) {
  int k = op == ReduceOp::Sum || op == ReduceOp::Avg ? 0 : op == ReduceOp::Product ? 1 : op == ReduceOp::Min ? 2 : 3;
  if (dt == DType::Bool) return k == 0 || k == 3 ? MPI_BOR : MPI_BAND;
  if (dt == DType::Float16) return g_half_ops[0][k];
  if (dt == DType::BFloat16) return g_half_ops[1][k];
  static const MPI_Op builtin[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
  return builtin[k];
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(code, text, &n);
  return std::string(text, size_t(n));
}

// ---- work

class WorkImpl final : public Work {
 public:
  explicit WorkImpl(const char* name) : name_(name) {}
  bool is_completed() override {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  int wait() override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (!done_) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        if (!done_) check_interrupt();
      }
      if (!error_.empty()) throw Error(error_);
    }
    if (finish_) {
      auto f = std::move(finish_);
      finish_ = nullptr;
      f();
    }
    return source_;
  }
  void complete(const std::string& error, int source = -1) {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    error_ = error;
    source_ = source;
    cv_.notify_all();
  }
  const char* name() const { return name_; }
  std::function<void()> finish_;  // set before submission, run once by wait()

 private:
  const char* name_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string error_;
  int source_ = -1;
};

class Group;

// One operation in flight or queued; touched only by the communication thread once queued.
struct Op {
  Collective c;
  std::shared_ptr<WorkImpl> work;
  std::shared_ptr<Group> group;
  enum Stage { Queued, Checking, CheckingCounts, Moving, Done } stage = Queued;
  MPI_Request req = MPI_REQUEST_NULL;
  Clock::time_point deadline;
  std::vector<int64_t> desc, descs;  // this rank's description, and every rank's
  std::vector<int64_t> counts, all_counts;
  // The buffers the data moves through (set on the submitting thread).
  void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;             // elements
  Tensor send_buf, recv_buf;    // keep the memory of send/recv alive
  std::vector<int> a2a_send_counts, a2a_send_displs, a2a_recv_counts, a2a_recv_displs;
  std::vector<char> message;    // Send / Recv: a header and the bytes
  // NCCL
  bool on_nccl = false;
  NcclCall nccl;
  bool is_collective() const { return c.kind != OpKind::Send && c.kind != OpKind::Recv; }
};

// ---- the runtime: MPI, the communication thread, failures

struct Runtime {
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv, cv_done;
  std::deque<std::shared_ptr<Op>> queue;        // under mu
  std::deque<std::function<void()>> controls;   // blocking MPI calls to run on the thread (under mu)
  bool ready = false;
  std::string init_error;

  int world_rank = 0, world_size = 1;
  MPI_Comm notice_comm = MPI_COMM_NULL;
  MPI_Request notice_req = MPI_REQUEST_NULL;
  char notice_buf[kNoticeBytes];
  std::vector<bool> noticed;                    // ranks that sent a failure notice

  std::string failure;          // under mu: why every operation now fails ("" while healthy)
  std::string peer_failure;     // the first other rank's message ("rank R failed: ...")
  std::atomic<bool> broken{false};
  std::function<void(const std::string&)> on_peer_failure;
  const NcclModule* nccl = nullptr;
  double timeout = 1800;

  // Requests from other threads (under mu).
  bool report_requested = false, report_done = false;
  std::string report_message;
  bool propagated = false;
  bool finalize_requested = false, finalize_done = false;
  std::string finalize_error;
  bool stopped = false;         // the thread has left its loop (MPI finalized or abandoned)
  bool finalized = false;
};

Runtime* g_rt = nullptr;

void fail_everything(Runtime& rt, std::vector<std::shared_ptr<Op>>& inflight, const std::string& why);

// ---- groups

class Group final : public ProcessGroup, public std::enable_shared_from_this<Group> {
 public:
  Group(MPI_Comm comm, MPI_Comm p2p, int rank, std::vector<int> world_ranks, const char* backend, double timeout)
      : comm_(comm), p2p_(p2p), rank_(rank), world_ranks_(std::move(world_ranks)), backend_(backend),
        timeout_(timeout) {}
  int rank() const override { return rank_; }
  int size() const override { return int(world_ranks_.size()); }
  const std::vector<int>& world_ranks() const override { return world_ranks_; }
  const char* backend() const override { return backend_; }
  bool destroyed() const override { return destroyed_; }
  std::shared_ptr<Work> submit(Collective c) override;
  std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks, double timeout_seconds) override;
  void destroy() override;

  MPI_Comm comm_, p2p_;
  int rank_;
  std::vector<int> world_ranks_;
  const char* backend_;
  double timeout_;
  bool destroyed_ = false;
  void* nccl_comm_ = nullptr;
  int device_ = 0;
};

// Runs fn on the communication thread and waits for it (MPI calls that block briefly and
// must keep their place among the collectives: communicator creation).
void run_on_thread(Runtime& rt, std::function<void()> fn) {
  std::exception_ptr error;
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    if (rt.stopped) TIDE_FAIL("distributed: MPI has stopped in this process");
    if (!rt.failure.empty()) TIDE_FAIL("distributed: ", rt.failure);
    rt.controls.push_back([&] {
      try {
        fn();
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> l(rt.mu);
      done = true;
      rt.cv_done.notify_all();
    });
    rt.cv.notify_all();
  }
  std::unique_lock<std::mutex> lock(rt.mu);
  rt.cv_done.wait(lock, [&] { return done; });
  if (error) std::rethrow_exception(error);
}

// Describes the argument the ranks compare.
std::vector<int64_t> describe(const Collective& c) {
  std::vector<int64_t> d(kDescLen, 0);
  d[kKind] = int64_t(c.kind);
  d[kDtype] = -1;
  const Tensor* t = nullptr;
  switch (c.kind) {
    case OpKind::AllReduce: case OpKind::Broadcast: case OpKind::Reduce: t = &c.tensor; break;
    case OpKind::AllGather: case OpKind::AllGatherIntoTensor: case OpKind::Gather: t = &c.input; break;
    case OpKind::Scatter: case OpKind::ReduceScatter: t = &c.output; break;
    case OpKind::AllToAll: d[kDtype] = int64_t(c.inputs[0].dtype()); break;
    default: break;
  }
  if (t) {
    d[kDtype] = int64_t(t->dtype());
    d[kNumel] = t->numel();
    d[kNdim] = t->dim();
    for (int i = 0; i < t->dim(); ++i) d[kSizes + i] = t->size(i);
  }
  if (c.kind == OpKind::Broadcast || c.kind == OpKind::Reduce || c.kind == OpKind::Gather ||
      c.kind == OpKind::Scatter)
    d[kRoot] = c.root;
  if (c.kind == OpKind::AllReduce || c.kind == OpKind::Reduce || c.kind == OpKind::ReduceScatter)
    d[kOp] = int64_t(c.op);
  return d;
}

std::string desc_tensor(const int64_t* d) {
  std::string s = d[kDtype] < 0 ? "?" : std::string(dtype_name(DType(d[kDtype])));
  Dims sizes;
  for (int i = 0; i < d[kNdim] && i < kMaxDims; ++i) sizes.push_back(d[kSizes + i]);
  return s + " " + sizes.str();
}

// "rank 0 float32 {3}, rank 1 float32 {4}": each rank's value, for a mismatch message.
std::string per_rank(const Group& g, const std::vector<int64_t>& all, int width,
                     const std::function<std::string(const int64_t*)>& text) {
  std::string out;
  int n = g.size();
  for (int r = 0; r < n; ++r) {
    if (r == 8 && n > 9) {
      out += ", ... (" + std::to_string(n - 8) + " more)";
      break;
    }
    if (r) out += ", ";
    out += "rank " + std::to_string(g.world_ranks_[r]) + " " + text(all.data() + size_t(r) * width);
  }
  return out;
}

// The mismatch among the gathered descriptions, or "".
std::string compare_descriptions(const Group& g, const Op& op) {
  const auto& all = op.descs;
  int n = g.size();
  auto differs = [&](int field, int count = 1) {
    for (int r = 1; r < n; ++r)
      for (int k = 0; k < count; ++k)
        if (all[size_t(r) * kDescLen + field + k] != all[field + k]) return true;
    return false;
  };
  const char* name = op_name(op.c.kind);
  if (differs(kKind))
    return std::string(name) + ": the ranks called different operations: " +
           per_rank(g, all, kDescLen, [](const int64_t* d) { return std::string(op_name(OpKind(d[kKind]))); });
  if (differs(kDtype) || differs(kNdim) || differs(kSizes, kMaxDims)) {
    if (op.c.kind == OpKind::AllToAll)
      return std::string(name) + ": the ranks passed different dtypes: " +
             per_rank(g, all, kDescLen, [](const int64_t* d) { return std::string(dtype_name(DType(d[kDtype]))); });
    return std::string(name) + ": the ranks passed different tensors: " + per_rank(g, all, kDescLen, desc_tensor);
  }
  if (differs(kRoot)) {
    const char* what = op.c.kind == OpKind::Broadcast || op.c.kind == OpKind::Scatter ? "src" : "dst";
    return std::string(name) + ": the ranks passed different " + what + " ranks: " +
           per_rank(g, all, kDescLen, [&](const int64_t* d) {
             return std::string(what) + " " + std::to_string(g.world_ranks_[size_t(d[kRoot])]);
           });
  }
  if (differs(kOp))
    return std::string(name) + ": the ranks passed different reductions: " +
           per_rank(g, all, kDescLen, [](const int64_t* d) { return std::string(reduce_op_name(ReduceOp(d[kOp]))); });
  return "";
}

// all_to_all: rank i sends counts[i][j] elements to j, which expects counts[j][n + i].
std::string compare_counts(const Group& g, const Op& op) {
  int n = g.size();
  const auto& m = op.all_counts;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      int64_t sent = m[size_t(i) * 2 * n + j], expected = m[size_t(j) * 2 * n + n + i];
      if (sent != expected)
        return std::string("all_to_all: rank ") + std::to_string(g.world_ranks_[i]) + " sends " +
               std::to_string(sent) + " elements to rank " + std::to_string(g.world_ranks_[j]) + ", which expects " +
               std::to_string(expected) + " (output_tensor_list[" + std::to_string(i + 1) + "] there)";
    }
  return "";
}

// ---- starting the stages (communication thread)

void start_check(Op& op) {
  Group& g = *op.group;
  op.desc = describe(op.c);
  op.descs.assign(size_t(g.size()) * kDescLen, 0);
  int rc = MPI_Iallgather(op.desc.data(), kDescLen, MPI_INT64_T, op.descs.data(), kDescLen, MPI_INT64_T, g.comm_,
                          &op.req);
  if (rc != MPI_SUCCESS) TIDE_FAIL(op_name(op.c.kind), ": MPI_Iallgather failed: ", mpi_error(rc));
  op.stage = Op::Checking;
}

void start_counts(Op& op) {
  Group& g = *op.group;
  int n = g.size();
  op.counts.assign(size_t(2) * n, 0);
  for (int j = 0; j < n; ++j) {
    op.counts[j] = op.c.inputs[j].numel();
    op.counts[n + j] = op.c.outputs[j].numel();
  }
  op.all_counts.assign(size_t(2) * n * n, 0);
  int rc = MPI_Iallgather(op.counts.data(), 2 * n, MPI_INT64_T, op.all_counts.data(), 2 * n, MPI_INT64_T, g.comm_,
                          &op.req);
  if (rc != MPI_SUCCESS) TIDE_FAIL("all_to_all: MPI_Iallgather failed: ", mpi_error(rc));
  op.stage = Op::CheckingCounts;
}

// The p2p header: dtype, ndim, sizes.
constexpr size_t kHeaderBytes = sizeof(int64_t) * (2 + kMaxDims);

void start_data(Op& op) {
  Group& g = *op.group;
  const Collective& c = op.c;
  op.stage = Op::Moving;
  if (op.on_nccl) {
    g_rt->nccl->start(g.nccl_comm_, op.nccl);
    return;
  }
  DType dt = c.kind == OpKind::AllToAll ? c.inputs[0].dtype()
             : c.kind == OpKind::Barrier ? DType::UInt8
             : (c.tensor.defined() ? c.tensor : c.input.defined() ? c.input : c.output).dtype();
  MPI_Datatype type = mpi_type(dt);
  int n = int(op.count);
  int rc = MPI_SUCCESS;
  switch (c.kind) {
    case OpKind::AllReduce:
      rc = MPI_Iallreduce(MPI_IN_PLACE, op.recv, n, type, mpi_op(c.op, dt), g.comm_, &op.req);
      break;
    case OpKind::Broadcast: rc = MPI_Ibcast(op.recv, n, type, c.root, g.comm_, &op.req); break;
    case OpKind::Reduce:
      rc = MPI_Ireduce(g.rank_ == c.root ? MPI_IN_PLACE : op.recv, op.recv, n, type, mpi_op(c.op, dt), c.root,
                       g.comm_, &op.req);
      break;
    case OpKind::AllGather: case OpKind::AllGatherIntoTensor:
      rc = MPI_Iallgather(op.send, n, type, op.recv, n, type, g.comm_, &op.req);
      break;
    case OpKind::Gather: rc = MPI_Igather(op.send, n, type, op.recv, n, type, c.root, g.comm_, &op.req); break;
    case OpKind::Scatter: rc = MPI_Iscatter(op.send, n, type, op.recv, n, type, c.root, g.comm_, &op.req); break;
    case OpKind::ReduceScatter:
      rc = MPI_Ireduce_scatter_block(op.send, op.recv, n, type, mpi_op(c.op, dt), g.comm_, &op.req);
      break;
    case OpKind::AllToAll:
      rc = MPI_Ialltoallv(op.send, op.a2a_send_counts.data(), op.a2a_send_displs.data(), type, op.recv,
                          op.a2a_recv_counts.data(), op.a2a_recv_displs.data(), type, g.comm_, &op.req);
      break;
    case OpKind::Barrier: rc = MPI_Ibarrier(g.comm_, &op.req); break;
    case OpKind::Send:
      rc = MPI_Isend(op.message.data(), int(op.message.size()), MPI_BYTE, c.peer, c.tag, g.p2p_, &op.req);
      break;
    case OpKind::Recv:
      rc = MPI_Irecv(op.message.data(), int(op.message.size()), MPI_BYTE, c.peer < 0 ? MPI_ANY_SOURCE : c.peer,
                     c.tag, g.p2p_, &op.req);
      break;
  }
  if (rc != MPI_SUCCESS) TIDE_FAIL(op_name(c.kind), ": MPI failed: ", mpi_error(rc));
}

// Starts an operation (Queued -> Checking or Moving).
void start(Op& op, Clock::time_point now) {
  op.deadline = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(op.group->timeout_));
  if (op.c.check && op.is_collective()) start_check(op);
  else start_data(op);
}

// The text of a failed receive's header check, or "".
std::string check_received(Op& op, const MPI_Status& st) {
  int bytes = 0;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  const Group& g = *op.group;
  std::string from = "rank " + std::to_string(g.world_ranks_[st.MPI_SOURCE]);
  if (size_t(bytes) < kHeaderBytes) return "recv: " + from + " sent a message that is not a tensor";
  int64_t h[2 + kMaxDims];
  std::memcpy(h, op.message.data(), kHeaderBytes);
  Dims sizes;
  for (int i = 0; i < h[1] && i < kMaxDims; ++i) sizes.push_back(h[2 + i]);
  const Tensor& t = op.c.tensor;
  if (DType(h[0]) != t.dtype() || sizes != t.sizes())
    return "recv: " + from + " sent a " + std::string(dtype_name(DType(h[0]))) + " tensor of shape " + sizes.str() +
           ", this rank expects " + std::string(dtype_name(t.dtype())) + " " + t.sizes().str();
  return "";
}

// Advances an operation whose request completed. Returns true when it is done.
bool advance(Op& op, const MPI_Status& st) {
  Group& g = *op.group;
  switch (op.stage) {
    case Op::Checking: {
      std::string bad = compare_descriptions(g, op);
      if (!bad.empty()) TIDE_FAIL(bad);
      if (op.c.kind == OpKind::AllToAll) start_counts(op);
      else start_data(op);
      return false;
    }
    case Op::CheckingCounts: {
      std::string bad = compare_counts(g, op);
      if (!bad.empty()) TIDE_FAIL(bad);
      start_data(op);
      return false;
    }
    case Op::Moving: {
      int source = -1;
      if (op.c.kind == OpKind::Recv) {
        if (st.MPI_ERROR == MPI_ERR_TRUNCATE)
          TIDE_FAIL("recv: rank ", g.world_ranks_[st.MPI_SOURCE], " sent more bytes than a ",
                    dtype_name(op.c.tensor.dtype()), " ", op.c.tensor.sizes().str(), " tensor holds");
        if (st.MPI_ERROR != MPI_SUCCESS) TIDE_FAIL("recv: MPI failed: ", mpi_error(st.MPI_ERROR));
        std::string bad = check_received(op, st);
        if (!bad.empty()) TIDE_FAIL(bad);
        source = st.MPI_SOURCE;
      }
      op.stage = Op::Done;
      op.work->complete("", source);
      return true;
    }
    default: return true;
  }
}

// ---- failure notices

// Sends this rank's failure to every other rank and waits (up to `grace`) until each has
// sent one too (it failed, or stopped because of this one). On the communication thread.
void announce_failure(Runtime& rt, const std::string& message, bool propagated, double grace) {
  std::string text = std::string(propagated ? "P" : "F") + std::to_string(rt.world_rank) + ":" + message;
  if (text.size() >= size_t(kNoticeBytes)) text.resize(kNoticeBytes - 1);
  std::vector<MPI_Request> sends;
  for (int r = 0; r < rt.world_size; ++r) {
    if (r == rt.world_rank) continue;
    sends.push_back(MPI_REQUEST_NULL);
    MPI_Isend(text.data(), int(text.size()), MPI_CHAR, r, kNoticeTag, rt.notice_comm, &sends.back());
  }
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace));
  for (;;) {
    int sent = 0;
    MPI_Testall(int(sends.size()), sends.data(), &sent, MPI_STATUSES_IGNORE);
    int heard = 0;
    for (int r = 0; r < rt.world_size; ++r) heard += r == rt.world_rank || rt.noticed[r];
    if ((sent && heard == rt.world_size) || Clock::now() > deadline) break;
    int flag = 0;
    MPI_Status st;
    MPI_Test(&rt.notice_req, &flag, &st);
    if (flag) {
      rt.noticed[st.MPI_SOURCE] = true;
      MPI_Irecv(rt.notice_buf, kNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag, rt.notice_comm, &rt.notice_req);
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

// Checks the notice receive; on a failure notice from another rank, fails everything.
void poll_notices(Runtime& rt, std::vector<std::shared_ptr<Op>>& inflight) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Test(&rt.notice_req, &flag, &st);
    if (!flag) return;
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::string text(rt.notice_buf, size_t(std::max(n, 0)));
    rt.noticed[st.MPI_SOURCE] = true;
    MPI_Irecv(rt.notice_buf, kNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag, rt.notice_comm, &rt.notice_req);
    size_t colon = text.find(':');
    std::string message = colon == std::string::npos ? text : text.substr(colon + 1);
    bool propagated = !text.empty() && text[0] == 'P';
    std::string why = "rank " + std::to_string(st.MPI_SOURCE) + " failed: " + message;
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(rt.mu);
      if (rt.peer_failure.empty() && (!propagated || rt.failure.empty())) {
        rt.peer_failure = propagated ? message : why;
        first = true;
      }
    }
    if (first) {
      fail_everything(rt, inflight, rt.peer_failure);
      if (rt.on_peer_failure) rt.on_peer_failure(rt.peer_failure);
    }
  }
}

// Fails every operation in flight and queued with `why` (each message starts with its op's
// name), and every later one.
void fail_everything(Runtime& rt, std::vector<std::shared_ptr<Op>>& inflight, const std::string& why) {
  std::deque<std::shared_ptr<Op>> queued;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    if (rt.failure.empty()) rt.failure = why;
    rt.broken = true;
    queued.swap(rt.queue);
  }
  for (auto& op : inflight) op->work->complete(std::string(op_name(op->c.kind)) + ": " + why);
  for (auto& op : queued) op->work->complete(std::string(op_name(op->c.kind)) + ": " + why);
  // Requests in flight are left to MPI: they cannot be cancelled, and the process will end.
  inflight.clear();
}

// ---- the communication thread

void finalize_on_thread(Runtime& rt, std::vector<std::shared_ptr<Op>>& inflight);

void thread_main(Runtime& rt) {
  int provided = 0;
  int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    if (rc != MPI_SUCCESS) {
      rt.init_error = "MPI_Init_thread failed: " + mpi_error(rc);
    } else {
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      MPI_Comm_rank(MPI_COMM_WORLD, &rt.world_rank);
      MPI_Comm_size(MPI_COMM_WORLD, &rt.world_size);
      MPI_Comm_dup(MPI_COMM_WORLD, &rt.notice_comm);
      MPI_Comm_set_errhandler(rt.notice_comm, MPI_ERRORS_RETURN);
      rt.noticed.assign(size_t(rt.world_size), false);
      MPI_Irecv(rt.notice_buf, kNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag, rt.notice_comm, &rt.notice_req);
      create_half_ops();
    }
    rt.ready = true;
    rt.cv_done.notify_all();
    if (rc != MPI_SUCCESS) {
      rt.stopped = true;
      return;
    }
  }
  std::vector<std::shared_ptr<Op>> inflight;
  auto idle_since = Clock::now();
  for (;;) {
    std::deque<std::function<void()>> controls;
    bool report = false, finalize = false;
    {
      std::lock_guard<std::mutex> lock(rt.mu);
      controls.swap(rt.controls);
      report = rt.report_requested && !rt.report_done;
      finalize = rt.finalize_requested && !rt.finalize_done;
      // Start queued operations: collectives in order, each once the collectives before it
      // move data; point-to-point operations at once.
      while (!rt.queue.empty()) {
        auto& next = rt.queue.front();
        bool blocked = false;
        if (next->is_collective())
          for (auto& f : inflight)
            if (f->is_collective() && f->stage != Op::Moving) blocked = true;
        if (blocked) break;
        auto op = std::move(next);
        rt.queue.pop_front();
        inflight.push_back(op);
        try {
          start(*op, Clock::now());
        } catch (const std::exception& e) {
          op->work->complete(e.what());
          inflight.pop_back();
        }
      }
    }
    for (auto& fn : controls) fn();
    poll_notices(rt, inflight);
    if (report) {
      std::string message;
      bool propagated;
      {
        std::lock_guard<std::mutex> lock(rt.mu);
        message = rt.report_message;
        propagated = !rt.peer_failure.empty();
      }
      fail_everything(rt, inflight, "this rank failed: " + message);
      announce_failure(rt, message, propagated, std::min(rt.timeout, 30.0));
      std::lock_guard<std::mutex> lock(rt.mu);
      rt.report_done = true;
      rt.stopped = true;
      rt.cv_done.notify_all();
      return;  // MPI is left as it is: the process ends
    }
    // Progress and completion.
    auto now = Clock::now();
    for (size_t i = 0; i < inflight.size();) {
      Op& op = *inflight[i];
      bool finished = false;
      try {
        if (op.on_nccl && op.stage == Op::Moving) {
          if (g_rt->nccl->done(op.group->nccl_comm_)) {
            op.stage = Op::Done;
            op.work->complete("");
            finished = true;
          }
        } else {
          int flag = 0;
          MPI_Status st;
          st.MPI_ERROR = MPI_SUCCESS;
          int rc = MPI_Test(&op.req, &flag, &st);
          if (rc != MPI_SUCCESS) {
            if (op.c.kind != OpKind::Recv) TIDE_FAIL(op_name(op.c.kind), ": MPI failed: ", mpi_error(rc));
            st.MPI_ERROR = rc;
          }
          if (flag || rc != MPI_SUCCESS) finished = advance(op, st);
        }
        if (!finished && now > op.deadline) {
          std::ostringstream os;
          os << op_name(op.c.kind) << ": timed out after " << op.group->timeout_
             << " s waiting for the other ranks of the group (a rank may be stuck, have failed, or have called "
                "another operation)";
          std::string why = os.str();
          op.work->complete(why);
          inflight.erase(inflight.begin() + long(i));
          fail_everything(rt, inflight, "the process group is broken: " + why);
          break;
        }
      } catch (const std::exception& e) {
        op.work->complete(e.what());
        finished = true;
      }
      if (finished) inflight.erase(inflight.begin() + long(i));
      else ++i;
    }
    if (finalize && inflight.empty()) {
      bool empty;
      {
        std::lock_guard<std::mutex> lock(rt.mu);
        empty = rt.queue.empty();
      }
      if (empty) {
        finalize_on_thread(rt, inflight);
        return;
      }
    }
    // Wait: spin while operations are young, then sleep a little longer each time; sleep on
    // the condition variable when idle (notices are checked every few milliseconds).
    if (!inflight.empty()) {
      double busy = seconds(Clock::now() - idle_since);
      if (busy < 0.0002) sched_yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(busy < 0.002 ? 20 : busy < 0.02 ? 100 : 500));
    } else {
      std::unique_lock<std::mutex> lock(rt.mu);
      rt.cv.wait_for(lock, std::chrono::milliseconds(5), [&] {
        return !rt.queue.empty() || !rt.controls.empty() || (rt.report_requested && !rt.report_done) ||
               (rt.finalize_requested && !rt.finalize_done);
      });
      idle_since = Clock::now();
    }
  }
}

// The end: a barrier of every rank that also watches for failure notices (so that a rank that
// finished never waits for one that failed), then MPI_Finalize.
void finalize_on_thread(Runtime& rt, std::vector<std::shared_ptr<Op>>& inflight) {
  std::string error;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    error = rt.failure;
  }
  if (error.empty()) {
    MPI_Request req;
    MPI_Ibarrier(rt.notice_comm, &req);
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(rt.timeout));
    for (;;) {
      int flag = 0;
      MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      if (flag) break;
      poll_notices(rt, inflight);
      {
        std::lock_guard<std::mutex> lock(rt.mu);
        error = rt.failure;
      }
      if (!error.empty()) break;
      if (Clock::now() > deadline) {
        error = "timed out after " + std::to_string(int(rt.timeout)) + " s waiting for the other ranks to finish";
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  if (!error.empty()) {
    // Another rank failed: tell the others that this one stopped too, so none waits for it.
    announce_failure(rt, error, true, std::min(rt.timeout, 30.0));
  } else {
    MPI_Cancel(&rt.notice_req);
    MPI_Wait(&rt.notice_req, MPI_STATUS_IGNORE);
    MPI_Comm_free(&rt.notice_comm);
    MPI_Finalize();
  }
  std::lock_guard<std::mutex> lock(rt.mu);
  rt.finalize_error = error;
  rt.finalize_done = true;
  rt.finalized = error.empty();
  rt.stopped = true;
  rt.cv_done.notify_all();
}

// ---- submission (calling thread)

// A contiguous tensor with t's elements: t itself, or a copy.
Tensor contiguous_copy(const Tensor& t) { return t.is_contiguous() ? t : t.clone(); }

// A buffer with the tensors one after another (each flattened).
Tensor pack(const std::vector<Tensor>& list, DType dt, Device dev) {
  int64_t total = 0;
  for (const Tensor& t : list) total += t.numel();
  Tensor buf = Tensor::empty({total}, dt, dev);
  int64_t off = 0;
  for (const Tensor& t : list) {
    Tensor dst = Tensor::make_view(buf.storage(), t.sizes(), contiguous_strides(t.sizes()), off, dt);
    ops::copy_(dst, t);
    off += t.numel();
  }
  return buf;
}

// Copies consecutive pieces of buf into the tensors of list.
void unpack(const Tensor& buf, std::vector<Tensor>& list) {
  int64_t off = 0;
  for (Tensor& t : list) {
    Tensor src = Tensor::make_view(buf.storage(), t.sizes(), contiguous_strides(t.sizes()), off, t.dtype());
    ops::copy_(t, src);
    off += t.numel();
  }
}

// Finishing touches on the waiting thread: the result of AVG divided by the group's size; a
// staging buffer copied back into the tensor the user passed.
std::function<void()> result_into(Tensor target, Tensor buf, bool divide, int size) {
  return [target, buf, divide, size]() mutable {
    if (divide) ops::binary(BinaryOp::Div, buf, Scalar(double(size)), &buf);
    if (!buf.same(target)) ops::copy_(target, buf);
    else target.storage()->bump_version();
  };
}

void prepare_mpi(Op& op) {
  Collective& c = op.c;
  Group& g = *op.group;
  int n = g.size();
  switch (c.kind) {
    case OpKind::AllReduce: case OpKind::Broadcast: case OpKind::Reduce: {
      op.recv_buf = contiguous_copy(c.tensor);
      op.recv = op.recv_buf.data_ptr();
      op.count = size_t(c.tensor.numel());
      bool writes = c.kind != OpKind::Reduce || g.rank_ == c.root;
      if (c.kind == OpKind::Broadcast) writes = g.rank_ != c.root;
      if (writes) op.work->finish_ = result_into(c.tensor, op.recv_buf, c.op == ReduceOp::Avg && c.kind != OpKind::Broadcast, n);
      break;
    }
    case OpKind::AllGather: case OpKind::AllGatherIntoTensor: {
      op.send_buf = contiguous_copy(c.input);
      op.send = op.send_buf.data_ptr();
      op.count = size_t(c.input.numel());
      if (c.kind == OpKind::AllGatherIntoTensor) {
        op.recv_buf = contiguous_copy(c.output);
        op.work->finish_ = result_into(c.output, op.recv_buf, false, n);
      } else {
        op.recv_buf = Tensor::empty({int64_t(n) * c.input.numel()}, c.input.dtype(), c.input.device());
        Tensor buf = op.recv_buf;
        std::vector<Tensor> outs = c.outputs;
        op.work->finish_ = [buf, outs]() mutable { unpack(buf, outs); };
      }
      op.recv = op.recv_buf.data_ptr();
      break;
    }
    case OpKind::Gather: {
      op.send_buf = contiguous_copy(c.input);
      op.send = op.send_buf.data_ptr();
      op.count = size_t(c.input.numel());
      if (g.rank_ == c.root) {
        op.recv_buf = Tensor::empty({int64_t(n) * c.input.numel()}, c.input.dtype(), c.input.device());
        op.recv = op.recv_buf.data_ptr();
        Tensor buf = op.recv_buf;
        std::vector<Tensor> outs = c.outputs;
        op.work->finish_ = [buf, outs]() mutable { unpack(buf, outs); };
      }
      break;
    }
    case OpKind::Scatter: {
      if (g.rank_ == c.root) {
        op.send_buf = pack(c.inputs, c.output.dtype(), c.output.device());
        op.send = op.send_buf.data_ptr();
      }
      op.recv_buf = contiguous_copy(c.output);
      op.recv = op.recv_buf.data_ptr();
      op.count = size_t(c.output.numel());
      op.work->finish_ = result_into(c.output, op.recv_buf, false, n);
      break;
    }
    case OpKind::ReduceScatter: {
      op.send_buf = pack(c.inputs, c.output.dtype(), c.output.device());
      op.send = op.send_buf.data_ptr();
      op.recv_buf = contiguous_copy(c.output);
      op.recv = op.recv_buf.data_ptr();
      op.count = size_t(c.output.numel());
      op.work->finish_ = result_into(c.output, op.recv_buf, c.op == ReduceOp::Avg, n);
      break;
    }
    case OpKind::AllToAll: {
      DType dt = c.inputs[0].dtype();
      op.send_buf = pack(c.inputs, dt, c.inputs[0].device());
      int64_t total = 0;
      for (const Tensor& t : c.outputs) total += t.numel();
      op.recv_buf = Tensor::empty({total}, dt, c.inputs[0].device());
      op.send = op.send_buf.data_ptr();
      op.recv = op.recv_buf.data_ptr();
      int so = 0, ro = 0;
      for (int j = 0; j < n; ++j) {
        op.a2a_send_counts.push_back(int(c.inputs[j].numel()));
        op.a2a_send_displs.push_back(so);
        so += int(c.inputs[j].numel());
        op.a2a_recv_counts.push_back(int(c.outputs[j].numel()));
        op.a2a_recv_displs.push_back(ro);
        ro += int(c.outputs[j].numel());
      }
      Tensor buf = op.recv_buf;
      std::vector<Tensor> outs = c.outputs;
      op.work->finish_ = [buf, outs]() mutable { unpack(buf, outs); };
      break;
    }
    case OpKind::Barrier: break;
    case OpKind::Send: case OpKind::Recv: {
      const Tensor& t = c.tensor;
      op.message.assign(kHeaderBytes + t.nbytes(), 0);
      int64_t h[2 + kMaxDims] = {int64_t(t.dtype()), t.dim()};
      for (int i = 0; i < t.dim(); ++i) h[2 + i] = t.size(i);
      std::memcpy(op.message.data(), h, kHeaderBytes);
      Tensor view = Tensor::from_blob(op.message.data() + kHeaderBytes, t.sizes(), t.dtype());
      if (c.kind == OpKind::Send) {
        ops::copy_(view, t);
      } else {  // the message lives in the Op, which the finishing closure holds
        Tensor target = t;
        op.work->finish_ = [target, view]() mutable { ops::copy_(target, view); };
      }
      break;
    }
  }
}

// NCCL: the same operations on CUDA tensors; buffers as for MPI.
void prepare_nccl(Op& op) {
  Collective& c = op.c;
  Group& g = *op.group;
  int n = g.size();
  NcclCall& call = op.nccl;
  op.on_nccl = true;
  auto transfer = [](bool is_send, void* p, size_t count, int peer) {
    return NcclCall::Transfer{is_send, p, count, peer};
  };
  switch (c.kind) {
    case OpKind::AllReduce: case OpKind::Broadcast: case OpKind::Reduce: {
      op.recv_buf = contiguous_copy(c.tensor);
      call.kind = c.kind == OpKind::AllReduce ? NcclCall::AllReduce
                  : c.kind == OpKind::Broadcast ? NcclCall::Broadcast : NcclCall::Reduce;
      call.dtype = c.tensor.dtype();
      call.op = c.op;
      call.root = c.root;
      call.buffer = op.recv_buf.data_ptr();
      call.count = size_t(c.tensor.numel());
      bool writes = c.kind == OpKind::AllReduce || (c.kind == OpKind::Reduce ? g.rank_ == c.root : g.rank_ != c.root);
      if (writes) op.work->finish_ = result_into(c.tensor, op.recv_buf, false, n);
      break;
    }
    case OpKind::AllGather: case OpKind::AllGatherIntoTensor: {
      op.send_buf = contiguous_copy(c.input);
      op.recv_buf = c.kind == OpKind::AllGatherIntoTensor
                        ? contiguous_copy(c.output)
                        : Tensor::empty({int64_t(n) * c.input.numel()}, c.input.dtype(), c.input.device());
      call.kind = NcclCall::AllGather;
      call.dtype = c.input.dtype();
      call.send = op.send_buf.data_ptr();
      call.buffer = op.recv_buf.data_ptr();
      call.count = size_t(c.input.numel());
      Tensor buf = op.recv_buf;
      if (c.kind == OpKind::AllGatherIntoTensor) {
        op.work->finish_ = result_into(c.output, buf, false, n);
      } else {
        std::vector<Tensor> outs = c.outputs;
        op.work->finish_ = [buf, outs]() mutable { unpack(buf, outs); };
      }
      break;
    }
    case OpKind::ReduceScatter: {
      op.send_buf = pack(c.inputs, c.output.dtype(), c.output.device());
      op.recv_buf = contiguous_copy(c.output);
      call.kind = NcclCall::ReduceScatter;
      call.dtype = c.output.dtype();
      call.op = c.op;
      call.send = op.send_buf.data_ptr();
      call.buffer = op.recv_buf.data_ptr();
      call.count = size_t(c.output.numel());
      op.work->finish_ = result_into(c.output, op.recv_buf, false, n);
      break;
    }
    case OpKind::Gather: case OpKind::Scatter: case OpKind::AllToAll: case OpKind::Send: case OpKind::Recv: {
      call.kind = NcclCall::PointToPoint;
      DType dt = c.kind == OpKind::AllToAll ? c.inputs[0].dtype()
                 : c.kind == OpKind::Gather ? c.input.dtype() : c.kind == OpKind::Scatter ? c.output.dtype()
                 : c.tensor.dtype();
      call.dtype = dt;
      Device dev = c.kind == OpKind::AllToAll ? c.inputs[0].device()
                   : (c.tensor.defined() ? c.tensor : c.input.defined() ? c.input : c.output).device();
      if (c.kind == OpKind::Send || c.kind == OpKind::Recv) {
        op.recv_buf = contiguous_copy(c.tensor);
        call.transfers.push_back(transfer(c.kind == OpKind::Send, op.recv_buf.data_ptr(), size_t(c.tensor.numel()), c.peer));
        if (c.kind == OpKind::Recv) op.work->finish_ = result_into(c.tensor, op.recv_buf, false, n);
        break;
      }
      std::vector<Tensor> outs = c.kind == OpKind::Gather ? c.outputs : c.kind == OpKind::Scatter
                                                                           ? std::vector<Tensor>{c.output}
                                                                           : c.outputs;
      std::vector<Tensor> ins = c.kind == OpKind::Gather ? std::vector<Tensor>{c.input} : c.inputs;
      if (!ins.empty()) op.send_buf = pack(ins, dt, dev);
      int64_t total = 0;
      for (const Tensor& t : outs) total += t.numel();
      op.recv_buf = Tensor::empty({total}, dt, dev);
      auto* sp = static_cast<char*>(op.send_buf.defined() ? op.send_buf.data_ptr() : nullptr);
      auto* rp = static_cast<char*>(op.recv_buf.data_ptr());
      size_t item = dtype_size(dt);
      if (c.kind == OpKind::Gather) {
        size_t k = size_t(c.input.numel());
        call.transfers.push_back(transfer(true, sp, k, c.root));
        if (g.rank_ == c.root)
          for (int j = 0; j < n; ++j) call.transfers.push_back(transfer(false, rp + j * k * item, k, j));
      } else if (c.kind == OpKind::Scatter) {
        size_t k = size_t(c.output.numel());
        if (g.rank_ == c.root)
          for (int j = 0; j < n; ++j) call.transfers.push_back(transfer(true, sp + j * k * item, k, j));
        call.transfers.push_back(transfer(false, rp, k, c.root));
      } else {
        size_t so = 0, ro = 0;
        for (int j = 0; j < n; ++j) {
          call.transfers.push_back(transfer(true, sp + so * item, size_t(c.inputs[j].numel()), j));
          call.transfers.push_back(transfer(false, rp + ro * item, size_t(c.outputs[j].numel()), j));
          so += size_t(c.inputs[j].numel());
          ro += size_t(c.outputs[j].numel());
        }
      }
      Tensor buf = op.recv_buf;
      if (!(c.kind == OpKind::Gather && g.rank_ != c.root))
        op.work->finish_ = [buf, outs]() mutable { unpack(buf, outs); };
      break;
    }
    case OpKind::Barrier: call.kind = NcclCall::Barrier; break;
  }
}

std::shared_ptr<Work> Group::submit(Collective c) {
  Runtime& rt = *g_rt;
  TIDE_CHECK(!destroyed_, op_name(c.kind), ": the process group was destroyed");
  check_collective(c, rank_, size());
  bool nccl = std::strcmp(backend_, "nccl") == 0;
  if (c.kind != OpKind::Barrier) {
    const Tensor& any = c.kind == OpKind::AllToAll ? c.inputs[0]
                        : c.tensor.defined() ? c.tensor : c.input.defined() ? c.input : c.output;
    if (nccl)
      TIDE_CHECK(any.device().is_cuda(), op_name(c.kind), ": the nccl backend moves CUDA tensors, this one is on ",
                 any.device().str(), " (use a group with backend \"mpi\" for CPU tensors)");
    else
      TIDE_CHECK(any.device().is_cpu(), op_name(c.kind), ": the mpi backend moves CPU tensors, this one is on ",
                 any.device().str(), " (use backend \"nccl\" for CUDA tensors)");
  }
  auto op = std::make_shared<Op>();
  op->work = std::make_shared<WorkImpl>(op_name(c.kind));
  op->group = shared_from_this();
  op->c = std::move(c);
  if (nccl) prepare_nccl(*op);
  else prepare_mpi(*op);
  if (op->work->finish_) {  // the closure keeps the operation's buffers alive until wait()
    auto inner = std::move(op->work->finish_);
    std::shared_ptr<Op> hold = op;
    op->work->finish_ = [inner, hold]() { inner(); };
  }
  auto work = op->work;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    if (rt.stopped) TIDE_FAIL(op_name(op->c.kind), ": MPI has stopped in this process");
    if (!rt.failure.empty()) TIDE_FAIL(op_name(op->c.kind), ": ", rt.failure);
    rt.queue.push_back(std::move(op));
    rt.cv.notify_all();
  }
  return work;
}

std::shared_ptr<ProcessGroup> Group::new_group(const std::vector<int>& ranks, double timeout_seconds) {
  Runtime& rt = *g_rt;
  TIDE_CHECK(!destroyed_, "new_group: the process group was destroyed");
  for (size_t i = 0; i < ranks.size(); ++i) {
    TIDE_CHECK(ranks[i] >= 0 && ranks[i] < rt.world_size, "new_group: rank ", ranks[i],
               " is not a rank of the world (0..", rt.world_size - 1, ")");
    TIDE_CHECK(i == 0 || ranks[i] > ranks[i - 1], "new_group: ranks must be distinct");
  }
  TIDE_CHECK(!ranks.empty(), "new_group: expected at least one rank");
  int me = -1;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] == rt.world_rank) me = int(i);
  MPI_Comm comm = MPI_COMM_NULL, p2p = MPI_COMM_NULL;
  // Every rank of this group splits its communicator, in the order of its collectives: the
  // queue is drained first (a barrier through it), then the split runs on the thread.
  submit(Collective{})->wait();
  MPI_Comm base = comm_;
  run_on_thread(rt, [&] {
    MPI_Comm_split(base, me >= 0 ? 0 : MPI_UNDEFINED, me, &comm);
    if (comm != MPI_COMM_NULL) {
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      MPI_Comm_dup(comm, &p2p);
      MPI_Comm_set_errhandler(p2p, MPI_ERRORS_RETURN);
    }
  });
  std::vector<int> members = ranks;
  auto g = std::make_shared<Group>(comm, p2p, me, members, backend_, timeout_seconds);
  if (me >= 0 && nccl_comm_) {
    // NCCL: a communicator of the members, from an id that the group's first rank makes.
    char id[NcclModule::kIdBytes] = {};
    if (me == 0) rt.nccl->unique_id(id);
    run_on_thread(rt, [&] { MPI_Bcast(id, int(sizeof id), MPI_BYTE, 0, comm); });
    g->device_ = device_;
    g->nccl_comm_ = rt.nccl->comm_init(id, int(members.size()), me, device_);
  }
  return g;
}

void Group::destroy() { destroyed_ = true; }

// ---- the module's entry points

std::shared_ptr<ProcessGroup> module_init(const InitOptions& opts, const NcclModule* nccl,
                                          std::function<void(const std::string&)> on_peer_failure) {
  TIDE_CHECK(!g_rt, "init_process_group: MPI cannot start again in a process after destroy_process_group()");
  auto* rt = new Runtime();  // kept for the life of the process
  g_rt = rt;
  rt->timeout = opts.timeout_seconds;
  rt->nccl = nccl;
  rt->on_peer_failure = std::move(on_peer_failure);
  rt->thread = std::thread(thread_main, std::ref(*rt));
  {
    std::unique_lock<std::mutex> lock(rt->mu);
    rt->cv_done.wait(lock, [&] { return rt->ready; });
    TIDE_CHECK(rt->init_error.empty(), "init_process_group: ", rt->init_error);
  }
  MPI_Comm comm = MPI_COMM_NULL, p2p = MPI_COMM_NULL;
  run_on_thread(*rt, [&] {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &p2p);
    MPI_Comm_set_errhandler(p2p, MPI_ERRORS_RETURN);
  });
  std::vector<int> ranks(size_t(rt->world_size));
  for (int r = 0; r < rt->world_size; ++r) ranks[size_t(r)] = r;
  auto world = std::make_shared<Group>(comm, p2p, rt->world_rank, ranks, opts.backend == "nccl" ? "nccl" : "mpi",
                                       opts.timeout_seconds);
  if (nccl) {
    int devices = nccl->device_count();
    TIDE_CHECK(devices > 0, "init_process_group: the nccl backend needs a CUDA device, and this process sees none");
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    int device = (local ? std::atoi(local) : rt->world_rank) % devices;
    char id[NcclModule::kIdBytes] = {};
    if (rt->world_rank == 0) nccl->unique_id(id);
    run_on_thread(*rt, [&] { MPI_Bcast(id, int(sizeof id), MPI_BYTE, 0, comm); });
    world->device_ = device;
    world->nccl_comm_ = nccl->comm_init(id, rt->world_size, rt->world_rank, device);
  }
  // A script that ends without destroy_process_group still finalizes MPI (or mpirun reports
  // the rank as failed); after an uncaught error the process ends without it.
  std::atexit([] {
    Runtime& r = *g_rt;
    {
      std::lock_guard<std::mutex> lock(r.mu);
      if (r.stopped) return;
      r.finalize_requested = true;
      r.cv.notify_all();
    }
    std::unique_lock<std::mutex> lock(r.mu);
    r.cv_done.wait(lock, [&] { return r.finalize_done; });
    lock.unlock();
    r.thread.join();
    if (!r.finalize_error.empty()) {
      std::fprintf(stderr, "tide: [rank %d] at exit: %s\n", r.world_rank, r.finalize_error.c_str());
      std::fflush(stderr);
      std::_Exit(1);
    }
  });
  return world;
}

void module_destroy() {
  Runtime& rt = *g_rt;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    if (rt.stopped) {
      TIDE_CHECK(rt.failure.empty(), "destroy_process_group: ", rt.failure);
      return;
    }
    rt.finalize_requested = true;
    rt.cv.notify_all();
  }
  {
    std::unique_lock<std::mutex> lock(rt.mu);
    while (!rt.finalize_done) {
      rt.cv_done.wait_for(lock, std::chrono::milliseconds(50));
    }
  }
  rt.thread.join();
  TIDE_CHECK(rt.finalize_error.empty(), "destroy_process_group: ", rt.finalize_error);
}

void module_uncaught_error(const std::string& message, void (*print)(const std::string& text)) {
  Runtime& rt = *g_rt;
  std::string peer;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    peer = rt.peer_failure;
  }
  std::string text = "[rank " + std::to_string(rt.world_rank) + "] " + message;
  if (!peer.empty() && message.find(peer) == std::string::npos) text += "\n(this rank stopped because " + peer + ")";
  print(text);
  {
    std::unique_lock<std::mutex> lock(rt.mu);
    if (!rt.stopped) {
      rt.report_requested = true;
      rt.report_message = message.substr(0, message.find("\nstack traceback:"));
      rt.cv.notify_all();
      rt.cv_done.wait(lock, [&] { return rt.report_done || rt.stopped; });
    }
  }
  if (rt.thread.joinable()) rt.thread.join();
}

const MpiModule kModule = {module_init, module_destroy, module_uncaught_error};

}  // namespace

}  // namespace tide::dist

extern "C" __attribute__((visibility("default"))) const tide::dist::MpiModule* tide_mpi_module(const char** why) {
  (void)why;
  return &tide::dist::kModule;
}
