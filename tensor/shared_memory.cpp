// Shared-memory storages: memfd_create + mmap. A storage keeps its memfd open for its whole
// life, so that it can be sent again; the soft limit on open files is raised to the hard one
// the first time (a DataLoader keeps a few descriptors per batch in flight).
#include "shared_memory.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

namespace tide {

namespace {

// The storages of this process by memfd (device, inode): the same segment maps to one storage.
struct Registry {
  std::mutex mu;
  std::map<std::pair<dev_t, ino_t>, std::weak_ptr<Storage>> by_file;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: storages may die during teardown
  return *r;
}

std::pair<dev_t, ino_t> file_id(int fd, const char* op) {
  struct stat st;
  TIDE_CHECK(fstat(fd, &st) == 0, op, ": cannot inspect a shared-memory descriptor (", std::strerror(errno), ")");
  return {st.st_dev, st.st_ino};
}

void raise_open_file_limit() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
  });
}

// mmap needs at least one byte; an empty storage maps one page.
size_t mapped_size(size_t nbytes) { return nbytes > 0 ? nbytes : 1; }

// Maps fd (of at least nbytes) shared and read-write.
void* map_fd(int fd, size_t nbytes, const char* op) {
  void* p = mmap(nullptr, mapped_size(nbytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  TIDE_CHECK(p != MAP_FAILED, op, ": cannot map ", nbytes, " bytes of shared memory (", std::strerror(errno), ")");
  return p;
}

// A new memfd of nbytes (zero-filled by the kernel).
int new_memfd(size_t nbytes, const char* op) {
  raise_open_file_limit();
  int fd = memfd_create("tide-tensor", MFD_CLOEXEC);
  TIDE_CHECK(fd >= 0, op, ": cannot create shared memory (memfd_create: ", std::strerror(errno), ")");
  if (ftruncate(fd, off_t(mapped_size(nbytes))) != 0) {
    int e = errno;
    close(fd);
    TIDE_FAIL(op, ": cannot allocate ", nbytes, " bytes of shared memory (", std::strerror(e), ")");
  }
  return fd;
}

// What frees a mapped segment: the mapping and the descriptor.
std::function<void(void*)> unmapper(int fd, size_t nbytes) {
  return [fd, nbytes](void* p) {
    munmap(p, mapped_size(nbytes));
    close(fd);
  };
}

void remember(const std::shared_ptr<Storage>& s, std::pair<dev_t, ino_t> id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.by_file.begin(); it != r.by_file.end();)  // forget dead storages
    it = it->second.expired() ? r.by_file.erase(it) : std::next(it);
  r.by_file[id] = s;
}

}  // namespace

void share_memory(const std::shared_ptr<Storage>& storage, const char* op) {
  Storage& s = *storage;
  if (s.shared_fd() >= 0) return;
  TIDE_CHECK(s.device().is_cpu(), op, ": only CPU tensors can be moved to shared memory, this one is on ",
             s.device().str());
  TIDE_CHECK(s.owns_memory(), op, ": the tensor's memory belongs to the host program (from_blob or a DLPack import) "
             "and cannot move to shared memory; share a clone instead");
  TIDE_CHECK(!s.exported(), op, ": the tensor's memory was exported with to_dlpack and its address is in use; "
             "share a clone instead");
  int fd = new_memfd(s.nbytes(), op);
  void* p;
  try {
    p = map_fd(fd, s.nbytes(), op);
  } catch (...) {
    close(fd);
    throw;
  }
  if (s.nbytes() > 0) std::memcpy(p, s.data(), s.nbytes());
  auto id = file_id(fd, op);
  s.replace_memory(p, unmapper(fd, s.nbytes()), fd);
  remember(storage, id);
}

std::shared_ptr<Storage> storage_from_shared_fd(int fd, size_t nbytes, const char* op) {
  std::pair<dev_t, ino_t> id;
  void* p;
  try {
    id = file_id(fd, op);
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mu);
      auto it = r.by_file.find(id);
      if (it != r.by_file.end())
        if (auto s = it->second.lock()) {
          TIDE_CHECK(s->nbytes() == nbytes, op, ": a shared-memory segment arrived with size ", nbytes,
                     " but it holds ", s->nbytes(), " bytes");
          close(fd);
          return s;
        }
    }
    struct stat st;
    TIDE_CHECK(fstat(fd, &st) == 0 && size_t(st.st_size) >= mapped_size(nbytes), op,
               ": a shared-memory segment is smaller than the ", nbytes, " bytes it should hold");
    p = map_fd(fd, nbytes, op);
  } catch (...) {
    close(fd);
    throw;
  }
  auto s = std::make_shared<Storage>(p, nbytes, Device{}, unmapper(fd, nbytes), fd);
  remember(s, id);
  return s;
}

std::shared_ptr<Storage> allocate_shared_storage(size_t nbytes, const char* op) {
  int fd = new_memfd(nbytes, op);
  return storage_from_shared_fd(fd, nbytes, op);
}

}  // namespace tide
