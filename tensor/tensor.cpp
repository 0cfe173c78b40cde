// Device names, shape helpers, Storage and the Tensor view.
#include "tensor.hpp"

#include <climits>
#include <cstdlib>
#include <ostream>

#include "allocator.hpp"
#include "pool.hpp"
#include "backend.hpp"
#include "ops/elementwise.hpp"

namespace tide {

// The small-object pool (pool.hpp): the lists, and their release at thread exit.
namespace detail {
constinit thread_local BlockPool t_pool{};

namespace {
struct BlockPoolRelease {
  ~BlockPoolRelease() {
    t_pool.state = BlockPool::Exited;
    for (BlockPool::Node*& h : t_pool.heads)
      while (h) {
        BlockPool::Node* n = h->next;
        ::operator delete(h);
        h = n;
      }
  }
};
}  // namespace

bool pool_activate() {
  if (t_pool.state == BlockPool::Exited) return false;
  static thread_local BlockPoolRelease release;  // registers the release at thread exit
  t_pool.state = BlockPool::Active;
  return true;
}
}  // namespace detail

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

Device Device::parse(const std::string& s) {
  if (s == "cpu") return {};
  if (s == "cuda") return {DeviceType::CUDA, 0};
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5) {
    char* end = nullptr;
    long idx = std::strtol(s.c_str() + 5, &end, 10);
    if (*end == '\0' && idx >= 0 && idx < 1024) return {DeviceType::CUDA, int(idx)};
  }
  TIDE_FAIL("device: unknown device '", quote_user(s), "' (expected \"cpu\", \"cuda\" or \"cuda:N\")");
}

std::string Dims::str() const {
  std::string s = "{";
  for (int i = 0; i < n_; ++i) {
    if (i) s += ",";
    s += std::to_string(v_[i]);
  }
  return s + "}";
}

std::ostream& operator<<(std::ostream& os, const Dims& d) { return os << d.str(); }

void check_extent(const char* op, const Dims& shape, DType dtype) {
  const int64_t item = int64_t(dtype_size(dtype));
  int64_t stride = item, bytes = item;  // the first dim's byte stride; the byte size
  bool overflow = false, zero = false;
  for (int i = shape.size() - 1; i >= 0; --i) {
    const int64_t s = shape[i];
    if (s < 0) [[unlikely]]
      detail::fail(op, ": sizes must be non-negative, got ", s, " in shape ", shape);
    if (i > 0) overflow |= __builtin_mul_overflow(stride, s > 0 ? s : 1, &stride);
    overflow |= !zero && __builtin_mul_overflow(bytes, s, &bytes);
    zero |= s == 0;
  }
  if (overflow) [[unlikely]]
    detail::fail(op, ": shape ", shape, " of ", dtype_name(dtype),
                 " is too large (its byte size or strides would pass 2^63-1)");
}

int64_t shape_numel(const Dims& shape, const char* op) {
  int64_t n = 1;
  bool overflow = false, zero = false;
  for (int64_t s : shape) {
    if (s < 0) [[unlikely]]
      detail::fail(op, ": sizes must be non-negative, got ", s, " in shape ", shape);
    overflow |= __builtin_mul_overflow(n, s, &n);
    zero |= s == 0;
  }
  if (zero) return 0;  // a 0 anywhere makes the product 0, whatever came before it
  if (overflow) [[unlikely]]
    detail::fail(op, ": shape ", shape, " has too many elements (more than 2^63-1)");
  return n;
}

Dims contiguous_strides(const Dims& shape, const char* op) {
  Dims st(shape.size(), 1);
  int64_t acc = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    st[i] = acc;
    if (i > 0 && __builtin_mul_overflow(acc, shape[i] > 0 ? shape[i] : 1, &acc)) [[unlikely]]
      detail::fail(op, ": shape ", shape, " is too large (its strides would pass 2^63-1)");
  }
  return st;
}

std::string quote_user(std::string_view s) {
  if (s.size() <= kQuoteChars) return std::string(s);
  size_t cut = kQuoteChars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return std::string(s.substr(0, cut)) + "... (" + std::to_string(s.size()) + " bytes)";
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  if (device.is_cpu()) {
    auto s = std::allocate_shared<Storage>(PoolAllocator<Storage>(), cpu_allocate(nbytes), nbytes, device, nullptr);
    capture::note_allocated(s);
    return s;
  }
  const DeviceBackend& be = backend_for(device.type);
  void* p = be.allocate(nbytes, device.index);
  auto s = std::make_shared<Storage>(p, nbytes, device, nullptr);
  capture::note_allocated(s);
  return s;
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device,
                                       std::function<void(void*)> deleter) {
  if (!deleter) deleter = [](void*) {};
  capture::note_host_access();  // memory the engine does not own: a tape could not keep it
  return std::make_shared<Storage>(data, nbytes, device, std::move(deleter));
}

Storage::~Storage() { release_memory(); }

void Storage::release_memory() {
  if (deleter_) {
    deleter_(data_);
  } else if (device_.is_cpu()) {
    cpu_free(data_, nbytes_);
  } else {
    backend_for(device_.type).free(data_, nbytes_, device_.index);
  }
}

void Storage::replace_memory(void* data, std::function<void(void*)> deleter, int shared_fd) {
  TIDE_ASSERT(owns_memory() && !exported());
  release_memory();
  data_ = data;
  deleter_ = std::move(deleter);
  shared_fd_ = shared_fd;
}

// Complex tensors live on the CPU only: no device kernel handles their 16-byte complex128
// items, so every way onto a device (empty, to_device, a view) refuses them here.
static void check_complex_on(const char* op, DType dtype, Device device) {
  if (is_complex(dtype) && !device.is_cpu()) [[unlikely]]
    TIDE_FAIL(op, ": ", dtype_name(dtype), " tensors are not supported on ", device.str(),
              " (complex tensors stay on the cpu)");
}

Tensor Tensor::empty(const Dims& shape, DType dtype, Device device, const char* op) {
  check_extent(op, shape, dtype);
  check_complex_on(op, dtype, device);
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->storage = Storage::allocate(size_t(shape_numel(shape)) * dtype_size(dtype), device);
  impl->sizes = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

// Every view passes through here. Its byte size must fit; its contiguous strides need not
// (a view of an empty tensor may put a huge size behind a new first dim, as unsqueeze does,
// and it never addresses memory through them). A view op that can grow a shape (expand,
// view, reshape) checks it under its own name first, so a failure here is a bug in tide.
Tensor Tensor::make_view(std::shared_ptr<Storage> storage, const Dims& sizes, const Dims& strides,
                         int64_t offset, DType dtype) {
  constexpr const char* kBug = "internal error (a bug in tide): view";
  checked_mul(kBug, shape_numel(sizes, kBug), int64_t(dtype_size(dtype)), "the byte size of shape ", sizes);
  check_complex_on("view", dtype, storage->device());
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->storage = std::move(storage);
  impl->sizes = sizes;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

// Exact: a 0 makes it 0 before any other product is formed (the sizes of an empty tensor
// may multiply past int64), and without a 0 the product fits (check_extent).
int64_t Tensor::numel() const {
  for (int64_t s : impl_->sizes)
    if (s == 0) return 0;
  int64_t n = 1;
  for (int64_t s : impl_->sizes) n *= s;
  return n;
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    int64_t s = impl_->sizes[i];
    if (s == 0) return true;
    if (s != 1 && impl_->strides[i] != expected) return false;
    expected *= s;
  }
  return true;
}

bool Tensor::has_negative_stride() const {
  for (int i = 0; i < dim(); ++i)
    if (impl_->strides[i] < 0 && impl_->sizes[i] > 1) return true;
  return false;
}

Tensor Tensor::as_strided(const Dims& sizes, const Dims& strides, int64_t offset) const {
  Tensor v = make_view(impl_->storage, sizes, strides, offset, impl_->dtype);
  v.impl()->base = impl_->base ? impl_->base : impl_;
  return v;
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor out = empty(sizes(), dtype(), device());
  ops::copy_(out, *this);
  return out;
}

Tensor Tensor::to_device(Device d) const {
  if (d == device()) return *this;
  Tensor src = contiguous();
  Tensor out = empty(sizes(), dtype(), d, "to");
  if (size_t n = src.nbytes()) {
    const DeviceBackend& be = backend_for(d.is_cpu() ? src.device() : d);
    be.copy_bytes(out.address(), d, src.address(), src.device(), n);
  }
  return out;
}

void Tensor::no_host_access() const {
  TIDE_FAIL("tensor: this operation has no ", device().str(), " implementation; move the tensor with :cpu() first");
}

Tensor Tensor::to(DType dt, bool copy) const {
  if (dt == dtype() && !copy) return *this;
  return ops::cast(*this, dt);
}

Scalar Tensor::item() const {
  TIDE_CHECK(numel() == 1, "item: a tensor with ", numel(), " elements cannot be converted to a number (shape ",
             sizes().str(), ")");
  if (!device().is_cpu()) return to_device(Device{}).item();
  Scalar s;
  TIDE_DISPATCH_ALL_AND_COMPLEX(dtype(), "item", [&] { s = Scalar::of(*data<scalar_t>()); });
  return s;
}

double Tensor::item_double(int64_t linear_index) const {
  // Walk the strides for the linear (row-major) index.
  int64_t off = 0, rem = linear_index;
  for (int d = dim() - 1; d >= 0; --d) {
    int64_t s = size(d);
    off += (rem % s) * stride(d);
    rem /= s;
  }
  if (!device().is_cpu())  // only that element crosses to the host
    return make_view(storage(), {}, {}, offset() + off, dtype()).to_device(Device{}).item_double();
  double v = 0;
  TIDE_DISPATCH_ALL(dtype(), "item", [&] { v = double(compute_t<scalar_t>(data<scalar_t>()[off])); });
  return v;
}

void check_defined(const Tensor& t, const char* op) {
  TIDE_CHECK(t.defined(), op, ": got an undefined tensor");
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  TIDE_CHECK(a.device() == b.device(), op, ": expected all tensors on one device, got ", a.device().str(),
             " and ", b.device().str());
}

void check_cpu(const Tensor& t, const char* op) {
  TIDE_CHECK(t.defined(), op, ": got an undefined tensor");
  TIDE_CHECK(t.device().is_cpu(), op, ": expected a cpu tensor, got one on ", t.device().str());
}

}  // namespace tide
