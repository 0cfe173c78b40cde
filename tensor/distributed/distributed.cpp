// libtide's side of torch.distributed: the checks of one rank's arguments, and the loading of
// the MPI and NCCL modules (next to libtide, or named by TIDE_MPI_MODULE / TIDE_NCCL_MODULE)
// on first use, remembering why one could not be loaded.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "../module_loader.hpp"
#include "modules.hpp"

namespace tide::dist {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "SUM";
    case ReduceOp::Avg: return "AVG";
    case ReduceOp::Product: return "PRODUCT";
    case ReduceOp::Min: return "MIN";
    case ReduceOp::Max: return "MAX";
  }
  return "?";
}

const char* op_name(OpKind k) {
  switch (k) {
    case OpKind::AllReduce: return "all_reduce";
    case OpKind::Broadcast: return "broadcast";
    case OpKind::Reduce: return "reduce";
    case OpKind::AllGather: return "all_gather";
    case OpKind::AllGatherIntoTensor: return "all_gather_into_tensor";
    case OpKind::Gather: return "gather";
    case OpKind::Scatter: return "scatter";
    case OpKind::ReduceScatter: return "reduce_scatter";
    case OpKind::AllToAll: return "all_to_all";
    case OpKind::Barrier: return "barrier";
    case OpKind::Send: return "send";
    case OpKind::Recv: return "recv";
  }
  return "?";
}

namespace {

std::string describe(const Tensor& t) { return std::string(dtype_name(t.dtype())) + " " + t.sizes().str(); }

void check_tensor(const char* op, const Tensor& t, const char* what, const Device& device) {
  TIDE_CHECK(t.defined(), op, ": ", what, " is not a tensor (or was freed)");
  TIDE_CHECK(t.device() == device, op, ": ", what, " is on ", t.device().str(), ", the others on ", device.str());
}

// A list of `size` tensors, each of dtype/shape of `like`.
void check_list(const char* op, const std::vector<Tensor>& list, const char* what, int size, const Tensor& like,
                const char* like_what) {
  TIDE_CHECK(int(list.size()) == size, op, ": ", what, " has ", list.size(), " tensors, expected one per rank (", size,
             ")");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string name = std::string(what) + "[" + std::to_string(i + 1) + "]";
    check_tensor(op, list[i], name.c_str(), like.device());
    TIDE_CHECK(list[i].dtype() == like.dtype() && list[i].sizes() == like.sizes(), op, ": ", name, " is ",
               describe(list[i]), " but ", like_what, " is ", describe(like));
  }
}

void check_rank(const char* op, int r, int size, const char* what) {
  TIDE_CHECK(r >= 0 && r < size, op, ": ", what, " ", r, " is not a rank of the group (0..", size - 1, ")");
}

}  // namespace

void check_collective(const Collective& c, int rank, int size) {
  const char* op = op_name(c.kind);
  TIDE_CHECK(rank >= 0, op, ": this process is not a member of the group");
  const Tensor* main = nullptr;
  switch (c.kind) {
    case OpKind::AllReduce: case OpKind::Broadcast: case OpKind::Reduce: case OpKind::Send: case OpKind::Recv:
      main = &c.tensor;
      break;
    case OpKind::AllGather: case OpKind::AllGatherIntoTensor: case OpKind::Gather: main = &c.input; break;
    case OpKind::Scatter: case OpKind::ReduceScatter: main = &c.output; break;
    case OpKind::AllToAll:
      TIDE_CHECK(int(c.inputs.size()) == size && int(c.outputs.size()) == size, op, ": expected ", size,
                 " output and input tensors (one per rank), got ", c.outputs.size(), " and ", c.inputs.size());
      main = &c.inputs[0];
      break;
    case OpKind::Barrier: return;
  }
  TIDE_CHECK(main->defined(), op, ": the tensor argument is not a tensor (or was freed)");
  const Device dev = main->device();
  const DType dt = main->dtype();
  if (c.kind == OpKind::AllReduce || c.kind == OpKind::Reduce || c.kind == OpKind::ReduceScatter) {
    TIDE_CHECK(c.op != ReduceOp::Avg || is_floating(dt) || is_complex(dt), op,
               ": ReduceOp.AVG needs a floating-point or complex tensor, got ", dtype_name(dt),
               " (sum, then divide as the dtype allows)");
    TIDE_CHECK(!is_complex(dt) || (c.op != ReduceOp::Min && c.op != ReduceOp::Max), op, ": ReduceOp.",
               reduce_op_name(c.op), " is not defined on ", dtype_name(dt), " (complex numbers have no order)");
  }
  switch (c.kind) {
    case OpKind::Broadcast: case OpKind::Reduce: case OpKind::Gather: case OpKind::Scatter:
      check_rank(op, c.root, size, c.kind == OpKind::Broadcast || c.kind == OpKind::Scatter ? "src" : "dst");
      break;
    case OpKind::Send:
      check_rank(op, c.peer, size, "dst");
      TIDE_CHECK(c.peer != rank, op, ": a rank cannot send to itself (dst ", c.peer, ")");
      break;
    case OpKind::Recv:
      if (c.peer != -1) check_rank(op, c.peer, size, "src");
      TIDE_CHECK(c.peer != rank, op, ": a rank cannot receive from itself (src ", c.peer, ")");
      break;
    default: break;
  }
  if (c.kind == OpKind::Send || c.kind == OpKind::Recv)
    TIDE_CHECK(c.tag >= 0 && c.tag <= 32767, op, ": tag must be from 0 to 32767, got ", c.tag);
  switch (c.kind) {
    case OpKind::AllGather: check_list(op, c.outputs, "tensor_list", size, c.input, "tensor"); break;
    case OpKind::AllGatherIntoTensor:
      check_tensor(op, c.output, "output_tensor", dev);
      TIDE_CHECK(c.output.dtype() == dt && c.output.numel() == c.input.numel() * size, op, ": output_tensor is ",
                 describe(c.output), ", expected ", dtype_name(dt), " with ", size, " x ", c.input.numel(),
                 " elements (the input_tensor of every rank)");
      break;
    case OpKind::Gather:
      if (rank == c.root) check_list(op, c.outputs, "gather_list", size, c.input, "tensor");
      else TIDE_CHECK(c.outputs.empty(), op, ": gather_list is given on rank ", rank, ", which is not dst (", c.root, ")");
      break;
    case OpKind::Scatter:
      if (rank == c.root) check_list(op, c.inputs, "scatter_list", size, c.output, "tensor");
      else TIDE_CHECK(c.inputs.empty(), op, ": scatter_list is given on rank ", rank, ", which is not src (", c.root, ")");
      break;
    case OpKind::ReduceScatter: check_list(op, c.inputs, "input_list", size, c.output, "output"); break;
    case OpKind::AllToAll:
      for (int j = 0; j < size; ++j) {
        std::string in = "input_tensor_list[" + std::to_string(j + 1) + "]";
        std::string out = "output_tensor_list[" + std::to_string(j + 1) + "]";
        check_tensor(op, c.inputs[j], in.c_str(), dev);
        check_tensor(op, c.outputs[j], out.c_str(), dev);
        TIDE_CHECK(c.inputs[j].dtype() == dt && c.outputs[j].dtype() == dt, op, ": every tensor must have dtype ",
                   dtype_name(dt), " (of input_tensor_list[1])");
      }
      break;
    default: break;
  }
  const int64_t limit = 2147483647;
  auto fits = [&](const Tensor& t) {
    TIDE_CHECK(t.numel() <= limit / (c.kind == OpKind::AllGatherIntoTensor ? 1 : size), op, ": tensors of ",
               t.numel(), " elements are more than one message can carry (2^31 - 1 elements in all)");
  };
  fits(*main);
}

namespace {

// Opens a module (tensor/module_loader.hpp) and calls its entry point: the table, or null
// with `why` set.
template <typename Table, typename EntryFn>
const Table* load(const char* env_var, const char* file, const char* entry_name, const char* what, bool global,
                  std::string& why) {
  ModuleHandle h = open_module(file, env_var, global);
  if (!h.handle) {
    why = h.missing ? std::string("tide was built without ") + what + " (no " + h.path + ")"
                    : std::string("the ") + what + " module could not be loaded (" + h.error + ")";
    return nullptr;
  }
  auto fn = reinterpret_cast<EntryFn>(dlsym(h.handle, entry_name));
  if (!fn) {
    why = h.path + " has no entry point " + entry_name;
    return nullptr;
  }
  const char* reason = nullptr;
  const Table* t = fn(&reason);
  if (!t) why = reason ? reason : std::string(what) + " is not usable";
  return t;
}

// Whether an MPI launcher started this process (OpenMPI, PMIx, MPICH/Hydra).
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (const char* e = std::getenv(v); e && *e) return true;
  return false;
}

struct Modules {
  std::mutex mu;
  bool mpi_tried = false, nccl_tried = false;
  const MpiModule* mpi = nullptr;
  const NcclModule* nccl = nullptr;
  std::string mpi_why, nccl_why;
  std::shared_ptr<ProcessGroup> world;
  bool finalized = false;
};

Modules& modules() {
  static Modules* m = new Modules();  // never destroyed: used at exit
  return *m;
}

const MpiModule* mpi_module(Modules& m) {
  if (!m.mpi_tried) {
    m.mpi_tried = true;
    if (!launched_by_mpi()) {
      m.mpi_why = "this process was not started by mpirun (run `mpirun -n 2 tide script.lua`)";
    } else {
      m.mpi = load<MpiModule, TideMpiModuleFn>("TIDE_MPI_MODULE", "libtide_mpi.so", "tide_mpi_module", "MPI", true,
                                               m.mpi_why);
    }
  }
  return m.mpi;
}

const NcclModule* nccl_module(Modules& m) {
  if (!m.nccl_tried) {
    m.nccl_tried = true;
    m.nccl = load<NcclModule, TideNcclModuleFn>("TIDE_NCCL_MODULE", "libtide_nccl.so", "tide_nccl_module", "NCCL",
                                                false, m.nccl_why);
    if (m.nccl && !m.nccl->unavailable_reason().empty()) {
      m.nccl_why = m.nccl->unavailable_reason();
      m.nccl = nullptr;
    }
  }
  return m.nccl;
}

}  // namespace

bool mpi_available() { return mpi_unavailable_reason().empty(); }

std::string mpi_unavailable_reason() {
  Modules& m = modules();
  std::lock_guard<std::mutex> lock(m.mu);
  return mpi_module(m) ? "" : m.mpi_why;
}

bool nccl_available() { return nccl_unavailable_reason().empty(); }

std::string nccl_unavailable_reason() {
  Modules& m = modules();
  std::lock_guard<std::mutex> lock(m.mu);
  if (!nccl_module(m)) return m.nccl_why;
  if (!mpi_module(m)) return "NCCL needs MPI to start: " + m.mpi_why;
  return "";
}

std::shared_ptr<ProcessGroup> init(const InitOptions& opts, std::function<void(const std::string&)> on_peer_failure) {
  const char* op = "init_process_group";
  TIDE_CHECK(opts.backend == "mpi" || opts.backend == "nccl", op, ": unknown backend '", opts.backend,
             "' (expected \"mpi\" or \"nccl\")");
  TIDE_CHECK(opts.timeout_seconds > 0, op, ": timeout must be > 0 seconds, got ", opts.timeout_seconds);
  Modules& m = modules();
  std::lock_guard<std::mutex> lock(m.mu);
  TIDE_CHECK(!m.world, op, ": the default process group is initialized already (destroy_process_group() first)");
  TIDE_CHECK(!m.finalized, op, ": MPI cannot start again in a process after destroy_process_group()");
  const MpiModule* mpi = mpi_module(m);
  TIDE_CHECK(mpi, op, ": the ", opts.backend, " backend is not available: ", m.mpi_why);
  const NcclModule* nccl = nullptr;
  if (opts.backend == "nccl") {
    nccl = nccl_module(m);
    TIDE_CHECK(nccl, op, ": the nccl backend is not available: ", m.nccl_why);
  }
  m.world = mpi->init(opts, nccl, std::move(on_peer_failure));
  return m.world;
}

std::shared_ptr<ProcessGroup> world() {
  Modules& m = modules();
  std::lock_guard<std::mutex> lock(m.mu);
  return m.world;
}

void destroy() {
  Modules& m = modules();
  std::lock_guard<std::mutex> lock(m.mu);
  TIDE_CHECK(m.world, "destroy_process_group: the default process group is not initialized");
  m.world.reset();
  m.finalized = true;
  m.mpi->destroy();
}

void uncaught_error(const std::string& message, void (*print)(const std::string& text)) {
  Modules& m = modules();
  const MpiModule* mpi;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (!m.world) return print(message);
    mpi = m.mpi;
  }
  mpi->uncaught_error(message, print);
}

}  // namespace tide::dist
