// libtide_nccl.so: NCCL for torch.distributed's CUDA tensors (the MPI module starts it and
// exchanges its unique id; tensor/distributed/modules.hpp is the interface). Host code only:
// every call enqueues on a stream of the communicator's own, after the work tide has queued
// on the device (tide's stream is synchronized first), and the MPI module's thread polls the
// stream for completion.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <string>

#include "../backend.hpp"
#include "modules.hpp"

namespace tide::dist {

namespace {

static_assert(sizeof(ncclUniqueId) == NcclModule::kIdBytes, "NCCL's unique id has another size");

struct Comm {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;
  void* scratch = nullptr;  // a float for barriers
};

void check_cuda(cudaError_t e, const char* what) {
  TIDE_CHECK(e == cudaSuccess, "nccl: ", what, " failed: ", cudaGetErrorString(e));
}

void check_nccl(ncclResult_t r, const char* what) {
  TIDE_CHECK(r == ncclSuccess, "nccl: ", what, " failed: ", ncclGetErrorString(r));
}

ncclDataType_t nccl_type(DType dt) {
  switch (dt) {
    case DType::Bool: case DType::UInt8: return ncclUint8;
    case DType::Int8: return ncclInt8;
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    default: break;
  }
  TIDE_FAIL("nccl: NCCL has no ", dtype_name(dt), " type (use int32, or the mpi backend on the CPU)");
}

// Bool: SUM and MAX are OR (max of 0/1), PRODUCT and MIN are AND (min of 0/1).
ncclRedOp_t nccl_op(ReduceOp op, DType dt) {
  if (dt == DType::Bool) return op == ReduceOp::Sum || op == ReduceOp::Max ? ncclMax : ncclMin;
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;
    case ReduceOp::Product: return ncclProd;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Max: return ncclMax;
  }
  return ncclSum;
}

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::string unavailable_reason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
  if (n == 0) return "no CUDA device";
  return "";
}

void unique_id(char* id) {
  ncclUniqueId u;
  check_nccl(ncclGetUniqueId(&u), "ncclGetUniqueId");
  std::memcpy(id, &u, sizeof u);
}

void* comm_init(const char* id, int nranks, int rank, int device) {
  auto* c = new Comm();
  c->device = device;
  try {
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaMalloc(&c->scratch, sizeof(float)), "cudaMalloc");
    ncclUniqueId u;
    std::memcpy(&u, id, sizeof u);
    check_nccl(ncclCommInitRank(&c->comm, nranks, u, rank), "ncclCommInitRank");
  } catch (...) {
    delete c;
    throw;
  }
  return c;
}

void comm_destroy(void* p) {
  auto* c = static_cast<Comm*>(p);
  if (!c) return;
  if (c->comm) ncclCommDestroy(c->comm);
  if (c->scratch) cudaFree(c->scratch);
  if (c->stream) cudaStreamDestroy(c->stream);
  delete c;
}

void start(void* p, const NcclCall& call) {
  auto* c = static_cast<Comm*>(p);
  check_cuda(cudaSetDevice(c->device), "cudaSetDevice");
  // The operation reads what tide's kernels wrote: let them finish first.
  backend_for(Device{DeviceType::CUDA, c->device}).synchronize(c->device);
  ncclDataType_t type = call.kind == NcclCall::Barrier ? ncclFloat32 : nccl_type(call.dtype);
  switch (call.kind) {
    case NcclCall::AllReduce:
      check_nccl(ncclAllReduce(call.buffer, call.buffer, call.count, type, nccl_op(call.op, call.dtype), c->comm,
                               c->stream), "ncclAllReduce");
      break;
    case NcclCall::Broadcast:
      check_nccl(ncclBroadcast(call.buffer, call.buffer, call.count, type, call.root, c->comm, c->stream),
                 "ncclBroadcast");
      break;
    case NcclCall::Reduce:
      check_nccl(ncclReduce(call.buffer, call.buffer, call.count, type, nccl_op(call.op, call.dtype), call.root,
                            c->comm, c->stream), "ncclReduce");
      break;
    case NcclCall::AllGather:
      check_nccl(ncclAllGather(call.send, call.buffer, call.count, type, c->comm, c->stream), "ncclAllGather");
      break;
    case NcclCall::ReduceScatter:
      check_nccl(ncclReduceScatter(call.send, call.buffer, call.count, type, nccl_op(call.op, call.dtype), c->comm,
                                   c->stream), "ncclReduceScatter");
      break;
    case NcclCall::Barrier:
      check_nccl(ncclAllReduce(c->scratch, c->scratch, 1, ncclFloat32, ncclSum, c->comm, c->stream), "barrier");
      break;
    case NcclCall::PointToPoint:
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (const auto& t : call.transfers) {
        if (t.count == 0) continue;
        ncclResult_t r = t.is_send ? ncclSend(t.data, t.count, type, t.peer, c->comm, c->stream)
                                   : ncclRecv(t.data, t.count, type, t.peer, c->comm, c->stream);
        if (r != ncclSuccess) {
          ncclGroupEnd();
          check_nccl(r, t.is_send ? "ncclSend" : "ncclRecv");
        }
      }
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      break;
  }
}

bool done(void* p) {
  auto* c = static_cast<Comm*>(p);
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(c->comm, &async);
  check_nccl(async, "an asynchronous operation");
  cudaError_t e = cudaStreamQuery(c->stream);
  if (e == cudaErrorNotReady) return false;
  check_cuda(e, "the NCCL stream");
  return true;
}

const NcclModule kModule = {device_count, unavailable_reason, unique_id, comm_init, comm_destroy, start, done};

}  // namespace

}  // namespace tide::dist

extern "C" __attribute__((visibility("default"))) const tide::dist::NcclModule* tide_nccl_module(const char** why) {
  (void)why;
  return &tide::dist::kModule;
}
