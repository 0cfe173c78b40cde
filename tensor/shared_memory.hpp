// Tensor memory shared between the processes of one machine (torch.multiprocessing): a
// storage's bytes live in a memfd (an anonymous file in memory) mapped into every process
// that has the file's descriptor. Descriptors travel between processes over Unix sockets
// (tensor/ipc.hpp), so a tensor passes from one process to another without a copy.
#pragma once
#include <cstddef>
#include <memory>

#include "tensor.hpp"

namespace tide {

// Moves a CPU storage's bytes into a new memfd, in place: every view of it sees the same
// values at the new address (x:share_memory_()). Nothing happens when it is shared already.
// Errors, naming `op`: a CUDA storage, wrapped host memory (from_blob, a DLPack import), a
// storage whose address a DLPack export handed out.
void share_memory(const std::shared_ptr<Storage>& storage, const char* op);
// The storage that maps the memfd `fd` of nbytes, taking ownership of fd: the storage this
// process already has for that file (received twice, or sent back) when one is alive, so
// that one segment is one storage in every process.
std::shared_ptr<Storage> storage_from_shared_fd(int fd, size_t nbytes, const char* op);
// A new, zero-filled storage of nbytes in shared memory.
std::shared_ptr<Storage> allocate_shared_storage(size_t nbytes, const char* op);

}  // namespace tide
