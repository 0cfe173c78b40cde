/* tide's C API: the capabilities of <tide/tide.hpp> for hosts written in C or reached by FFI.
 *
 * Functions returning int give 0 on success and -1 on failure; functions returning a pointer
 * give NULL on failure. After a failure, tide_last_error() is the calling thread's message
 * (with the Lua traceback for script errors). A failure never takes the host down, and the
 * interpreter stays usable. Tensor handles share memory with what they came from: each
 * handle a function returns is released with tide_tensor_free. docs/embedding.md is the guide. */
#ifndef TIDE_H
#define TIDE_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tide_interpreter tide_interpreter;
typedef struct tide_tensor tide_tensor;
typedef struct tide_call tide_call;

/* The element types, in the order of tide::DType. */
typedef enum {
  TIDE_BOOL, TIDE_UINT8, TIDE_INT8, TIDE_INT16, TIDE_INT32, TIDE_INT64,
  TIDE_FLOAT16, TIDE_BFLOAT16, TIDE_FLOAT32, TIDE_FLOAT64,
  TIDE_UINT16, TIDE_UINT32, TIDE_UINT64,
  TIDE_COMPLEX64, TIDE_COMPLEX128  /* interleaved (real, imag) float / double pairs */
} tide_dtype;

/* tide::InterpreterOptions; zero-initialise for the defaults (no sandbox, no limits). */
typedef struct {
  int sandbox;
  size_t memory_limit_bytes;
  uint64_t instruction_limit;
  double time_limit_seconds;
  int globals;
} tide_options;

/* The calling thread's message of its last failure ("" if none). */
const char* tide_last_error(void);

/* options may be NULL for the defaults. */
tide_interpreter* tide_new(const tide_options* options);
void tide_free(tide_interpreter* vm);
int tide_run_string(tide_interpreter* vm, const char* code);
int tide_run_file(tide_interpreter* vm, const char* path, int argc, const char* const* argv);
/* Bytes charged to the memory limit (Lua heap + tensors; the Lua heap without a limit). */
size_t tide_memory_used(const tide_interpreter* vm);

/* Globals, or dotted paths such as "model.fc.weight". */
int tide_set_number(tide_interpreter* vm, const char* name, double value);
int tide_get_number(tide_interpreter* vm, const char* name, double* out);
int tide_set_integer(tide_interpreter* vm, const char* name, int64_t value);
int tide_get_integer(tide_interpreter* vm, const char* name, int64_t* out);
int tide_set_boolean(tide_interpreter* vm, const char* name, int value);
int tide_get_boolean(tide_interpreter* vm, const char* name, int* out);
int tide_set_string(tide_interpreter* vm, const char* name, const char* value);
/* The string stays valid until the next call on vm. */
const char* tide_get_string(tide_interpreter* vm, const char* name);
/* An array table of numbers; get stores up to capacity values and the table's length in *count. */
int tide_set_numbers(tide_interpreter* vm, const char* name, const double* values, size_t count);
int tide_get_numbers(tide_interpreter* vm, const char* name, double* out, size_t capacity, size_t* count);
int tide_set_tensor(tide_interpreter* vm, const char* name, const tide_tensor* tensor);
tide_tensor* tide_get_tensor(tide_interpreter* vm, const char* name);

/* Host functions: fn returns 0, or non-zero after tide_call_error to raise a Lua error. */
typedef int (*tide_host_fn)(tide_call* call, void* ctx);
int tide_def(tide_interpreter* vm, const char* name, tide_host_fn fn, void* ctx);
int tide_call_argc(const tide_call* call);
/* Arguments are 1-based, as in Lua. */
int tide_call_arg_number(const tide_call* call, int i, double* out);
int tide_call_arg_integer(const tide_call* call, int i, int64_t* out);
int tide_call_arg_boolean(const tide_call* call, int i, int* out);
const char* tide_call_arg_string(const tide_call* call, int i);
tide_tensor* tide_call_arg_tensor(const tide_call* call, int i);
void tide_call_return_number(tide_call* call, double value);
void tide_call_return_integer(tide_call* call, int64_t value);
void tide_call_return_boolean(tide_call* call, int value);
void tide_call_return_string(tide_call* call, const char* value);
void tide_call_return_tensor(tide_call* call, const tide_tensor* value);
/* Records the error to raise; returns -1 so that a host function can `return tide_call_error(...)`. */
int tide_call_error(tide_call* call, const char* message);

/* Wraps memory the caller owns: strides in elements (NULL: contiguous); device is kDLCPU or
 * kDLCUDA; deleter (may be NULL) runs with (data, ctx) when the last view dies. */
tide_tensor* tide_tensor_from_blob(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                                   tide_dtype dtype, DLDevice device, void (*deleter)(void* data, void* ctx),
                                   void* ctx);
/* Takes ownership of a DLPack tensor (left to the caller on failure). */
tide_tensor* tide_tensor_from_dlpack(DLManagedTensor* managed);
DLManagedTensor* tide_tensor_to_dlpack(const tide_tensor* tensor);
void tide_tensor_free(tide_tensor* tensor);
void* tide_tensor_data(const tide_tensor* tensor);
int tide_tensor_ndim(const tide_tensor* tensor);
const int64_t* tide_tensor_shape(const tide_tensor* tensor);
const int64_t* tide_tensor_strides(const tide_tensor* tensor);
int64_t tide_tensor_numel(const tide_tensor* tensor);
tide_dtype tide_tensor_dtype(const tide_tensor* tensor);
DLDevice tide_tensor_device(const tide_tensor* tensor);

#ifdef __cplusplus
}
#endif

#endif /* TIDE_H */
