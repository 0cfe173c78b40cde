// Zero-copy interop: from_blob, DLPack import and export.
#include "dlpack.hpp"

#include <string>

namespace tide {

namespace {

// The memory a view of these sizes and strides reaches from its first element: `below`
// elements before it (negative strides walk backwards) and `bytes` in all (0 for an empty
// tensor). Throws naming `op` on a negative size or overflow.
struct Reach {
  int64_t below = 0;
  size_t bytes = 0;
};
Reach reach_of(const Dims& shape, const Dims& strides, DType dtype, const char* op) {
  for (int d = 0; d < shape.size(); ++d) {
    TIDE_CHECK(shape[d] >= 0, op, ": negative size ", shape[d], " in shape ", shape.str());
    if (shape[d] == 0) return {};
  }
  int64_t low = 0, high = 0, reach, bytes;
  bool overflow = false;
  for (int d = 0; d < shape.size(); ++d) {
    overflow = overflow || __builtin_mul_overflow(shape[d] - 1, strides[d], &reach) ||
               __builtin_add_overflow(reach < 0 ? low : high, reach, reach < 0 ? &low : &high);
  }
  overflow = overflow || __builtin_sub_overflow(high, low, &reach) || __builtin_add_overflow(reach, 1, &reach) ||
             __builtin_mul_overflow(reach, int64_t(dtype_size(dtype)), &bytes);
  TIDE_CHECK(!overflow, op, ": shape ", shape.str(), " with strides ", strides.str(), " spans more memory than exists");
  return {-low, size_t(bytes)};
}

// What a DLPack export keeps alive: the tensor, and the shape and strides arrays it points to.
// While it lives, the storage counts it as an export (its bytes must not move).
struct ExportContext {
  Tensor tensor;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  DLManagedTensor managed = {};
  explicit ExportContext(const Tensor& t) : tensor(t) { tensor.storage()->add_export(1); }
  ~ExportContext() { tensor.storage()->add_export(-1); }
  ExportContext(const ExportContext&) = delete;
  ExportContext& operator=(const ExportContext&) = delete;
};

}  // namespace

DLDataType to_dlpack_dtype(DType dtype) {
  DLDataType dl{kDLFloat, uint8_t(dtype_size(dtype) * 8), 1};
  switch (dtype) {
    case DType::Bool: dl.code = kDLBoolCode; break;
    case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64: dl.code = kDLUInt; break;
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64: dl.code = kDLInt; break;
    case DType::BFloat16: dl.code = kDLBfloat; break;
    case DType::Float16: case DType::Float32: case DType::Float64: dl.code = kDLFloat; break;
    case DType::Complex64: case DType::Complex128: dl.code = kDLComplex; break;  // bits: both parts
  }
  return dl;
}

DType from_dlpack_dtype(DLDataType dl, const char* op) {
  TIDE_CHECK(dl.lanes == 1, op, ": vector types (lanes = ", dl.lanes, ") are not supported");
  switch (dl.code) {
    case kDLBoolCode:
      if (dl.bits == 8) return DType::Bool;
      break;
    case kDLUInt:
      if (dl.bits == 8) return DType::UInt8;
      if (dl.bits == 16) return DType::UInt16;
      if (dl.bits == 32) return DType::UInt32;
      if (dl.bits == 64) return DType::UInt64;
      break;
    case kDLInt:
      if (dl.bits == 8) return DType::Int8;
      if (dl.bits == 16) return DType::Int16;
      if (dl.bits == 32) return DType::Int32;
      if (dl.bits == 64) return DType::Int64;
      break;
    case kDLFloat:
      if (dl.bits == 16) return DType::Float16;
      if (dl.bits == 32) return DType::Float32;
      if (dl.bits == 64) return DType::Float64;
      break;
    case kDLBfloat:
      if (dl.bits == 16) return DType::BFloat16;
      break;
    case kDLComplex:
      if (dl.bits == 64) return DType::Complex64;
      if (dl.bits == 128) return DType::Complex128;
      break;
    default:
      break;
  }
  TIDE_FAIL(op, ": unsupported DLPack data type (code ", int(dl.code), ", ", int(dl.bits),
            " bits): expected bool, uint8-uint64, int8-int64, float16, bfloat16, float32, float64, complex64 or "
            "complex128");
}

Tensor Tensor::from_blob(void* data, const Dims& shape, DType dtype, const Dims& strides,
                         std::function<void(void*)> deleter, Device device) {
  check_extent("from_blob", shape, dtype);
  Dims st = strides.empty() && !shape.empty() ? contiguous_strides(shape, "from_blob") : strides;
  TIDE_CHECK(st.size() == shape.size(), "from_blob: ", shape.size(), " sizes ", shape.str(), " but ", st.size(),
             " strides ", st.str());
  const Reach r = reach_of(shape, st, dtype, "from_blob");
  TIDE_CHECK(data != nullptr || r.bytes == 0, "from_blob: null data pointer for a tensor of shape ", shape.str());
  // The storage starts at the lowest address; the deleter still gets the pointer it was given.
  char* low = static_cast<char*>(data) - r.below * int64_t(dtype_size(dtype));
  if (r.below > 0 && deleter) deleter = [d = std::move(deleter), data](void*) { d(data); };
  auto storage = Storage::wrap(low, r.bytes, device, std::move(deleter));
  return make_view(std::move(storage), shape, st, r.below, dtype);
}

Tensor Tensor::from_blob(void* data, const Dims& shape, DType dtype, std::function<void(void*)> deleter,
                         Device device) {
  return from_blob(data, shape, dtype, Dims{}, std::move(deleter), device);
}

Tensor Tensor::from_dlpack(DLManagedTensor* managed) {
  TIDE_CHECK(managed != nullptr, "from_dlpack: null DLManagedTensor");
  const DLTensor& dl = managed->dl_tensor;
  Device device;
  switch (dl.device.device_type) {
    case kDLCPU: case kDLCUDAHost: break;
    case kDLCUDA: case kDLCUDAManaged: device = Device{DeviceType::CUDA, dl.device.device_id}; break;
    default: TIDE_FAIL("from_dlpack: unsupported device type ", int(dl.device.device_type), " (expected CPU or CUDA)");
  }
  TIDE_CHECK(dl.ndim >= 0 && dl.ndim <= kMaxDims, "from_dlpack: ", dl.ndim, " dims (at most ", kMaxDims,
             " are supported)");
  TIDE_CHECK(dl.ndim == 0 || dl.shape != nullptr, "from_dlpack: null shape for ", dl.ndim, " dims");
  DType dtype = from_dlpack_dtype(dl.dtype, "from_dlpack");
  Dims shape, strides;
  for (int d = 0; d < dl.ndim; ++d) shape.push_back(dl.shape[d]);
  check_extent("from_dlpack", shape, dtype);
  if (dl.strides)
    for (int d = 0; d < dl.ndim; ++d) strides.push_back(dl.strides[d]);
  else
    strides = contiguous_strides(shape, "from_dlpack");
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  // Validated by from_blob before the deleter is attached: on an error the caller keeps it.
  return from_blob(data, shape, dtype, strides,
                   [managed](void*) {
                     if (managed->deleter) managed->deleter(managed);
                   },
                   device);
}

DLManagedTensor* Tensor::to_dlpack() const {
  TIDE_CHECK(defined(), "to_dlpack: the tensor is undefined (freed)");
  auto* ctx = new ExportContext(*this);
  for (int d = 0; d < dim(); ++d) {
    ctx->shape[d] = size(d);
    ctx->strides[d] = stride(d);
  }
  Device dev = device();
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = data_ptr();
  dl.device = DLDevice{dev.is_cuda() ? kDLCUDA : kDLCPU, dev.index};
  dl.ndim = dim();
  dl.dtype = to_dlpack_dtype(dtype());
  dl.shape = ctx->shape;
  dl.strides = ctx->strides;
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* self) { delete static_cast<ExportContext*>(self->manager_ctx); };
  return &ctx->managed;
}

}  // namespace tide
