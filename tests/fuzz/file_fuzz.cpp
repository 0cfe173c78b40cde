// File-format fuzzing of the readers (docs/fuzzing.md): np.load's .npy/.npz, torch.load's
// safetensors (with tide's checkpoint metadata) and PyTorch checkpoints (.pt, seeded from
// tests/data/*.pt), and np.loadtxt's text (plain or gzip).
//
// A target takes one input. It must load or be refused with tide::Error; anything else is a
// finding: a crash or sanitizer report, a hang, an allocation far beyond what the input can
// justify (the readers promise to validate sizes before allocating), a loaded tensor whose
// view reaches outside its storage, or data that changes on a save-and-load round trip.
//
// Built with the normal build, this file is a mutation fuzzer: from seed inputs (made here
// with the writers, plus any files given) it makes inputs by stacking random mutations,
// input k of a seed always the same, and runs them in a child process that the parent
// restarts after a finding:
//
//   tide_file_fuzz TARGET [--runs N | --seconds S] [--seed S] [--timeout S] [--crash-dir D]
//                  [FILES OR DIRS...]
//     TARGET: npy, safetensors, text, pt or all (the runs and seconds shared among them;
//     each file goes to the target named by a directory on its path or by its extension)
//     the files given are run first (the regression corpus tests/fuzz/corpus/TARGET/, and
//     tests/data) and join the seeds; a finding's input is written to
//     D/crash-TARGET-<seed>-<k>.
//   Ends with "N passed, M failed": inputs run, inputs that failed.
//
// Built with clang's libFuzzer (tests/fuzz/build_libfuzzer.sh, -DTIDE_LIBFUZZER) the same
// targets are LLVMFuzzerTestOneInput, the target chosen by TIDE_FUZZ_TARGET.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tensor/error.hpp"
#include "tensor/io/npy.hpp"
#include "tensor/io/pt.hpp"
#include "tensor/io/safetensors.hpp"
#include "tensor/io/text.hpp"
#include "tensor/memory_budget.hpp"
#include "tensor/ops/creation.hpp"
#include "tensor/ops/shape.hpp"
#include "tensor/tensor.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TIDE_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TIDE_FUZZ_ASAN 1
#endif
#endif

#ifdef TIDE_FUZZ_ASAN
// An allocation past 1 GiB cannot be justified by any input the fuzzer makes: the sanitizer
// returns null for it (std::bad_alloc, a finding below) instead of reporting and dying.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1:max_allocation_size_mb=1024"; }
#endif
// LeakSanitizer's interface, present only in sanitized builds.
extern "C" int __lsan_do_recoverable_leak_check() __attribute__((weak));

namespace {

using Bytes = std::string;
namespace io = tide::io;

enum class Target { Npy, Safetensors, Text, Pt };
constexpr const char* kTargetNames[] = {"npy", "safetensors", "text", "pt"};

// A finding: says what, then aborts (the parent or libFuzzer keeps the input).
[[noreturn]] void finding(const std::string& kind, const std::string& what) {
  std::fprintf(stderr, "FINDING: %s: %s\n", kind.c_str(), what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Every element a view can reach lies inside its storage.
void check_view(const tide::Tensor& t, const std::string& what) {
  if (!t.defined()) finding("invalid tensor", what + ": undefined");
  int64_t lo = t.offset(), hi = t.offset();
  bool empty = false;
  for (int d = 0; d < t.dim(); ++d) {
    if (t.size(d) < 0) finding("invalid tensor", what + ": negative size " + t.sizes().str());
    if (t.size(d) == 0) empty = true;
  }
  if (empty) return;
  for (int d = 0; d < t.dim(); ++d) {
    __int128 span = __int128(t.size(d) - 1) * t.stride(d);
    if (span > INT64_MAX || span < INT64_MIN) finding("invalid tensor", what + ": the view's span overflows");
    if (span < 0) lo += int64_t(span);
    else hi += int64_t(span);
  }
  __int128 end = (__int128(hi) + 1) * __int128(t.itemsize());
  if (lo < 0 || end > __int128(t.storage()->nbytes()))
    finding("invalid tensor", what + ": a view of shape " + t.sizes().str() + " and strides " + t.strides().str() +
                                  " at offset " + std::to_string(t.offset()) + " reaches outside its storage of " +
                                  std::to_string(t.storage()->nbytes()) + " bytes");
}

// The bytes of t in C order (reads every element).
Bytes values_of(const tide::Tensor& t) {
  tide::Tensor c = t.contiguous();
  return Bytes(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

void check_same(const tide::Tensor& a, const tide::Tensor& b, const std::string& what) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes())
    finding("round trip changed the data", what + ": " + std::string(tide::dtype_name(a.dtype())) + " " +
                                               a.sizes().str() + " came back as " +
                                               std::string(tide::dtype_name(b.dtype())) + " " + b.sizes().str());
  if (values_of(a) != values_of(b)) finding("round trip changed the data", what + ": the values differ");
}

// ---- the targets --------------------------------------------------------------------------

void run_npy(const uint8_t* data, size_t size) {
  io::Loaded loaded;
  try {
    loaded = io::load_bytes(data, size, "<fuzz>");
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
    return;
  }
  if (!loaded.is_npz) {
    check_view(loaded.tensor, "npy");
    Bytes again;
    try {
      again = io::save_npy_bytes(loaded.tensor);
    } catch (const tide::OutOfMemory&) {
      throw;
    } catch (const tide::Error&) {
      return;  // a dtype NumPy cannot hold
    }
    io::Loaded back = io::load_bytes(again.data(), again.size(), "<round trip>");
    check_same(loaded.tensor, back.tensor, "npy save/load");
    return;
  }
  for (auto& [name, t] : loaded.members) check_view(t, "npz member " + name);
  Bytes again;
  try {
    again = io::save_npz_bytes(loaded.members, size % 2 == 1);
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
    return;  // a member name or dtype the writer refuses
  }
  io::Loaded back = io::load_bytes(again.data(), again.size(), "<round trip>");
  if (back.members.size() != loaded.members.size())
    finding("round trip changed the data", "npz: " + std::to_string(loaded.members.size()) + " members came back as " +
                                               std::to_string(back.members.size()));
  for (size_t i = 0; i < back.members.size(); ++i) {
    if (back.members[i].first != loaded.members[i].first)
      finding("round trip changed the data", "npz member name " + loaded.members[i].first + " came back as " +
                                                 back.members[i].first);
    check_same(loaded.members[i].second, back.members[i].second, "npz member " + loaded.members[i].first);
  }
}

void check_same(const io::Safetensors& a, const io::Safetensors& b, const std::string& what) {
  if (a.tensors.size() != b.tensors.size() || a.metadata != b.metadata)
    finding("round trip changed the data", what + ": the tensor count or the metadata differ");
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    if (a.tensors[i].first != b.tensors[i].first)
      finding("round trip changed the data", what + ": name " + a.tensors[i].first + " came back as " + b.tensors[i].first);
    check_same(a.tensors[i].second, b.tensors[i].second, what + " " + a.tensors[i].first);
  }
}

void run_safetensors(const uint8_t* data, size_t size) {
  io::Safetensors st;
  try {
    st = io::decode_safetensors(data, size, "<fuzz>");
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
    return;
  }
  for (auto& [name, t] : st.tensors) check_view(t, "safetensors tensor " + name);
  // The same tensors written and read again. Sorted by name: the reader keeps file order,
  // the writer lays the data out by itemsize, and the header order is the names'.
  auto sorted = st;
  std::sort(sorted.tensors.begin(), sorted.tensors.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  Bytes again;
  try {
    again = io::encode_safetensors(sorted);
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
    again.clear();  // a name the writer refuses
  }
  if (!again.empty()) {
    auto back = io::decode_safetensors(again.data(), again.size(), "<round trip>");
    std::sort(back.tensors.begin(), back.tensors.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    check_same(sorted, back, "safetensors encode/decode");
  }
  // tide's checkpoint metadata (tide.object, tide.keys), and the checkpoint written again.
  io::Checkpoint ck;
  try {
    ck = io::checkpoint_from_safetensors(st, "<fuzz>");
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
    return;
  }
  for (auto& [path, t] : ck.entries) check_view(t, "checkpoint entry " + io::key_path_text(path));
  io::Safetensors st2;
  try {
    st2 = io::checkpoint_to_safetensors(ck);
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
    return;
  }
  Bytes bytes2 = io::encode_safetensors(st2);
  io::Checkpoint ck2 = io::checkpoint_from_safetensors(io::decode_safetensors(bytes2.data(), bytes2.size()), "<round trip>");
  if (ck2.single != ck.single || ck2.entries.size() != ck.entries.size())
    finding("round trip changed the data", "checkpoint: the entries differ");
  std::map<std::string, const tide::Tensor*> by_path;
  for (auto& [path, t] : ck.entries) by_path[io::key_path_text(path)] = &t;
  for (auto& [path, t] : ck2.entries) {
    auto it = by_path.find(io::key_path_text(path));
    if (it == by_path.end()) finding("round trip changed the data", "checkpoint: entry " + io::key_path_text(path) + " is new");
    check_same(*it->second, t, "checkpoint entry " + it->first);
  }
}

// The text target's input: 8 option bytes, then the text (or the file's bytes).
//   [0] delimiter: 0 whitespace, else one of , ; tab space | or the byte itself
//   [1] comments   [2] skiprows   [3] usecols   [4] max_rows   [5] dtype   [6] ndmin
//   [7] % 3: 0 text in memory, 1 gzip-compressed into a file, 2 the bytes as a file as they are
constexpr size_t kTextOptionBytes = 8;

io::LoadtxtOptions text_options(const uint8_t* o) {
  io::LoadtxtOptions opt;
  static const char delims[] = {',', ';', '\t', ' ', '|'};
  if (o[0]) opt.delimiter = o[0] < 128 ? delims[o[0] % 5] : char(o[0]);
  static const std::vector<std::vector<std::string>> comments = {{"#"}, {}, {"#", "//"}, {"%"}, {""}, {"##", "#"}};
  opt.comments = comments[o[1] % comments.size()];
  opt.skiprows = o[2] == 255 ? INT64_MAX : o[2] == 254 ? -1 : o[2] % 4;
  static const int64_t cols[] = {0, 1, -1, 2, -3, 1000, INT64_MIN, INT64_MAX};
  if (o[3]) {
    for (int i = 0; i <= o[3] % 3; ++i) opt.usecols.push_back(cols[(o[3] >> (2 + i)) % 8]);
  }
  opt.max_rows = o[4] == 0 ? -1 : o[4] == 255 ? INT64_MAX : o[4] == 254 ? -5 : o[4] - 1;
  static const tide::DType dtypes[] = {tide::DType::Float64, tide::DType::Float32, tide::DType::Int64,
                                       tide::DType::Int32,   tide::DType::Int8,    tide::DType::UInt8,
                                       tide::DType::Bool,    tide::DType::Float16, tide::DType::BFloat16,
                                       tide::DType::Int16,   tide::DType::UInt16,  tide::DType::UInt32,
                                       tide::DType::UInt64};
  opt.dtype = dtypes[o[5] % 13];
  opt.ndmin = o[6] % 5 == 4 ? -1 : o[6] % 5;  // 3 and -1 are invalid
  return opt;
}

Bytes gzip_bytes(const Bytes& text) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = unsigned(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = unsigned(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string g_scratch_file;  // where the text target writes its files (one per process)

void run_text(const uint8_t* data, size_t size) {
  if (size < kTextOptionBytes) return;
  io::LoadtxtOptions opt = text_options(data);
  Bytes text(reinterpret_cast<const char*>(data) + kTextOptionBytes, size - kTextOptionBytes);
  int mode = data[7] % 3;
  tide::Tensor t;
  try {
    if (mode == 0) {
      t = io::loadtxt_string(text, opt, "<fuzz>");
    } else {
      if (g_scratch_file.empty()) g_scratch_file = "/tmp/tide-file-fuzz-" + std::to_string(getpid()) + ".txt";
      std::ofstream(g_scratch_file, std::ios::binary | std::ios::trunc) << (mode == 1 ? gzip_bytes(text) : text);
      t = io::loadtxt(g_scratch_file, opt);
    }
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
    return;
  }
  check_view(t, "loadtxt");
  if (t.dim() > 2 && t.dim() != opt.ndmin) finding("wrong shape", "loadtxt gave " + t.sizes().str());
  values_of(t);
}

// b (a written by save_pt and read back) holds a's values, structure and flags.
void check_same_pt(const io::PtValue& a, const io::PtValue& b,
                   std::set<std::pair<const io::PtValue*, const io::PtValue*>>& done) {
  if (!done.insert({&a, &b}).second) return;
  const bool same = a.kind == b.kind && a.boolean == b.boolean && a.integer == b.integer &&
                    std::memcmp(&a.number, &b.number, sizeof a.number) == 0 && a.string == b.string &&
                    a.requires_grad == b.requires_grad && a.parameter == b.parameter && a.ordered == b.ordered &&
                    a.items.size() == b.items.size() && a.entries.size() == b.entries.size();
  if (!same) finding("round trip changed the data", "pt: a value of kind " + std::to_string(int(a.kind)) +
                                                        " came back different (kind " + std::to_string(int(b.kind)) + ")");
  if (a.kind == io::PtValue::Kind::Tensor) check_same(a.tensor, b.tensor, "pt tensor");
  for (size_t i = 0; i < a.items.size(); ++i) check_same_pt(*a.items[i], *b.items[i], done);
  for (size_t i = 0; i < a.entries.size(); ++i) {
    check_same_pt(*a.entries[i].first, *b.entries[i].first, done);
    check_same_pt(*a.entries[i].second, *b.entries[i].second, done);
  }
}

// torch.load of a PyTorch checkpoint: every tensor a view inside its storage; what loads
// written again by save_pt and read back unchanged; the structure (cycles included) freed.
void run_pt(const uint8_t* data, size_t size) {
  std::shared_ptr<io::PtValue> root;
  try {
    io::release_pt(io::load_pt_bytes(data, size, "<fuzz>"));  // as torch.load reads it: mutations mostly fail the CRC
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
  }
  try {
    root = io::load_pt_bytes(data, size, "<fuzz>", false);  // the pickle and storages behind the CRC
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
    return;
  }
  std::vector<const io::PtValue*> todo{root.get()};
  std::set<const io::PtValue*> seen{root.get()};
  while (!todo.empty()) {
    const io::PtValue* v = todo.back();
    todo.pop_back();
    if (v->kind == io::PtValue::Kind::Tensor) {
      check_view(v->tensor, "pt tensor");
      values_of(v->tensor);
    }
    auto visit = [&](const std::shared_ptr<io::PtValue>& c) {
      if (seen.insert(c.get()).second) todo.push_back(c.get());
    };
    for (const auto& c : v->items) visit(c);
    for (const auto& [k, c] : v->entries) {
      visit(k);
      visit(c);
    }
  }
  // written by torch.save's writer and read back: the same values (a cycle or a dtype PyTorch
  // lacks is refused by the writer)
  std::string again;
  try {
    again = io::save_pt_bytes(*root);
  } catch (const tide::OutOfMemory&) {
    throw;
  } catch (const tide::Error&) {
  }
  if (!again.empty()) {
    std::shared_ptr<io::PtValue> back = io::load_pt_bytes(again.data(), again.size(), "<round trip>");
    std::set<std::pair<const io::PtValue*, const io::PtValue*>> done;
    check_same_pt(*root, *back, done);
    io::release_pt(back);
  }
  io::release_pt(root);
}

// Runs one input under a memory budget no reader needs more than: 5000 bytes per input byte
// (deflate expands at most ~1000x, text to at most 8 bytes a character) plus 1 MiB.
void run_one(Target target, const uint8_t* data, size_t size) {
  auto budget = std::make_shared<tide::MemoryBudget>(size * 5000 + (1 << 20));
  tide::MemoryBudgetScope scope(budget.get());
  try {
    switch (target) {
      case Target::Npy: run_npy(data, size); break;
      case Target::Safetensors: run_safetensors(data, size); break;
      case Target::Text: run_text(data, size); break;
      case Target::Pt: run_pt(data, size); break;
    }
  } catch (const tide::OutOfMemory& e) {
    finding("runaway allocation", std::string("a ") + std::to_string(size) + "-byte input: " + e.what());
  } catch (const std::bad_alloc&) {
    finding("runaway allocation", "std::bad_alloc on a " + std::to_string(size) + "-byte input");
  } catch (const std::exception& e) {
    finding("unexpected exception", e.what());
  }
}

bool parse_target(const std::string& s, Target& t) {
  for (int i = 0; i < int(std::size(kTargetNames)); ++i)
    if (s == kTargetNames[i]) return t = Target(i), true;
  return false;
}

}  // namespace

#ifdef TIDE_LIBFUZZER

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Target target = [] {
    Target t = Target::Npy;
    const char* name = std::getenv("TIDE_FUZZ_TARGET");
    if (!name || !parse_target(name, t)) {
      std::fprintf(stderr, "set TIDE_FUZZ_TARGET to npy, safetensors, text or pt\n");
      std::exit(2);
    }
    return t;
  }();
  run_one(target, data, size);
  return 0;
}

#else  // the mutation fuzzer

namespace {

// ---- seeds --------------------------------------------------------------------------------

tide::Tensor sample(tide::DType dt, const tide::Dims& shape, int variant) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  tide::Tensor x = tide::ops::arange(tide::Scalar(int64_t(-n / 2)), tide::Scalar(int64_t(n - n / 2)),
                                     tide::Scalar(int64_t(1)), tide::DType::Float64);
  if (variant == 1 && tide::is_floating(dt) && n > 0) x.data<double>()[0] = 0.5;
  return tide::ops::reshape(x, shape).to(dt);
}

std::vector<Bytes> builtin_seeds(Target target) {
  using tide::DType;
  std::vector<Bytes> seeds;
  const std::vector<tide::Dims> shapes = {{}, {0}, {3}, {2, 3}, {2, 0, 3}, {1, 2, 1, 2}};
  const DType dtypes[] = {DType::Bool,    DType::UInt8,   DType::Int8,    DType::Int16,  DType::Int32,
                          DType::Int64,   DType::Float16, DType::Float32, DType::Float64, DType::UInt16,
                          DType::UInt32,  DType::UInt64};
  if (target == Target::Npy) {
    int i = 0;
    for (DType dt : dtypes)
      for (const auto& s : shapes)
        if (i++ % 3 == 0) seeds.push_back(io::save_npy_bytes(sample(dt, s, 1)));
    seeds.push_back(io::save_npy_bytes(tide::ops::t(sample(DType::Float64, {2, 3}, 0))));
    std::vector<io::NamedTensor> members = {{"a", sample(DType::Float32, {2, 2}, 0)},
                                            {"b", sample(DType::Int64, {3}, 0)}};
    seeds.push_back(io::save_npz_bytes(members, false));
    seeds.push_back(io::save_npz_bytes(members, true));
    seeds.push_back(io::save_npz_bytes({{"x", sample(DType::Bool, {}, 0)}}, true));
  } else if (target == Target::Safetensors) {
    io::Safetensors st;
    st.tensors = {{"a", sample(DType::Float32, {2, 3}, 1)}, {"b", sample(DType::Int64, {3}, 0)},
                  {"c", sample(DType::BFloat16, {2}, 0)}};
    st.metadata = {{"format", "pt"}};
    seeds.push_back(io::encode_safetensors(st));
    io::Checkpoint ck;
    ck.entries = {{{std::string("fc1"), std::string("weight")}, sample(DType::Float32, {2, 2}, 1)},
                  {{std::string("layers"), int64_t(1), std::string("w")}, sample(DType::Float16, {3}, 0)},
                  {{std::string("empty")}, sample(DType::Float64, {0, 2}, 0)}};
    seeds.push_back(io::encode_safetensors(io::checkpoint_to_safetensors(ck)));
    io::Checkpoint one;
    one.single = true;
    one.entries = {{{}, sample(DType::Int32, {2, 2}, 0)}};
    seeds.push_back(io::encode_safetensors(io::checkpoint_to_safetensors(one)));
  } else if (target == Target::Pt) {  // with the PyTorch-written files of tests/data
    using K = io::PtValue::Kind;
    auto make = [](K k) {
      auto v = std::make_shared<io::PtValue>();
      v->kind = k;
      return v;
    };
    auto str = [&](const std::string& s) {
      auto v = make(K::String);
      v->string = s;
      return v;
    };
    auto num = [&](int64_t i) {
      auto v = make(K::Int);
      v->integer = i;
      return v;
    };
    auto ten = [&](const tide::Tensor& t, bool param) {
      auto v = make(K::Tensor);
      v->tensor = t;
      v->parameter = v->requires_grad = param;
      return v;
    };
    auto sd = make(K::Dict);
    sd->ordered = true;
    tide::Tensor w = sample(DType::Float32, {2, 3}, 1);
    sd->entries = {{str("0.weight"), ten(w, false)}, {str("0.weight.T"), ten(tide::ops::t(w), false)},
                   {str("0.bias"), ten(sample(DType::Float64, {3}, 0), true)}};
    seeds.push_back(io::save_pt_bytes(*sd));
    auto root = make(K::Dict);
    auto list = make(K::List);
    auto half = make(K::Float);
    half->number = 0.5;
    list->items = {num(1), num(300), num(70000), num(int64_t(1) << 40), num(-5), half, make(K::None),
                   str("\xff\x01 bytes"), ten(sample(DType::Bool, {2}, 0), false)};
    root->entries = {{str("state"), sd}, {str("list"), list}, {num(7), list},
                     {str("dtypes"), ten(sample(DType::BFloat16, {2, 0, 3}, 0), false)},
                     {str("int8"), ten(sample(DType::Int8, {}, 0), false)}};
    seeds.push_back(io::save_pt_bytes(*root));
  } else {
    const char* texts[] = {"1 2 3\n4 5 6\n", "1,2,3\n4,5,6\n", "# c\n1.5 nan inf\n-inf 1e308 -0\n", "1\n2\n3\n",
                           "  \n\n7\n", "1;2\n3;4\n", "0x10 1e-320\n", "1\t2\n3\t4 # x\n"};
    const uint8_t opts[][8] = {{0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 1, 2, 1},
                               {0, 1, 0, 0, 3, 2, 1, 0},  {0, 0, 0, 9, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 3, 0, 0},
                               {0, 0, 0, 0, 0, 0, 0, 1},  {3, 2, 0, 0, 0, 0, 2, 0}};
    for (size_t i = 0; i < std::size(texts); ++i)
      seeds.push_back(Bytes(reinterpret_cast<const char*>(opts[i]), 8) + texts[i]);
  }
  return seeds;
}

// ---- mutations ----------------------------------------------------------------------------

struct Mutator {
  std::mt19937_64 rng;
  Target target;
  const std::vector<Bytes>* seeds;

  uint64_t below(uint64_t n) { return n ? rng() % n : 0; }

  const std::vector<std::string>& dictionary() const {
    static const std::vector<std::string> npy = {
        "'descr'", "'<f8'", "'<f4'", "'<f2'", "'|b1'", "'|u1'", "'|i1'", "'>i2'", "'<i4'", "'<i8'", "'>u4'",
        "'<u2'", "'<c16'", "'|O'", "'<M8'", "'|V2'", "'fortran_order'", "True", "False", "'shape'", "(", ")",
        ",", "{", "}", ":", "()", "(0,)", "(-1,)", "(1, 1, 1, 1, 1, 1, 1, 1, 1)", "PK\x03\x04", "PK\x01\x02",
        "PK\x05\x06", ".npy", "\x93NUMPY", "\x01\x00", "\x02\x00", "\x03\x00", "\n", " "};
    static const std::vector<std::string> st = {
        "\"dtype\"", "\"F32\"", "\"F64\"", "\"F16\"", "\"BF16\"", "\"I64\"", "\"I8\"", "\"U8\"", "\"BOOL\"",
        "\"U64\"", "\"F8_E4M3\"", "\"shape\"", "\"data_offsets\"", "\"__metadata__\"", "\"tide.object\"",
        "\"tide.keys\"", "\"tensor\"", "\"table\"", "[", "]", "{", "}", ":", ",", "\\u0000", "\\ud800",
        "\\\"", "\"a.b\"", "[\"a\", 1]", "[]", "null", "true", "-0", "1e400", "  "};
    static const std::vector<std::string> text = {",", " ", "\t", "\n", "\r\n", "#", "nan", "inf", "-inf",
                                                  "-", "+", ".", "e", "0x", "1e308", "1e-400", "\x1f\x8b",
                                                  "\"", "1_000", "  ", "\n\n", "-0", "true"};
    static const std::vector<std::string> pt = {
        "\x80\x02", "}", "]", ")", "(", "q\x00", "h\x00", "r\x00\x00\x00\x00", "j\x01\x00\x00\x00", "u", "e",
        "s", "a", "t", "\x85", "\x86", "\x87", "R", "Q", "b", ".", "N", "\x88", "K\xff", "J\xff\xff\xff\x7f",
        "\x8a\x08", "X\x05\x00\x00\x00", "ctorch._utils\n_rebuild_tensor_v2\n", "ccollections\nOrderedDict\n",
        "ctorch\nFloatStorage\n", "ctorch\nBoolStorage\n", "cos\nsystem\n", "storage", "cpu", "data.pkl",
        "PK\x01\x02", "PK\x05\x06", "PK\x06\x06", "PK\x06\x07", "\xff\xff\xff\xff", "\x01\x00\x10\x00"};
    return target == Target::Npy ? npy : target == Target::Safetensors ? st : target == Target::Pt ? pt : text;
  }

  std::string interesting_number() {
    static const char* nums[] = {"0", "1", "-1", "2", "255", "256", "65535", "65536", "2147483647", "2147483648",
                                 "4294967296", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                 "18446744073709551616", "99999999999999999999999", "1e400", "-0", "007", "1.5"};
    return nums[below(std::size(nums))];
  }

  void mutate(Bytes& b) {
    switch (below(12)) {
      case 0:  // flip a bit
        if (!b.empty()) b[below(b.size())] ^= char(1 << below(8));
        break;
      case 1: {  // an interesting byte
        static const char bytes[] = {0, '\xff', 0x7f, '\x80', '0', '9', ' ', ',', '\n', '{', '}', '[', ']', '(', ')',
                                     ':', '"', '\'', '-', '.'};
        if (!b.empty()) b[below(b.size())] = bytes[below(sizeof bytes)];
        break;
      }
      case 2:  // delete a range
        if (!b.empty()) {
          size_t at = below(b.size());
          b.erase(at, 1 + below(std::min<size_t>(16, b.size() - at)));
        }
        break;
      case 3:  // duplicate a range
        if (!b.empty() && b.size() < 1 << 16) {
          size_t at = below(b.size());
          size_t n = 1 + below(std::min<size_t>(64, b.size() - at));
          b.insert(below(b.size() + 1), b.substr(at, n));
        }
        break;
      case 4:  // truncate
        b.resize(below(b.size() + 1));
        break;
      case 5: {  // a little-endian integer of 1, 2, 4 or 8 bytes
        static const uint64_t vals[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
                                        0xffffffff, 0x100000000, 0x7fffffffffffffff, 0x8000000000000000,
                                        0xffffffffffffffff};
        size_t width = size_t(1) << below(4);
        if (b.size() >= width) {
          uint64_t v = below(4) == 0 ? b.size() + below(17) - 8 : vals[below(std::size(vals))];
          std::memcpy(&b[below(b.size() - width + 1)], &v, width);
        }
        break;
      }
      case 6: {  // replace a run of digits with an interesting number
        if (b.empty()) break;
        size_t at = below(b.size());
        size_t s = b.find_first_of("0123456789", at);
        if (s == Bytes::npos) break;
        size_t e = b.find_first_not_of("0123456789", s);
        b.replace(s, (e == Bytes::npos ? b.size() : e) - s, interesting_number());
        break;
      }
      case 7:
      case 8: {  // insert or overwrite with a dictionary token
        const auto& d = dictionary();
        const std::string& tok = d[below(d.size())];
        size_t at = below(b.size() + 1);
        if (below(2) || at + tok.size() > b.size()) b.insert(at, tok);
        else b.replace(at, tok.size(), tok);
        break;
      }
      case 9: {  // splice with another seed
        const Bytes& o = (*seeds)[below(seeds->size())];
        if (o.empty()) break;
        size_t cut = below(b.size() + 1), from = below(o.size());
        b = b.substr(0, cut) + o.substr(from);
        break;
      }
      case 10:  // a byte incremented or decremented
        if (!b.empty()) b[below(b.size())] += below(2) ? 1 : -1;
        break;
      default:  // an option byte (the text target) or the first bytes
        if (!b.empty()) b[below(std::min<size_t>(8, b.size()))] = char(rng());
        break;
    }
  }

  // Input k of the seed: a seed with 1 to 8 stacked mutations.
  Bytes input(uint64_t seed, uint64_t k) {
    rng.seed(seed * 0x9E3779B97F4A7C15ull ^ (k + 1) * 0xBF58476D1CE4E5B9ull);
    Bytes b = (*seeds)[below(seeds->size())];
    int n = 1 + int(below(8));
    for (int i = 0; i < n; ++i) mutate(b);
    return b;
  }
};

// ---- the parent and its children ----------------------------------------------------------

struct Shared {  // a page shared with the child: the input it is running
  std::atomic<int64_t> current{-1};
  std::atomic<int64_t> started_ns{0};
  std::atomic<int64_t> done{0};
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Options {
  Target target = Target::Npy;
  bool all = false;
  int64_t runs = 20000;
  double seconds = 0;
  uint64_t seed = 1;
  double timeout = 10;
  std::string crash_dir = ".";
  std::vector<std::string> paths;
};

// The files under the given paths (directories recursively, in sorted order).
std::vector<std::pair<std::string, Bytes>> read_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<fs::path> list;
  for (const auto& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) list.push_back(e.path());
    } else {
      list.push_back(p);
    }
  }
  std::sort(list.begin(), list.end());
  std::vector<std::pair<std::string, Bytes>> files;
  for (const auto& f : list) {
    std::ifstream in(f, std::ios::binary);
    files.emplace_back(f.string(), Bytes(std::istreambuf_iterator<char>(in), {}));
  }
  return files;
}

// Which target a file is for, with `all`: by a directory named after the target
// (tests/fuzz/corpus/npy/...) or by the extension (.npy .npz .safetensors); false if neither.
bool target_of_file(const std::string& path, Target& t) {
  std::filesystem::path p(path);
  std::string ext = p.extension().string();
  if (ext == ".npy" || ext == ".npz") return t = Target::Npy, true;
  if (ext == ".safetensors") return t = Target::Safetensors, true;
  if (ext == ".pt" || ext == ".pth") return t = Target::Pt, true;
  for (const auto& part : p.parent_path())
    if (parse_target(part.string(), t)) return true;
  return false;
}

// Runs inputs [first, end) of the mutation stream in the child; -1..-n are the given files.
[[noreturn]] void child(Shared* sh, Target target, Mutator& m, const std::vector<std::pair<std::string, Bytes>>& files,
                        uint64_t seed, int64_t first, int64_t end) {
  struct rlimit core{0, 0};
  setrlimit(RLIMIT_CORE, &core);
#ifndef TIDE_FUZZ_ASAN
  struct rlimit as{8ull << 30, 8ull << 30};  // a runaway allocation fails instead of swapping
  setrlimit(RLIMIT_AS, &as);
#endif
  for (int64_t k = first; k < end; ++k) {
    Bytes in = k < 0 ? files[size_t(-k - 1)].second : m.input(seed, uint64_t(k));
    sh->started_ns = now_ns();
    sh->current = k;
    run_one(target, reinterpret_cast<const uint8_t*>(in.data()), in.size());
    sh->done.fetch_add(1);
  }
  if (!g_scratch_file.empty()) unlink(g_scratch_file.c_str());
  // _exit skips LeakSanitizer's check at exit: make it here (a leak is blamed on the last input).
  if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check()) {
    std::fprintf(stderr, "FINDING: leak: in inputs %lld..%lld\n", (long long)first, (long long)end - 1);
    std::fflush(stderr);
    _exit(23);
  }
  sh->current = end;
  std::fflush(stderr);
  _exit(0);
}

std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What makes two findings the same: the FINDING line, or the first frame of tide's sources in
// a sanitizer report, or the signal.
std::string signature_of(const std::string& log, int status) {
  size_t f = log.find("FINDING: ");
  if (f != std::string::npos) {
    std::string line = log.substr(f, log.find('\n', f) - f);
    return line.substr(0, line.find(':', 9));  // the kind
  }
  size_t r = log.find("runtime error:");
  if (r != std::string::npos) {
    size_t s = log.rfind('\n', r);
    return log.substr(s == std::string::npos ? 0 : s + 1, r - (s == std::string::npos ? 0 : s + 1));
  }
  for (size_t p = log.find(" in tide::"); p != std::string::npos; p = log.find(" in tide::", p + 1)) {
    size_t e = log.find('\n', p);
    std::string frame = log.substr(p + 4, e - p - 4);
    if (frame.find("tensor/") != std::string::npos) return frame.substr(frame.rfind(' ') + 1);
  }
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

int usage() {
  std::fprintf(stderr,
               "usage: tide_file_fuzz npy|safetensors|text|all [--runs N | --seconds S] [--seed S] [--timeout S]\n"
               "                      [--crash-dir DIR] [FILES OR DIRS...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  Options o;
  std::string t = argv[1];
  if (t == "all") o.all = true;
  else if (!parse_target(t, o.target)) return usage();
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--runs") o.runs = std::atoll(value().c_str());
    else if (a == "--seconds") o.seconds = std::atof(value().c_str());
    else if (a == "--seed") o.seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--timeout") o.timeout = std::atof(value().c_str());
    else if (a == "--crash-dir") o.crash_dir = value();
    else if (a.rfind("--", 0) == 0) return usage();
    else o.paths.push_back(a);
  }
  auto* sh = static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (sh) Shared();
  const std::string log_path = "/tmp/tide-file-fuzz-" + std::to_string(getpid()) + ".log";

  int64_t passed = 0, failed = 0;
  std::set<std::string> seen;
  auto start = now_ns();
  std::vector<Target> targets = o.all ? std::vector<Target>{Target::Npy, Target::Safetensors, Target::Text, Target::Pt}
                                      : std::vector<Target>{o.target};
  for (size_t ti = 0; ti < targets.size(); ++ti) {
    Target target = targets[ti];
    const char* tname = kTargetNames[int(target)];
    std::vector<std::pair<std::string, Bytes>> files;
    for (auto& f : read_files(o.paths)) {
      Target ft;
      if (!o.all || (target_of_file(f.first, ft) && ft == target)) files.push_back(std::move(f));
    }
    std::vector<Bytes> seeds = builtin_seeds(target);
    for (const auto& f : files) seeds.push_back(f.second);
    Mutator m{std::mt19937_64(), target, &seeds};
    int64_t runs = o.all ? o.runs / int64_t(targets.size()) : o.runs;
    double seconds = o.all ? o.seconds / double(targets.size()) : o.seconds;
    int64_t t_start = now_ns();
    int64_t first = -int64_t(files.size());
    auto more = [&] {
      if (seconds > 0) return double(now_ns() - t_start) / 1e9 < seconds;
      return first < runs;
    };
    while (more()) {
      int64_t end = seconds > 0 ? first + 2000 : runs;
      if (first < 0) end = 0;  // the files first, alone
      sh->current = -1 - int64_t(files.size()) - 1;
      sh->done = 0;
      std::fflush(stdout);
      std::fflush(stderr);
      pid_t pid = fork();
      if (pid == 0) {
        int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 2);
        close(fd);
        child(sh, target, m, files, o.seed, first, end);
      }
      int status = 0;
      bool hang = false;
      while (waitpid(pid, &status, WNOHANG) == 0) {
        usleep(20000);
        int64_t cur = sh->current.load();
        if (cur >= first && cur < end && double(now_ns() - sh->started_ns.load()) / 1e9 > o.timeout) {
          kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
          hang = true;
          break;
        }
      }
      passed += sh->done.load();
      if (!hang && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        first = end;
        continue;
      }
      int64_t k = sh->current.load();
      ++failed;
      if (k < first || k >= end) {  // died outside any input
        std::printf("FAILURE (%s) the child died before its first input:\n%s\n", tname, read_file_text(log_path).c_str());
        first = end;
        continue;
      }
      std::string log = read_file_text(log_path);
      std::string sig = hang ? "hang" : signature_of(log, status);
      Bytes in = k < 0 ? files[size_t(-k - 1)].second : m.input(o.seed, uint64_t(k));
      std::string name = k < 0 ? files[size_t(-k - 1)].first
                               : o.crash_dir + "/crash-" + tname + "-" + std::to_string(o.seed) + "-" + std::to_string(k);
      if (k >= 0) {
        std::filesystem::create_directories(o.crash_dir);
        std::ofstream(name, std::ios::binary) << in;
      }
      if (seen.insert(std::string(tname) + " " + sig).second) {
        std::printf("FAILURE (%s) %s on input %lld (%zu bytes): %s\n", tname, hang ? "hang" : sig.c_str(),
                    (long long)k, in.size(), name.c_str());
        size_t from = log.size() > 4000 ? log.size() - 4000 : 0;
        std::printf("%s\n", log.substr(from).c_str());
      }
      first = k + 1;
    }
    std::printf("%s: %lld inputs so far, %lld failed (%.0f s)\n", tname, (long long)passed, (long long)failed,
                double(now_ns() - start) / 1e9);
  }
  unlink(log_path.c_str());
  std::printf("%lld passed, %lld failed\n", (long long)passed, (long long)failed);
  return failed ? 1 : 0;
}

#endif  // TIDE_LIBFUZZER
