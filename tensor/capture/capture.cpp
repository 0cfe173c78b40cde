// The recording table and the tape (capture.hpp).
#include "capture.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "../backend.hpp"
#include "../error.hpp"
#include "../random.hpp"
#include "../tensor.hpp"

namespace tide::capture {

namespace detail {
std::atomic<int> g_active{0};
std::atomic<const DeviceBackend*> g_cpu_backend{&kCpuBackend};
}  // namespace detail

struct Recording::State {
  std::shared_ptr<Tape> tape = std::make_shared<Tape>();
  int depth = 0;              // table calls open: calls made inside one are its own work
  bool broken = false;
  std::string reason;
  bool located = false;       // reason already names the script's line
  const char* op = "(no op)";  // the binding running
  Generator* generator = nullptr;
  uint64_t seed = 0, start_offset = 0;
};

namespace {

thread_local Recording::State* t_rec = nullptr;

// The recording on this thread when a table call is to be recorded (none inside another).
Recording::State* recorder() {
  Recording::State* s = t_rec;
  return s && s->depth == 0 ? s : nullptr;
}

struct InTable {
  explicit InTable(Recording::State* s) : s_(s) { ++s_->depth; }
  ~InTable() { --s_->depth; }
  InTable(const InTable&) = delete;
  InTable& operator=(const InTable&) = delete;
  Recording::State* s_;
};

void break_with(Recording::State* s, std::string reason) {
  if (s->broken) return;
  s->broken = true;
  s->reason = std::move(reason);
}

void add_address(Recording::State* s, const void* p) { s->tape->addresses.push_back(static_cast<const char*>(p)); }

void add_iter(Recording::State* s, const TensorIter& it) {
  if (it.numel() == 0) return;
  for (int o = 0; o < it.ntensors(); ++o) add_address(s, it.data(o));
}

void add_tensor(Recording::State* s, const Tensor& t) {
  if (t.defined() && t.numel() > 0) add_address(s, t.address());
}

void push(Recording::State* s, const char* entry, std::function<void(uint64_t, uint64_t)> run) {
  s->tape->steps.push_back({entry, s->op, std::move(run)});
}

const DeviceBackend& cpu() { return kCpuBackend; }

// A tensor result the entry allocated: a replay computes a new one and copies it over the
// recorded one, which later steps read.
void copy_over(const Tensor& recorded, const Tensor& fresh) {
  if (recorded.defined() && recorded.numel() > 0 && !recorded.same(fresh))
    std::memmove(recorded.address(), fresh.address(), recorded.nbytes());
}

void check_contiguous(Recording::State* s, const Tensor& t, const char* entry) {
  if (t.defined() && !t.is_contiguous())
    break_with(s, std::string(s->op) + ": the " + entry + " kernel returned a strided result (not captured)");
}

// ---- the recording table: each entry runs the CPU's and records the call by value.

void rec_unary(UnaryOp op, const TensorIter& it, DType compute) {
  Recording::State* s = recorder();
  if (!s) return cpu().unary(op, it, compute);
  { InTable in(s); cpu().unary(op, it, compute); }
  add_iter(s, it);
  push(s, "unary", [op, it, compute](uint64_t, uint64_t) { cpu().unary(op, it, compute); });
}

void rec_binary(BinaryOp op, const TensorIter& it, DType compute, const Scalar* a, const Scalar* b) {
  Recording::State* s = recorder();
  if (!s) return cpu().binary(op, it, compute, a, b);
  { InTable in(s); cpu().binary(op, it, compute, a, b); }
  add_iter(s, it);
  std::optional<Scalar> sa, sb;
  if (a) sa = *a;
  if (b) sb = *b;
  push(s, "binary", [op, it, compute, sa, sb](uint64_t, uint64_t) {
    cpu().binary(op, it, compute, sa ? &*sa : nullptr, sb ? &*sb : nullptr);
  });
}

void rec_copy(const TensorIter& it, DType out, DType in_dt) {
  Recording::State* s = recorder();
  if (!s) return cpu().copy(it, out, in_dt);
  { InTable in(s); cpu().copy(it, out, in_dt); }
  add_iter(s, it);
  push(s, "copy", [it, out, in_dt](uint64_t, uint64_t) { cpu().copy(it, out, in_dt); });
}

void rec_fill(const TensorIter& it, DType dt, Scalar value) {
  Recording::State* s = recorder();
  if (!s) return cpu().fill(it, dt, value);
  { InTable in(s); cpu().fill(it, dt, value); }
  add_iter(s, it);
  push(s, "fill", [it, dt, value](uint64_t, uint64_t) { cpu().fill(it, dt, value); });
}

void rec_where(const TensorIter& it, DType dt) {
  Recording::State* s = recorder();
  if (!s) return cpu().where(it, dt);
  { InTable in(s); cpu().where(it, dt); }
  add_iter(s, it);
  push(s, "where", [it, dt](uint64_t, uint64_t) { cpu().where(it, dt); });
}

void rec_clamp(const TensorIter& it, DType dt, const Scalar* lo, const Scalar* hi) {
  Recording::State* s = recorder();
  if (!s) return cpu().clamp(it, dt, lo, hi);
  { InTable in(s); cpu().clamp(it, dt, lo, hi); }
  add_iter(s, it);
  std::optional<Scalar> l, h;
  if (lo) l = *lo;
  if (hi) h = *hi;
  push(s, "clamp", [it, dt, l, h](uint64_t, uint64_t) { cpu().clamp(it, dt, l ? &*l : nullptr, h ? &*h : nullptr); });
}

void rec_random(RandomKind kind, void* out, DType dt, int64_t n, uint64_t seed, uint64_t offset,
                const RandomParams& params) {
  Recording::State* s = recorder();
  if (!s) return cpu().random(kind, out, dt, n, seed, offset, params);
  { InTable in(s); cpu().random(kind, out, dt, n, seed, offset, params); }
  if (&default_generator() != s->generator || seed != s->seed || offset < s->start_offset)
    break_with(s, std::string(s->op) + ": draws from a generator other than the default one (not captured)");
  if (n > 0) add_address(s, out);
  s->tape->uses_random = true;
  push(s, "random", [kind, out, dt, n, offset, params](uint64_t seed_now, uint64_t shift) {
    cpu().random(kind, out, dt, n, seed_now, offset + shift, params);
  });
}

void rec_optim_step(OptimKind kind, const TensorIter& it, DType dt, const void* options) {
  Recording::State* s = recorder();
  if (!s) return cpu().optim_step(kind, it, dt, options);
  { InTable in(s); cpu().optim_step(kind, it, dt, options); }
  add_iter(s, it);
  switch (kind) {
    case OptimKind::Sgd: {
      auto o = *static_cast<const ops::SgdOptions*>(options);
      push(s, "optim_step", [it, dt, o](uint64_t, uint64_t) { cpu().optim_step(OptimKind::Sgd, it, dt, &o); });
      break;
    }
    case OptimKind::Adam: {
      auto o = *static_cast<const ops::AdamOptions*>(options);
      push(s, "optim_step", [it, dt, o](uint64_t, uint64_t) { cpu().optim_step(OptimKind::Adam, it, dt, &o); });
      break;
    }
    case OptimKind::Rmsprop: {
      auto o = *static_cast<const ops::RmspropOptions*>(options);
      push(s, "optim_step", [it, dt, o](uint64_t, uint64_t) { cpu().optim_step(OptimKind::Rmsprop, it, dt, &o); });
      break;
    }
  }
}

void rec_copy_bytes(void* dst, Device dd, const void* src, Device sd, size_t nbytes) {
  Recording::State* s = recorder();
  if (!s) return cpu().copy_bytes(dst, dd, src, sd, nbytes);
  { InTable in(s); cpu().copy_bytes(dst, dd, src, sd, nbytes); }
  if (nbytes) add_address(s, dst), add_address(s, src);
  push(s, "copy_bytes", [dst, dd, src, sd, nbytes](uint64_t, uint64_t) { cpu().copy_bytes(dst, dd, src, sd, nbytes); });
}

Tensor rec_reduce(Reduction kind, const Tensor& x, const ReduceSpec& spec, const ReduceArgs& args) {
  Recording::State* s = recorder();
  if (!s) return cpu().reduce(kind, x, spec, args);
  Tensor r;
  { InTable in(s); r = cpu().reduce(kind, x, spec, args); }
  Tensor idx = args.indices ? *args.indices : Tensor();
  check_contiguous(s, r, "reduction"), check_contiguous(s, idx, "reduction");
  add_tensor(s, x), add_tensor(s, r), add_tensor(s, idx);
  push(s, "reduce", [kind, x, spec, args, r, idx](uint64_t, uint64_t) {
    Tensor fresh_idx;
    ReduceArgs a = args;
    a.indices = idx.defined() ? &fresh_idx : nullptr;
    copy_over(r, cpu().reduce(kind, x, spec, a));
    copy_over(idx, fresh_idx);
  });
  return r;
}

Tensor rec_scan(ScanKind kind, const Tensor& x, int d, DType out) {
  Recording::State* s = recorder();
  if (!s) return cpu().scan(kind, x, d, out);
  Tensor r;
  { InTable in(s); r = cpu().scan(kind, x, d, out); }
  check_contiguous(s, r, "scan");
  add_tensor(s, x), add_tensor(s, r);
  push(s, "scan", [kind, x, d, out, r](uint64_t, uint64_t) { copy_over(r, cpu().scan(kind, x, d, out)); });
  return r;
}

void rec_matmul(Tensor A, Tensor B, Tensor& C, const Dims& bshape, int64_t batch, const Scalar& alpha,
                const Scalar& beta, bool use_beta) {
  Recording::State* s = recorder();
  if (!s) return cpu().matmul(A, B, C, bshape, batch, alpha, beta, use_beta);
  { InTable in(s); cpu().matmul(A, B, C, bshape, batch, alpha, beta, use_beta); }
  add_tensor(s, A), add_tensor(s, B), add_tensor(s, C);
  push(s, "matmul", [A, B, C, bshape, batch, alpha, beta, use_beta](uint64_t, uint64_t) {
    Tensor c = C;
    cpu().matmul(A, B, c, bshape, batch, alpha, beta, use_beta);
  });
}

void rec_sort(const char* op, const Tensor& x, int d, int64_t k, bool descending, Tensor& values, Tensor& indices) {
  Recording::State* s = recorder();
  if (!s) return cpu().sort(op, x, d, k, descending, values, indices);
  { InTable in(s); cpu().sort(op, x, d, k, descending, values, indices); }
  add_tensor(s, x), add_tensor(s, values), add_tensor(s, indices);
  push(s, "sort", [op, x, d, k, descending, values, indices](uint64_t, uint64_t) {
    Tensor v = values, i = indices;
    cpu().sort(op, x, d, k, descending, v, i);
  });
}

void rec_host(const char* /*op*/, std::initializer_list<const Tensor*> operands, const std::function<void()>& work) {
  Recording::State* s = recorder();
  if (!s) return work();
  { InTable in(s); work(); }
  for (const Tensor* t : operands) add_tensor(s, *t);
  push(s, "host", [work](uint64_t, uint64_t) { work(); });
}

// The CPU's table with the work entries recording (memory and queries pass through).
const DeviceBackend kRecordingCpuBackend = [] {
  DeviceBackend t = kCpuBackend;
  t.copy_bytes = rec_copy_bytes;
  t.unary = rec_unary;
  t.binary = rec_binary;
  t.copy = rec_copy;
  t.fill = rec_fill;
  t.where = rec_where;
  t.clamp = rec_clamp;
  t.random = rec_random;
  t.optim_step = rec_optim_step;
  t.reduce = rec_reduce;
  t.scan = rec_scan;
  t.matmul = rec_matmul;
  t.sort = rec_sort;
  t.host = rec_host;
  return t;
}();

}  // namespace

namespace detail {

void host_access_slow() {
  if (Recording::State* s = recorder())
    break_with(s, std::string(s->op) + ": reads or writes tensor data on the host (a value read into Lua, "
                                       "printing, or an op without a device-table path)");
}

void allocated_slow(const std::shared_ptr<Storage>& st) {
  if (Recording::State* s = t_rec) s->tape->retained.push_back(st);
}

void other_device_slow(const char* device) {
  if (Recording::State* s = recorder())
    break_with(s, std::string(s->op) + ": runs on " + device + " (only CPU work is captured)");
}

}  // namespace detail

void Tape::replay() const {
  uint64_t seed = 0, shift = 0;
  if (uses_random) {
    Generator::Draw d = default_generator().reserve(int64_t(random_blocks), 4);
    seed = d.seed;
    shift = d.offset - start_offset;
  }
  for (const Step& s : steps) s.run(seed, shift);
}

bool Tape::touches(const void* p, size_t nbytes) const {
  const char* lo = static_cast<const char*>(p);
  return std::any_of(addresses.begin(), addresses.end(), [&](const char* a) { return a >= lo && a < lo + nbytes; });
}

bool Tape::touches_only(std::vector<std::pair<const char*, size_t>> known) const {
  for (const auto& st : retained) known.emplace_back(static_cast<const char*>(st->data()), st->nbytes());
  return std::all_of(addresses.begin(), addresses.end(), [&](const char* a) {
    return std::any_of(known.begin(), known.end(), [&](const auto& r) { return a >= r.first && a < r.first + r.second; });
  });
}

size_t Tape::retained_bytes() const {
  size_t n = 0;
  for (const auto& st : retained) n += st->nbytes();
  return n;
}

Recording::Recording() : state_(std::make_unique<State>()) {
  TIDE_CHECK(t_rec == nullptr, "torch.compile: a recording is already running on this thread");
  Generator& g = default_generator();
  state_->generator = &g;
  state_->seed = g.seed();
  state_->start_offset = g.offset();
  state_->tape->start_offset = state_->start_offset;
  t_rec = state_.get();
  if (detail::g_active.fetch_add(1) == 0) detail::g_cpu_backend.store(&kRecordingCpuBackend);
}

Recording::~Recording() {
  t_rec = nullptr;
  if (detail::g_active.fetch_sub(1) == 1) detail::g_cpu_backend.store(&kCpuBackend);
}

std::shared_ptr<Tape> Recording::finish() {
  State* s = state_.get();
  Generator& g = default_generator();
  if (&g != s->generator || g.seed() != s->seed || g.offset() < s->start_offset)
    break_with(s, "the default generator was reseeded or replaced (torch.manual_seed inside the function)");
  if (s->broken) return nullptr;
  s->tape->random_blocks = g.offset() - s->start_offset;
  return s->tape;
}

const std::string& Recording::reason() const { return state_->reason; }

bool recording_here() { return t_rec != nullptr; }
void set_current_op(const char* op) {
  if (t_rec) t_rec->op = op;
}
bool broken_here() { return t_rec && t_rec->broken; }
void set_break_location(const std::string& where) {
  if (t_rec && t_rec->broken && !t_rec->located) {
    t_rec->reason += " at " + where;
    t_rec->located = true;
  }
}
void mark_broken(std::string reason) {
  if (t_rec) break_with(t_rec, std::move(reason));
}

}  // namespace tide::capture
