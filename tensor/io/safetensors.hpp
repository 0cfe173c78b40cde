// The safetensors format (Hugging Face's checkpoint files) and tide's checkpoints on top of it.
//
// A file is an 8-byte little-endian header length N, N bytes of JSON header
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value", ...}}
// (possibly padded with spaces), then the data buffer: every tensor's values little-endian,
// row-major, at [begin, end) of the buffer, the tensors together covering it without gaps or
// overlap. dtypes: BOOL U8 I8 I16 I32 I64 F16 BF16 F32 F64.
//
// Every input is untrusted: the header length, the JSON, every dtype, shape and offset are
// checked against the file's size before anything is allocated. A bad file is a tide::Error
// that starts with the op and the file's name ("torch.load: model.safetensors: ...").
//
// Checkpoints (torch.save / torch.load): a tensor, or a tree of tables whose leaves are
// tensors. Each tensor is stored under the dotted path of its keys, as PyTorch names a state
// dict's entries ({fc1 = {weight = w}} -> "fc1.weight"; integer keys as their decimal text).
// __metadata__ records what tide needs to rebuild the tree:
//   "format": "pt"             (what the safetensors package writes for PyTorch)
//   "tide.object": "tensor"    one tensor (stored under the name "tensor")
//   "tide.object": "table"     a table, with
//   "tide.keys": JSON text     {"<name>": [key, ...], ...}: each tensor's path, integer keys
//                              as JSON numbers ({"layers.1.w": ["layers", 1, "w"]})
// A file without "tide.object" (written elsewhere) loads as a flat table name -> tensor,
// which is what a state dict is.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "../tensor.hpp"

namespace tide::io {

// The tensors of a safetensors file under their names, and its __metadata__ (sorted by key).
struct Safetensors {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Largest header accepted on reading (the safetensors package's own limit).
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// Reads a file. `op` starts every error message ("torch.load").
Safetensors load_safetensors(const std::string& path, const char* op = "torch.load");
// Reads a file held in memory; `name` stands for the file in messages.
Safetensors decode_safetensors(const void* data, size_t size, const std::string& name = "<buffer>",
                               const char* op = "torch.load");

// Writes tensors of any layout (a non-contiguous one as its contiguous values). The data
// are laid out largest itemsize first, then by name (each tensor aligned to its itemsize);
// the header is padded with spaces to a multiple of 8 bytes, as the safetensors package
// does. Names must be unique, valid UTF-8 and not "__metadata__".
//
// save_safetensors writes a temporary file beside `path` and renames it over `path` only
// once everything is written, so a failed save leaves an existing file as it was.
void save_safetensors(const std::string& path, const Safetensors& st, const char* op = "torch.save");
std::string encode_safetensors(const Safetensors& st, const char* op = "torch.save");

// One key of a table on the way from a checkpoint's root to a tensor.
using Key = std::variant<std::string, int64_t>;
using KeyPath = std::vector<Key>;

// What torch.save takes and torch.load gives back.
struct Checkpoint {
  bool single = false;  // one tensor (entries holds it, with an empty path)
  std::vector<std::pair<KeyPath, Tensor>> entries;
};

// "fc1.weight" for {"fc1", "weight"}; "layers.1.w" for {"layers", 1, "w"}.
std::string dotted_name(const KeyPath& path);
// The path as Lua indexing spells it, for messages: fc1.weight, layers[1].w, ["fc1.weight"].
std::string key_path_text(const KeyPath& path);

// The file contents for a checkpoint. Errors (two paths with one dotted name, a reserved or
// non-UTF-8 name) start with `op`.
Safetensors checkpoint_to_safetensors(const Checkpoint& ck, const char* op = "torch.save");
// The checkpoint a file holds, checking tide's metadata (when present) against the tensors.
// `where` starts error messages ("torch.load: model.safetensors").
Checkpoint checkpoint_from_safetensors(Safetensors st, const std::string& where);

}  // namespace tide::io
