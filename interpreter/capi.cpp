// The C API (include/tide/tide.h) over tide::Interpreter and tide::Tensor: every function
// catches C++ exceptions and turns them into a failure code plus tide_last_error().
#include "../include/tide/tide.h"

#include <cstring>
#include <string>

#include "../tensor/dlpack.hpp"
#include "interpreter.hpp"

struct tide_interpreter {
  explicit tide_interpreter(const tide::InterpreterOptions& o) : vm(o) {}
  tide::Interpreter vm;
  std::string string_result;  // what tide_get_string returned last
};

struct tide_tensor {
  tide::Tensor t;
};

struct tide_call {
  const std::vector<tide::Value>* args;
  tide::Value result;
  std::string error;
};

namespace {

thread_local std::string t_last_error;

// Runs body; on an exception records its message and returns `failure`.
template <typename R, typename F>
R guarded(R failure, F&& body) noexcept {
  try {
    t_last_error.clear();
    return body();
  } catch (const std::exception& e) {
    try {
      t_last_error = e.what();
    } catch (...) {
    }
  } catch (...) {
    t_last_error = "unknown C++ exception";
  }
  return failure;
}

tide_tensor* new_handle(tide::Tensor t) { return new tide_tensor{std::move(t)}; }

// The argument i (1-based) of a host call, nil when absent.
tide::Value arg_at(const tide_call* call, int i) {
  return i >= 1 && size_t(i) <= call->args->size() ? (*call->args)[size_t(i - 1)] : tide::Value();
}

std::string arg_name(int i) { return "argument " + std::to_string(i); }

}  // namespace

extern "C" {

const char* tide_last_error(void) { return t_last_error.c_str(); }

tide_interpreter* tide_new(const tide_options* options) {
  return guarded<tide_interpreter*>(nullptr, [&] {
    tide::InterpreterOptions o;
    if (options) {
      o.sandbox = options->sandbox != 0;
      o.memory_limit_bytes = options->memory_limit_bytes;
      o.instruction_limit = options->instruction_limit;
      o.time_limit_seconds = options->time_limit_seconds;
      o.globals = options->globals != 0;
    }
    return new tide_interpreter(o);
  });
}

void tide_free(tide_interpreter* vm) { delete vm; }

int tide_run_string(tide_interpreter* vm, const char* code) {
  return guarded(-1, [&] {
    vm->vm.run_string(code);
    return 0;
  });
}

int tide_run_file(tide_interpreter* vm, const char* path, int argc, const char* const* argv) {
  return guarded(-1, [&] {
    vm->vm.run_file(path, std::vector<std::string>(argv, argv + (argv ? argc : 0)));
    return 0;
  });
}

size_t tide_memory_used(const tide_interpreter* vm) { return vm->vm.memory_used(); }

int tide_set_number(tide_interpreter* vm, const char* name, double value) {
  return guarded(-1, [&] { return vm->vm.set(name, value), 0; });
}
int tide_get_number(tide_interpreter* vm, const char* name, double* out) {
  return guarded(-1, [&] { return *out = vm->vm.get<double>(name), 0; });
}
int tide_set_integer(tide_interpreter* vm, const char* name, int64_t value) {
  return guarded(-1, [&] { return vm->vm.set(name, value), 0; });
}
int tide_get_integer(tide_interpreter* vm, const char* name, int64_t* out) {
  return guarded(-1, [&] { return *out = vm->vm.get<int64_t>(name), 0; });
}
int tide_set_boolean(tide_interpreter* vm, const char* name, int value) {
  return guarded(-1, [&] { return vm->vm.set(name, value != 0), 0; });
}
int tide_get_boolean(tide_interpreter* vm, const char* name, int* out) {
  return guarded(-1, [&] { return *out = vm->vm.get<bool>(name), 0; });
}
int tide_set_string(tide_interpreter* vm, const char* name, const char* value) {
  return guarded(-1, [&] { return vm->vm.set(name, std::string(value)), 0; });
}
const char* tide_get_string(tide_interpreter* vm, const char* name) {
  return guarded<const char*>(nullptr, [&] {
    vm->string_result = vm->vm.get<std::string>(name);
    return vm->string_result.c_str();
  });
}
int tide_set_numbers(tide_interpreter* vm, const char* name, const double* values, size_t count) {
  return guarded(-1, [&] { return vm->vm.set(name, std::vector<double>(values, values + count)), 0; });
}
int tide_get_numbers(tide_interpreter* vm, const char* name, double* out, size_t capacity, size_t* count) {
  return guarded(-1, [&] {
    auto values = vm->vm.get<std::vector<double>>(name);
    std::memcpy(out, values.data(), std::min(capacity, values.size()) * sizeof(double));
    *count = values.size();
    return 0;
  });
}
int tide_set_tensor(tide_interpreter* vm, const char* name, const tide_tensor* tensor) {
  return guarded(-1, [&] { return vm->vm.set(name, tensor->t), 0; });
}
tide_tensor* tide_get_tensor(tide_interpreter* vm, const char* name) {
  return guarded<tide_tensor*>(nullptr, [&] { return new_handle(vm->vm.get<tide::Tensor>(name)); });
}

int tide_def(tide_interpreter* vm, const char* name, tide_host_fn fn, void* ctx) {
  return guarded(-1, [&] {
    vm->vm.def_function(name, [fn, ctx](const std::vector<tide::Value>& args) {
      tide_call call{&args, {}, {}};
      if (fn(&call, ctx) != 0) throw tide::Error(call.error.empty() ? "the host function failed" : call.error);
      return call.result;
    });
    return 0;
  });
}

int tide_call_argc(const tide_call* call) { return int(call->args->size()); }
int tide_call_arg_number(const tide_call* call, int i, double* out) {
  return guarded(-1, [&] { return *out = arg_at(call, i).as<double>(arg_name(i)), 0; });
}
int tide_call_arg_integer(const tide_call* call, int i, int64_t* out) {
  return guarded(-1, [&] { return *out = arg_at(call, i).as<int64_t>(arg_name(i)), 0; });
}
int tide_call_arg_boolean(const tide_call* call, int i, int* out) {
  return guarded(-1, [&] { return *out = arg_at(call, i).as<bool>(arg_name(i)), 0; });
}
const char* tide_call_arg_string(const tide_call* call, int i) {
  return guarded<const char*>(nullptr, [&] {
    if (i < 1 || size_t(i) > call->args->size()) tide::Value().as<std::string>(arg_name(i));  // throws
    const tide::Value& v = (*call->args)[size_t(i - 1)];
    auto* s = std::get_if<std::string>(&v.v);
    if (!s) v.as<std::string>(arg_name(i));  // throws the mismatch
    return s->c_str();
  });
}
tide_tensor* tide_call_arg_tensor(const tide_call* call, int i) {
  return guarded<tide_tensor*>(nullptr, [&] { return new_handle(arg_at(call, i).as<tide::Tensor>(arg_name(i))); });
}
void tide_call_return_number(tide_call* call, double value) { call->result = value; }
void tide_call_return_integer(tide_call* call, int64_t value) { call->result = value; }
void tide_call_return_boolean(tide_call* call, int value) { call->result = value != 0; }
void tide_call_return_string(tide_call* call, const char* value) { call->result = std::string(value); }
void tide_call_return_tensor(tide_call* call, const tide_tensor* value) { call->result = value->t; }
int tide_call_error(tide_call* call, const char* message) {
  call->error = message;
  return -1;
}

tide_tensor* tide_tensor_from_blob(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                                   tide_dtype dtype, DLDevice device, void (*deleter)(void* data, void* ctx),
                                   void* ctx) {
  return guarded<tide_tensor*>(nullptr, [&] {
    TIDE_CHECK(ndim >= 0 && ndim <= tide::kMaxDims, "from_blob: ", ndim, " dims (at most ", tide::kMaxDims, ")");
    TIDE_CHECK(int(dtype) >= 0 && int(dtype) < tide::kNumDTypes, "from_blob: unknown dtype ", int(dtype));
    TIDE_CHECK(device.device_type == kDLCPU || device.device_type == kDLCUDA, "from_blob: unsupported device type ",
               int(device.device_type), " (expected kDLCPU or kDLCUDA)");
    tide::Dims sizes, st;
    for (int d = 0; d < ndim; ++d) sizes.push_back(shape[d]);
    if (strides)
      for (int d = 0; d < ndim; ++d) st.push_back(strides[d]);
    std::function<void(void*)> release;
    if (deleter) release = [deleter, ctx](void* p) { deleter(p, ctx); };
    tide::Device dev{device.device_type == kDLCUDA ? tide::DeviceType::CUDA : tide::DeviceType::CPU,
                     device.device_id};
    return new_handle(tide::Tensor::from_blob(data, sizes, tide::DType(dtype), st, std::move(release), dev));
  });
}

tide_tensor* tide_tensor_from_dlpack(DLManagedTensor* managed) {
  return guarded<tide_tensor*>(nullptr, [&] { return new_handle(tide::Tensor::from_dlpack(managed)); });
}
DLManagedTensor* tide_tensor_to_dlpack(const tide_tensor* tensor) {
  return guarded<DLManagedTensor*>(nullptr, [&] { return tensor->t.to_dlpack(); });
}
void tide_tensor_free(tide_tensor* tensor) { delete tensor; }
void* tide_tensor_data(const tide_tensor* tensor) { return tensor->t.data_ptr(); }
int tide_tensor_ndim(const tide_tensor* tensor) { return tensor->t.dim(); }
const int64_t* tide_tensor_shape(const tide_tensor* tensor) { return tensor->t.shape().begin(); }
const int64_t* tide_tensor_strides(const tide_tensor* tensor) { return tensor->t.strides().begin(); }
int64_t tide_tensor_numel(const tide_tensor* tensor) { return tensor->t.numel(); }
tide_dtype tide_tensor_dtype(const tide_tensor* tensor) { return tide_dtype(tensor->t.dtype()); }
DLDevice tide_tensor_device(const tide_tensor* tensor) {
  tide::Device d = tensor->t.device();
  return DLDevice{d.is_cuda() ? kDLCUDA : kDLCPU, d.index};
}

}  // extern "C"
