// PyTorch's checkpoint files: what torch.save writes since PyTorch 1.6 (a zip archive with a
// pickle, data.pkl, and one member per storage).
//
// Reading: a restricted unpickler knows
// tensors (and nn.Parameter), dicts (OrderedDict too), lists, tuples, numbers, strings, bytes,
// booleans and None, and refuses every other class or function by name with a clear error. It
// never imports or runs anything; every size and offset is checked against the file before
// use. The pre-1.6 format (a bare pickle stream) is refused with a message that says so.
//
// Writing (save_pt): the layout PyTorch 1.13 writes (archive/data.pkl with pickle protocol 2,
// archive/data/<key> per storage with its data aligned to 64 bytes, archive/version "3";
// also archive/byteorder "little", which newer PyTorch writes). Tensors are rebuilt by
// torch._utils._rebuild_tensor_v2 over typed storages (location "cpu": a device tensor's
// storage is copied to the host); tensors that share a storage (with one dtype) share its
// record, so PyTorch loads them as views of one storage, with their offsets and strides. A
// parameter is torch._utils._rebuild_parameter around its tensor; a Dict marked `ordered` is a
// collections.OrderedDict; a value reached twice (the same PtValue) is written once and
// referenced (the pickle's memo), so PyTorch loads one object.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../tensor.hpp"

namespace tide::io {

// A value of the pickle. Containers hold shared children: a pickle may refer to one object
// from several places (and even build cycles, which torch_load refuses when converting).
struct PtValue {
  // Global (a "module.name" reference) and Storage (a storage's 1-D tensor) appear only on the
  // loader's stack, never in what load_pt returns.
  enum class Kind { None, Bool, Int, Float, String, Tensor, List, Dict, Global, Storage };
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string string;  // String (Python str or bytes)
  Tensor tensor;
  bool requires_grad = false;  // Tensor: saved with requires_grad (an nn.Parameter, say)
  bool parameter = false;      // Tensor: an nn.Parameter (torch._utils._rebuild_parameter)
  bool ordered = false;        // Dict: a collections.OrderedDict
  std::vector<std::shared_ptr<PtValue>> items;  // List (lists and tuples)
  std::vector<std::pair<std::shared_ptr<PtValue>, std::shared_ptr<PtValue>>> entries;  // Dict, in order
};

// True when the file starts like a zip archive (PyTorch's format rather than safetensors).
bool looks_like_pt(const std::string& path, const char* op);

// Reads a PyTorch checkpoint. Messages start with "<op>: <path>". The result's containers may
// form cycles (a hostile pickle); release_pt breaks them.
std::shared_ptr<PtValue> load_pt(const std::string& path, const char* op);

// The same from a buffer (the fuzzer's input); messages start with "torch.load: <name>".
// check_crc = false lets the fuzzer's mutations reach the pickle past the zip checksums.
std::shared_ptr<PtValue> load_pt_bytes(const void* data, size_t size, const std::string& name,
                                       bool check_crc = true);

// Writes `root` (None, Bool, Int, Float, String, Tensor, List, Dict; acyclic) as torch.save
// does, through a temporary file renamed over `path` when complete. Strings that are not
// UTF-8 are written as Python bytes. Errors start with "<op>: <path>" and name the key path of
// the offending value (a tensor of a dtype PyTorch 1.13 lacks: uint16, uint32, uint64).
void save_pt(const std::string& path, const PtValue& root, const char* op = "torch.save");
// The same into a string; `name` stands for the file in messages.
std::string save_pt_bytes(const PtValue& root, const std::string& name = "<buffer>", const char* op = "torch.save");

// Clears every container reachable from v, so that cycles among them are freed.
void release_pt(const std::shared_ptr<PtValue>& v);

}  // namespace tide::io
