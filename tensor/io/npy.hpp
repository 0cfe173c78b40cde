// NumPy's file formats: .npy (one array) and .npz (a zip archive of .npy members).
//
// Reading accepts format versions 1.0, 2.0 and 3.0, every byte order, C and Fortran order,
// 0-d and empty arrays, and .npz members stored or deflate-compressed (CRC-checked).
// Writing produces version 1.0 (2.0 only if a header ever needs more than 64 KiB) with the
// header padded to 64 bytes as NumPy does; .npz archives are written stored (np.savez) or
// deflated (np.savez_compressed).
//
// Every input is untrusted: header lengths, dtype strings, shapes (and their products),
// zip sizes and offsets are validated against the file's size BEFORE anything is
// allocated, and decompression writes into the declared size only. A bad file is a
// tide::Error whose message starts with the op ("np.load: ") and names the file.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../tensor.hpp"

namespace tide::io {

using NamedTensor = std::pair<std::string, Tensor>;

// What np.load found: one array (.npy) or the members of an archive (.npz), in archive order.
struct Loaded {
  bool is_npz = false;
  Tensor tensor;                     // when !is_npz
  std::vector<NamedTensor> members;  // when is_npz; names without the ".npy" suffix
};

// Largest .npy header accepted on reading (NumPy's own default limit is 10000 bytes).
constexpr size_t kMaxNpyHeader = 1 << 16;

// Loads a .npy or .npz file, told apart by its magic bytes (not by its name).
Loaded load(const std::string& path, const char* op = "np.load");
Tensor load_npy(const std::string& path, const char* op = "np.load");
std::vector<NamedTensor> load_npz(const std::string& path, const char* op = "np.load");

// np.load(path, {mmap_mode=}): a tensor over the mapped .npy file, nothing read but the
// header (parsed and checked as load does). ReadOnly ("r"): writes are refused (the storage
// is read_only); CopyOnWrite ("c"): writes stay private to the process; ReadWrite ("r+"):
// writes go to the file. Data tide converts on loading (bool, unsigned 16/32-bit, the other
// byte order) cannot be mapped.
enum class MmapMode { ReadOnly, CopyOnWrite, ReadWrite };
Tensor load_npy_mmap(const std::string& path, MmapMode mode, const char* op = "np.load");

// Writes t (any layout; a non-contiguous tensor is written as its contiguous copy) to
// path exactly as given (the ".npy" suffix is the binding's business).
void save_npy(const std::string& path, const Tensor& t, const char* op = "np.save");
// Writes an archive of "<name>.npy" members; compressed = np.savez_compressed.
void save_npz(const std::string& path, const std::vector<NamedTensor>& members, bool compressed,
              const char* op = "np.savez");

// The same on in-memory buffers (used by the tests; `name` stands for the file in messages).
Loaded load_bytes(const void* data, size_t size, const std::string& name = "<buffer>",
                  const char* op = "np.load");
std::string save_npy_bytes(const Tensor& t, const char* op = "np.save");
std::string save_npz_bytes(const std::vector<NamedTensor>& members, bool compressed,
                           const char* op = "np.savez");

// The NumPy descr of a dtype ('<f4', '|b1', ...); throws for bfloat16, which NumPy lacks.
std::string npy_descr(DType dtype, const char* op = "np.save");

// A parsed .npy header (exposed for tests).
struct NpyHeader {
  DType dtype = DType::Float64;  // the dtype the array gets in tide
  char kind = 'f';               // NumPy's kind of the stored data: b u i f
  int file_itemsize = 8;         // bytes per stored element
  bool byteswap = false;         // stored in the other byte order than this machine's
  bool fortran_order = false;
  Dims shape;
};
// Parses the dict text of a header ("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }").
// `where` prefixes error messages ("np.load: data.npy").
NpyHeader parse_npy_header(const std::string& text, const std::string& where);

}  // namespace tide::io
