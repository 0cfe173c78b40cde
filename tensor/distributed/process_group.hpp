// torch.distributed's engine half (no Lua): process groups and their collectives.
//
// The MPI code lives in a module of its own, libtide_mpi.so (tensor/distributed/mpi.cpp),
// loaded with dlopen on the first use of torch.distributed (tensor/distributed/
// distributed.cpp), so that libtide and the tide program never link MPI; CUDA tensors go
// through NCCL in a second module, libtide_nccl.so (tensor/distributed/nccl.cpp), built with
// the CUDA module when the toolkit's NCCL is present. Processes are started the way MPI
// programs are (`mpirun -n 4 tide train.lua`): MPI gives each its rank and the world's size.
//
// Every collective is a Collective handed to ProcessGroup::submit, which returns at once with
// a Work; the group's communication thread runs the operations in the order they were
// submitted. Before the data moves, the ranks compare what each passed (dtype, shapes, root,
// reduction), so that a mismatch is an error on every rank instead of a hang or corrupted
// data. A failure anywhere -- a Lua error that ends a rank, a timeout -- reaches every rank
// as an error naming the rank and its message (see uncaught_error).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../tensor.hpp"

namespace tide::dist {

enum class ReduceOp : uint8_t { Sum, Avg, Product, Min, Max };
const char* reduce_op_name(ReduceOp op);  // "SUM"

enum class OpKind : uint8_t {
  AllReduce, Broadcast, Reduce, AllGather, AllGatherIntoTensor, Gather, Scatter, ReduceScatter, AllToAll,
  Barrier, Send, Recv,
};
const char* op_name(OpKind k);  // "all_reduce"

// One operation, as the bindings describe it. Ranks (root, peer) are ranks within the group.
//   AllReduce, Broadcast, Reduce: `tensor` in place.
//   AllGather: input -> outputs (one per rank); AllGatherIntoTensor: input -> output (size
//   times the input's elements, ranks in order along its flat elements).
//   Gather: input -> outputs at root (empty elsewhere); Scatter: inputs at root -> output.
//   ReduceScatter: inputs (one per rank) -> output; AllToAll: inputs[j] goes to rank j,
//   outputs[j] comes from rank j.
//   Send, Recv: tensor to / from peer (Recv: peer -1 takes any sender) with tag.
struct Collective {
  OpKind kind = OpKind::Barrier;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  int peer = 0;
  int tag = 0;
  bool check = true;  // compare the ranks' arguments first (the DDP reducer's buckets need not)
  Tensor tensor, input, output;
  std::vector<Tensor> inputs, outputs;
};

// An operation in flight.
class Work {
 public:
  virtual ~Work() = default;
  // Whether it has finished (successfully or not).
  virtual bool is_completed() = 0;
  // Waits for it and finishes it on this thread (results copied into tensors that could not
  // be written directly, the division of AVG); throws tide::Error naming the op on a failure.
  // Returns the sender's rank for a Recv, else -1. Ctrl-C stops the wait.
  virtual int wait() = 0;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  // Rank of this process in the group (-1: not a member) and the number of ranks.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The world ranks of the group's members, in group-rank order.
  virtual const std::vector<int>& world_ranks() const = 0;
  virtual const char* backend() const = 0;  // "mpi" or "nccl"
  // Starts an operation (arguments checked first on this rank; see check_collective).
  virtual std::shared_ptr<Work> submit(Collective c) = 0;
  // A group of some world ranks (sorted, distinct); every rank of this group must call it, in
  // the same order as its other operations. Returns a group whose rank() is -1 on the others.
  virtual std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& world_ranks, double timeout_seconds) = 0;
  // Ends the group's use (the world: see destroy()).
  virtual void destroy() = 0;
  virtual bool destroyed() const = 0;
};

// Checks what one rank passed to an operation: defined tensors on one device, the lists' lengths
// (the group's size), outputs of the inputs' dtype and shape, roots and peers in range, AVG
// only on floating-point dtypes. Errors start with the op's name.
void check_collective(const Collective& c, int rank, int size);

struct InitOptions {
  std::string backend = "mpi";      // "mpi" or "nccl"
  double timeout_seconds = 1800;    // how long an operation may wait for the other ranks
};

// Whether MPI can be used: the module is built and loads, and this process was started by
// mpirun (or another MPI launcher). mpi_unavailable_reason() says why not ("" when it can).
bool mpi_available();
std::string mpi_unavailable_reason();
// The same for NCCL (which also needs MPI, to exchange its unique id, and a CUDA device).
bool nccl_available();
std::string nccl_unavailable_reason();

// Starts MPI (once per process) and returns the world group. `on_peer_failure` runs on the
// communication thread when another rank has failed (with "rank R failed: message"), so that
// a rank busy computing stops too (the bindings interrupt its Lua code).
std::shared_ptr<ProcessGroup> init(const InitOptions& opts, std::function<void(const std::string&)> on_peer_failure);
// The world group (null before init and after destroy).
std::shared_ptr<ProcessGroup> world();
// Ends the world group: waits until every rank gets here (a rank that failed meanwhile is an
// error naming it), then MPI_Finalize. MPI cannot start again in this process.
void destroy();

// For an error that ends the program (the tide program calls it instead of printing one):
// prints, through `print`, the message with this rank named (and the other rank's failure when
// that is what stopped this one); then, when this process is a rank, tells the other ranks
// (whose waits then fail with "rank R failed: message") and waits, up to the group's timeout,
// until each has ended or reported too. The message goes out first: once the others end,
// mpirun may kill this rank before it would have printed.
void uncaught_error(const std::string& message, void (*print)(const std::string& text));

}  // namespace tide::dist
