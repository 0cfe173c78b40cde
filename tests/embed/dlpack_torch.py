# DLPack interop with PyTorch through tide's C API, reached by ctypes (FFI): a tide tensor
# goes to PyTorch and a PyTorch tensor comes to tide, both without copies, and writes on
# either side are seen on the other. Run by tests/lua/test_embed.sh:
#   /usr/bin/python3 tests/embed/dlpack_torch.py path/to/libtide.so
import ctypes, sys
import torch
from torch.utils import dlpack
lib = ctypes.CDLL(sys.argv[1])
lib.tide_new.restype = ctypes.c_void_p
lib.tide_new.argtypes = [ctypes.c_void_p]
lib.tide_run_string.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.tide_get_tensor.restype = ctypes.c_void_p
lib.tide_get_tensor.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.tide_set_tensor.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
lib.tide_tensor_to_dlpack.restype = ctypes.c_void_p
lib.tide_tensor_to_dlpack.argtypes = [ctypes.c_void_p]
lib.tide_tensor_from_dlpack.restype = ctypes.c_void_p
lib.tide_tensor_from_dlpack.argtypes = [ctypes.c_void_p]
lib.tide_tensor_data.restype = ctypes.c_void_p
lib.tide_tensor_data.argtypes = [ctypes.c_void_p]
lib.tide_get_number.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_double)]
lib.tide_tensor_free.argtypes = [ctypes.c_void_p]
lib.tide_free.argtypes = [ctypes.c_void_p]
capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
capsule_get.restype = ctypes.c_void_p
capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_rename = ctypes.pythonapi.PyCapsule_SetName
capsule_rename.argtypes = [ctypes.py_object, ctypes.c_char_p]

vm = lib.tide_new(None)
assert lib.tide_run_string(vm, b"local torch = require 'torch'; a = torch.arange(6, {dtype = 'float64'}):view(2, 3):t()") == 0
a = lib.tide_get_tensor(vm, b"a")
t = dlpack.from_dlpack(capsule_new(lib.tide_tensor_to_dlpack(a), b"dltensor", None))
assert t.dtype == torch.float64 and tuple(t.shape) == (3, 2) and t.stride() == (1, 3), (t.dtype, t.shape, t.stride())
assert t.data_ptr() == lib.tide_tensor_data(a)
assert t.tolist() == [[0, 3], [1, 4], [2, 5]], t.tolist()
t[0, 1] = 100.0  # visible in tide
assert lib.tide_run_string(vm, b"v = a[1][2]:item()") == 0
v = ctypes.c_double()
assert lib.tide_get_number(vm, b"v", ctypes.byref(v)) == 0 and v.value == 100.0

p = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1:3]
cap = dlpack.to_dlpack(p)
b = lib.tide_tensor_from_dlpack(capsule_get(cap, b"dltensor"))
capsule_rename(cap, b"used_dltensor")  # tide owns it now
assert b and lib.tide_tensor_data(b) == p.data_ptr()
assert lib.tide_set_tensor(vm, b"b", b) == 0
assert lib.tide_run_string(vm, b"s = b:sum():item(); b:mul_(2)") == 0
assert lib.tide_get_number(vm, b"s", ctypes.byref(v)) == 0
assert v.value == 1 + 2 + 5 + 6 + 9 + 10, v.value
assert p.tolist() == [[2, 4], [10, 12], [18, 20]], p.tolist()
lib.tide_tensor_free(a); lib.tide_tensor_free(b); lib.tide_free(vm)
del t, p, cap
print("pytorch dlpack ok")
