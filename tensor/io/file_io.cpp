// Reading files and memory buffers at an offset, writing files that replace their target when
// complete, UTF-8 checks, and host copies of device tensors.
#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return false;
    if (s.size() - i < size_t(len)) return false;
    for (int k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMinForLen[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLen[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += size_t(len);
  }
  return true;
}

void StringOutput::patch(uint64_t off, const void* p, size_t n) {
  TIDE_ASSERT(off <= buf.size() && n <= buf.size() - off);
  std::memcpy(buf.data() + off, p, n);
}

FileOutput::FileOutput(const std::string& path, std::string where) : path_(path), where_(std::move(where)) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; fd_ < 0; ++attempt) {
    tmp_ = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt == 100))
      fail_at(where_, "cannot create a file there: ", std::strerror(errno));
  }
  struct stat old;  // replacing a file keeps its permissions
  if (::stat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) (void)::fchmod(fd_, old.st_mode & 07777);
}

FileOutput::~FileOutput() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void FileOutput::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_, p, std::min<size_t>(n, size_t(1) << 30));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) fail_at(where_, "write error: ", std::strerror(errno));
    p += put;
    n -= size_t(put);
    pos_ += uint64_t(put);
  }
}

void FileOutput::patch(uint64_t off, const void* data, size_t n) {
  TIDE_ASSERT(off <= pos_ && n <= pos_ - off);
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::pwrite(fd_, p, n, off_t(off));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) fail_at(where_, "write error: ", std::strerror(errno));
    p += put;
    off += uint64_t(put);
    n -= size_t(put);
  }
}

void FileOutput::commit() {
  if (::fsync(fd_) != 0) fail_at(where_, "write error: ", std::strerror(errno));
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail_at(where_, "write error: ", std::strerror(errno));
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail_at(where_, "cannot replace the file: ", std::strerror(errno));
  committed_ = true;
}

Tensor to_host(const Tensor& t) { return t.to_device({}); }

}  // namespace tide::io
