// The interfaces between libtide and the two distributed modules it loads with dlopen:
// libtide_mpi.so (tensor/distributed/mpi.cpp) and libtide_nccl.so (tensor/distributed/
// nccl.cpp). Internal to tensor/distributed/.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "process_group.hpp"

namespace tide::dist {

// One NCCL operation, enqueued on the communicator's stream. Counts are in elements of dtype.
struct NcclCall {
  enum Kind : uint8_t { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, Barrier, PointToPoint };
  Kind kind = Barrier;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  const void* send = nullptr;  // AllGather, ReduceScatter: the input
  void* buffer = nullptr;      // the output (in place for AllReduce, Broadcast, Reduce)
  size_t count = 0;            // per rank for AllGather and ReduceScatter
  struct Transfer {
    bool is_send;
    void* data;
    size_t count;
    int peer;
  };
  std::vector<Transfer> transfers;  // PointToPoint: one ncclGroupStart/End around them all
};

struct NcclModule {
  // CUDA devices this process sees (0 when the driver or a device is missing).
  int (*device_count)();
  // Why NCCL cannot be used here ("" when it can).
  std::string (*unavailable_reason)();
  static constexpr size_t kIdBytes = 128;  // sizeof(ncclUniqueId)
  void (*unique_id)(char* id);
  // A communicator of rank `rank` of `nranks` on CUDA device `device`, from rank 0's id.
  void* (*comm_init)(const char* id, int nranks, int rank, int device);
  void (*comm_destroy)(void* comm);
  // Enqueues the call on the communicator's stream (after the device's queued work).
  void (*start)(void* comm, const NcclCall& call);
  // Whether everything enqueued has finished; throws on an asynchronous NCCL error.
  bool (*done)(void* comm);
};

struct MpiModule {
  std::shared_ptr<ProcessGroup> (*init)(const InitOptions& opts, const NcclModule* nccl,
                                        std::function<void(const std::string&)> on_peer_failure);
  void (*destroy)();
  void (*uncaught_error)(const std::string& message, void (*print)(const std::string& text));
};

}  // namespace tide::dist

extern "C" {
// The modules' entry points: the table, or null with *why set.
using TideMpiModuleFn = const tide::dist::MpiModule* (*)(const char** why);
using TideNcclModuleFn = const tide::dist::NcclModule* (*)(const char** why);
}
