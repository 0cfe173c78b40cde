// Reading files and memory buffers at an offset, and host copies of device tensors.
#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "../backend.hpp"

namespace tide::io {

// Opens path for reading; only a regular file is accepted (a directory or a pipe has no size).
FileSource::FileSource(const std::string& path, std::string where) : where_(std::move(where)) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail_at(where_, "cannot open file: ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail_at(where_, "not a regular file");
  }
  size_ = uint64_t(st.st_size);
}

FileSource::~FileSource() { ::close(fd_); }

// pread in pieces of at most 1 GiB, retried on EINTR; a file that shrank underneath is an error.
void FileSource::read_bytes(uint64_t off, void* dst, size_t n) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, p, std::min<size_t>(n, size_t(1) << 30), off_t(off));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_at(where_, "read error: ", std::strerror(errno));
    if (got == 0) fail_at(where_, "unexpected end of file (was it changed while being read?)");
    p += got;
    off += uint64_t(got);
    n -= size_t(got);
  }
}

void MemorySource::read_bytes(uint64_t off, void* dst, size_t n) {
  if (n) std::memcpy(dst, data_ + off, n);
}

Tensor to_host(const Tensor& t) { return t.to_device({}); }

}  // namespace tide::io
