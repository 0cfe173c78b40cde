// Storage (reference-counted bytes on a device, with a version counter) and Tensor (a view:
// sizes, strides and offset over a storage). Views share storage; copies do not.
//
// Conventions of the engine: dims and positions passed to C++ functions are 0-based;
// index *values* stored in tensors (argmax, nonzero, sort indices, gather indices, ...)
// are 1-based, because they are data that Lua scripts see.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "capture/capture.hpp"
#include "dtype.hpp"
#include "error.hpp"

struct DLManagedTensor;  // <dlpack/dlpack.h>

namespace tide {

enum class DeviceType : uint8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  // "cpu" or "cuda:0"
  std::string str() const;
  // Parses "cpu", "cuda", "cuda:N"; throws tide::Error naming the string otherwise.
  static Device parse(const std::string& s);
};

constexpr int kMaxDims = 16;

// A small fixed-capacity vector of sizes or strides (no heap allocation on the hot path).
class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<int64_t> v) {
    for (int64_t x : v) push_back(x);
  }
  explicit Dims(const std::vector<int64_t>& v) {
    for (int64_t x : v) push_back(x);
  }
  Dims(int n, int64_t fill) {
    resize(n, fill);
  }
  int size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t& operator[](int i) { return v_[i]; }
  int64_t operator[](int i) const { return v_[i]; }
  int64_t* begin() { return v_; }
  int64_t* end() { return v_ + n_; }
  const int64_t* begin() const { return v_; }
  const int64_t* end() const { return v_ + n_; }
  int64_t back() const { return v_[n_ - 1]; }
  void push_back(int64_t x) {
    TIDE_CHECK(n_ < kMaxDims, "tensor: at most ", kMaxDims, " dims are supported");
    v_[n_++] = x;
  }
  void insert(int pos, int64_t x) {
    TIDE_CHECK(n_ < kMaxDims, "tensor: at most ", kMaxDims, " dims are supported");
    for (int i = n_; i > pos; --i) v_[i] = v_[i - 1];
    v_[pos] = x;
    ++n_;
  }
  void erase(int pos) {
    for (int i = pos; i + 1 < n_; ++i) v_[i] = v_[i + 1];
    --n_;
  }
  void pop_back() { --n_; }
  void resize(int n, int64_t fill = 0) {
    TIDE_CHECK(n <= kMaxDims, "tensor: at most ", kMaxDims, " dims are supported");
    for (int i = n_; i < n; ++i) v_[i] = fill;
    n_ = n;
  }
  void clear() { n_ = 0; }
  bool operator==(const Dims& o) const {
    if (n_ != o.n_) return false;
    for (int i = 0; i < n_; ++i)
      if (v_[i] != o.v_[i]) return false;
    return true;
  }
  bool operator!=(const Dims& o) const { return !(*this == o); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  // "{2,3}" as errors print shapes
  std::string str() const;

 private:
  int64_t v_[kMaxDims];
  int n_ = 0;
};

// Prints a shape as Dims::str() does, so that error messages can name a shape lazily.
std::ostream& operator<<(std::ostream& os, const Dims& d);

// ---- Overflow-checked sizes ------------------------------------------------------------
// Every tensor's byte size (numel times the item size) fits in int64 (Tensor::make_view
// checks it for every view), and so do the byte strides of the contiguous layout of every
// tensor that is created or reshaped (the products of the sizes after the first, a 0 counted
// as 1, times the item size): check_extent, PyTorch 2.x's rule, which Tensor::empty applies
// and which ops that build a new shape call under their own name first. Given it, numel,
// nbytes and every product of a non-empty tensor's sizes fit; an empty tensor may still have
// sizes whose product passes int64 (torch.eye(2^63-1, 0)), so code that multiplies some of a
// tensor's sizes uses shape_numel (0 when any is 0), and arithmetic that combines sizes of
// several tensors or script numbers (cat's sum, repeat, arange's count, file headers) goes
// through checked_mul / checked_add. Every failure is a tide::Error "<op>: ..." naming the
// shape or values; nothing wraps.

// a * b, or throws "<op>: <what...> is too large (more than 2^63-1)".
template <typename... What>
int64_t checked_mul(const char* op, int64_t a, int64_t b, const What&... what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    detail::fail(op, ": ", what..., " is too large (more than 2^63-1)");
  return r;
}
// a + b, or throws "<op>: <what...> is too large (more than 2^63-1)".
template <typename... What>
int64_t checked_add(const char* op, int64_t a, int64_t b, const What&... what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]]
    detail::fail(op, ": ", what..., " is too large (more than 2^63-1)");
  return r;
}
// Throws "<op>: shape S of <dtype> is too large ..." unless a tensor of this shape and dtype
// can be created (its byte size and contiguous byte strides fit; "<op>: negative size ..."
// for a negative size).
void check_extent(const char* op, const Dims& shape, DType dtype);
// Product of sizes (0 when any is 0); throws "<op>: ..." on a negative size or overflow.
int64_t shape_numel(const Dims& shape, const char* op = "tensor");
// Row-major strides of a shape; throws "<op>: ..." when they overflow int64.
Dims contiguous_strides(const Dims& shape, const char* op = "tensor");

// A user-supplied string (a dtype or device name, a file path, a keyword, file content) as
// error messages quote it: at most kQuoteChars characters, cut at a UTF-8 boundary and
// marked with "...", so that a huge string never makes a huge message.
constexpr size_t kQuoteChars = 60;
std::string quote_user(std::string_view s);

// Reference-counted device memory. CPU memory comes from the caching allocator
// (64-byte aligned); wrapped host memory is released through its deleter.
class Storage {
 public:
  // Throws tide::OutOfMemory naming the size when the machine cannot satisfy it.
  static std::shared_ptr<Storage> allocate(size_t nbytes, Device device);
  // Wraps memory the engine does not own (from_blob); `deleter` runs when the last view dies.
  static std::shared_ptr<Storage> wrap(void* data, size_t nbytes, Device device,
                                       std::function<void(void*)> deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Incremented by every in-place write, so that autograd can tell a saved tensor changed.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  // Memory the engine may read but never write (a file mapped read-only by np.load's
  // mmap_mode="r"); every write is refused by check_writable (tensor/overlap.hpp).
  bool read_only() const { return read_only_; }
  void set_read_only() { read_only_ = true; }

  // Shared memory (tensor/shared_memory.hpp): the memfd that holds the bytes, -1 while they
  // are private to this process.
  int shared_fd() const { return shared_fd_; }
  // Whether the memory is the engine's own (from its allocator or shared memory), not
  // wrapped host memory (from_blob, DLPack import) that the engine must not move or free.
  bool owns_memory() const { return !deleter_ || shared_fd_ >= 0; }
  // DLPack exports alive: their consumers hold the address, so the bytes must not move.
  void add_export(int delta) { exports_.fetch_add(delta, std::memory_order_relaxed); }
  bool exported() const { return exports_.load(std::memory_order_relaxed) > 0; }
  // Replaces the bytes by `data` (the same size, already holding a copy), released by
  // `deleter`, and frees the old ones: every view sees the new address. share_memory_ moves
  // a storage into the memfd `shared_fd` this way.
  void replace_memory(void* data, std::function<void(void*)> deleter, int shared_fd);

  Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter, int shared_fd = -1)
      : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)), shared_fd_(shared_fd) {}

 private:
  void release_memory();

  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void(void*)> deleter_;  // empty: returned to the device's allocator
  int shared_fd_ = -1;
  std::atomic<uint32_t> version_{0};
  std::atomic<int32_t> exports_{0};
  bool read_only_ = false;
};

struct AutogradMeta;  // tensor/autograd/autograd.hpp

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  // Strides in elements; negative along a reversed dim (a[{{-1, 1, -1}}], NumPy's a[::-1]),
  // where offset is then the first element's, not the lowest address. Code that hands raw
  // memory to a library (BLAS, FFTW, a file) takes such a tensor contiguous first.
  Dims sizes, strides;
  int64_t offset = 0;    // in elements
  DType dtype = DType::Float32;
  // Made by NumPy spelling (np.*, or an op on such an array): the bindings run every op
  // whose inputs include one with NumPy semantics (NumpySemanticsScope). The engine itself
  // never reads it.
  bool numpy = false;
  // For a view made by as_strided: the tensor that owns the memory it shares (the root of a
  // chain of views). Autograd uses it to route gradients of in-place writes through views.
  std::shared_ptr<TensorImpl> base;
  std::shared_ptr<AutogradMeta> autograd;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Uninitialised contiguous tensor. Throws "<op>: ..." when the shape breaks the size
  // invariant (check_extent).
  static Tensor empty(const Dims& shape, DType dtype, Device device = {}, const char* op = "tensor");
  // A view of existing storage.
  static Tensor make_view(std::shared_ptr<Storage> storage, const Dims& sizes, const Dims& strides,
                          int64_t offset, DType dtype);
  // Zero-copy interop (tensor/dlpack.cpp). from_blob wraps memory the caller owns (host or
  // CUDA): strides in elements (empty: contiguous); `deleter` runs when the last view dies.
  static Tensor from_blob(void* data, const Dims& shape, DType dtype, const Dims& strides = {},
                          std::function<void(void*)> deleter = nullptr, Device device = {});
  static Tensor from_blob(void* data, const Dims& shape, DType dtype, std::function<void(void*)> deleter,
                          Device device = {});
  // Takes ownership of a DLPack tensor (its deleter runs when the last view dies); on an
  // error it is left to the caller. to_dlpack shares this tensor's memory with the consumer.
  static Tensor from_dlpack(DLManagedTensor* managed);
  DLManagedTensor* to_dlpack() const;

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->storage->device(); }
  int dim() const { return impl_->sizes.size(); }
  const Dims& sizes() const { return impl_->sizes; }
  const Dims& shape() const { return impl_->sizes; }
  const Dims& strides() const { return impl_->strides; }
  int64_t size(int d) const { return impl_->sizes[d]; }
  int64_t stride(int d) const { return impl_->strides[d]; }
  int64_t offset() const { return impl_->offset; }
  int64_t numel() const;
  size_t itemsize() const { return dtype_size(impl_->dtype); }
  size_t nbytes() const { return size_t(numel()) * itemsize(); }
  bool is_contiguous() const;
  // Some dim of more than one element is walked backwards (a reversed view).
  bool has_negative_stride() const;
  // The first element's host address, for host code that reads or writes it (a recording
  // of torch.compile cannot replay such work, so it breaks; capture/capture.hpp).
  void* data_ptr() const {
    capture::note_host_access();
    return address();
  }
  // The same address handed on to a device-table call, which does the reading and writing.
  void* address() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * int64_t(itemsize());
  }
  // Typed host access for CPU kernels. A tensor on another device has no host address: an
  // op that reaches here with one lacks its device path, which is an error, never a crash.
  template <typename T>
  T* data() const {
    if (!impl_->storage->device().is_cpu()) [[unlikely]]
      no_host_access();
    capture::note_host_access();
    return static_cast<T*>(address());
  }
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same(const Tensor& o) const { return impl_ == o.impl_; }
  void reset() { impl_.reset(); }

  // A view with other sizes/strides/offset over the same storage.
  Tensor as_strided(const Dims& sizes, const Dims& strides, int64_t offset) const;
  // This tensor if contiguous, else a contiguous copy.
  Tensor contiguous() const;
  // Always a new contiguous copy.
  Tensor clone() const;
  // A copy converted to dtype (this tensor itself if the dtype already matches and copy is false).
  Tensor to(DType dtype, bool copy = false) const;
  // A copy on another device (this tensor itself when it is already there).
  Tensor to_device(Device device) const;
  // Reads one element as a double / int64 (for item(), printing, tests).
  double item_double(int64_t linear_index = 0) const;
  Scalar item() const;

 private:
  [[noreturn]] void no_host_access() const;
  std::shared_ptr<TensorImpl> impl_;
};

// Checks that a tensor is defined and on the CPU, for the few ops that exist only there.
void check_cpu(const Tensor& t, const char* op);
// Checks that a tensor is defined (any device).
void check_defined(const Tensor& t, const char* op);
// "<op>: expected all tensors on one device, got cpu and cuda:0" unless b is on a's device.
void check_same_device(const char* op, const Tensor& a, const Tensor& b);

}  // namespace tide
