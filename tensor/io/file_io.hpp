// What the file formats (npy.cpp, safetensors.cpp) share: error messages that start with
// where the bytes come from, random-access reading of a file or a memory buffer, and the
// host copy of a tensor that is about to be written out (also used by printing).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "../tensor.hpp"

namespace tide::io {

// "np.load: data.npy": the op and the file (or buffer name, cut by quote_user) that start
// every message.
inline std::string where_of(const char* op, const std::string& name) { return std::string(op) + ": " + quote_user(name); }

// Throws tide::Error "<where>: <args...>".
template <typename... A>
[[noreturn]] void fail_at(const std::string& where, const A&... args) {
  TIDE_FAIL(where, ": ", args...);
}

// Random-access bytes of known size.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  uint64_t size() const { return size_; }
  // Reads exactly n bytes at off. Callers check the range against size() with a message of
  // their own first; reaching past the end here is a bug in tide.
  void read_at(uint64_t off, void* dst, size_t n) {
    TIDE_ASSERT(off <= size_ && n <= size_ - off);
    read_bytes(off, dst, n);
  }

 protected:
  virtual void read_bytes(uint64_t off, void* dst, size_t n) = 0;
  uint64_t size_ = 0;
};

// A regular file, read with pread. Errors start with `where`.
class FileSource : public ByteSource {
 public:
  FileSource(const std::string& path, std::string where);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

 protected:
  void read_bytes(uint64_t off, void* dst, size_t n) override;

 private:
  int fd_ = -1;
  std::string where_;
};

// A buffer in memory that outlives the source.
class MemorySource : public ByteSource {
 public:
  MemorySource(const void* data, size_t size) : data_(static_cast<const char*>(data)) { size_ = size; }

 protected:
  void read_bytes(uint64_t off, void* dst, size_t n) override;

 private:
  const char* data_;
};

// A CPU tensor with t's values: t itself when it is on the CPU (in its own layout), else a
// contiguous copy in host memory.
Tensor to_host(const Tensor& t);

}  // namespace tide::io
