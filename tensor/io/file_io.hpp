// What the file formats (npy.cpp, safetensors.cpp, pt.cpp) share: error messages that start
// with where the bytes come from, random-access reading of a file or a memory buffer, output to
// a file that replaces its target only when complete (or to a string), UTF-8 checks, and the
// host copy of a tensor that is about to be written out (also used by printing).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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

// Sequential output that can overwrite bytes it already wrote (a zip member's header once its
// CRC is known).
class Output {
 public:
  virtual ~Output() = default;
  virtual void write(const void* p, size_t n) = 0;
  virtual uint64_t tell() const = 0;
  virtual void patch(uint64_t off, const void* p, size_t n) = 0;
};

class StringOutput : public Output {
 public:
  std::string buf;
  void write(const void* p, size_t n) override { buf.append(static_cast<const char*>(p), n); }
  uint64_t tell() const override { return buf.size(); }
  void patch(uint64_t off, const void* p, size_t n) override;
};

// A file written under a temporary name beside `path` and renamed over it by commit(); until
// then `path` keeps what it held (its permissions are kept), and an uncommitted temporary file
// is removed. Errors start with `where`.
class FileOutput : public Output {
 public:
  FileOutput(const std::string& path, std::string where);
  ~FileOutput() override;
  FileOutput(const FileOutput&) = delete;
  FileOutput& operator=(const FileOutput&) = delete;
  void write(const void* p, size_t n) override;
  uint64_t tell() const override { return pos_; }
  void patch(uint64_t off, const void* p, size_t n) override;
  // Flushes to disk and renames the temporary file over `path`.
  void commit();

 private:
  std::string path_, tmp_, where_;
  int fd_ = -1;
  uint64_t pos_ = 0;
  bool committed_ = false;
};

// True when s is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool valid_utf8(std::string_view s);

// A CPU tensor with t's values: t itself when it is on the CPU (in its own layout), else a
// contiguous copy in host memory.
Tensor to_host(const Tensor& t);

}  // namespace tide::io
