// PyTorch's checkpoints (see pt.hpp). Reading: the zip archive through zip.hpp, then a pickle
// machine restricted to the opcodes and the few callables that torch.save's output uses.
// Writing: a pickler of PtValue trees (protocol 2, as torch.save), then the archive through
// ZipWriter.
#include "pt.hpp"

#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "file_io.hpp"
#include "safetensors.hpp"
#include "zip.hpp"

namespace tide::io {
namespace {

using Value = std::shared_ptr<PtValue>;
using Kind = PtValue::Kind;

Value make(Kind k) {
  auto v = std::make_shared<PtValue>();
  v->kind = k;
  return v;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::None: return "None";
    case Kind::Bool: return "a boolean";
    case Kind::Int: return "an integer";
    case Kind::Float: return "a float";
    case Kind::String: return "a string";
    case Kind::Tensor: return "a tensor";
    case Kind::List: return "a list or tuple";
    case Kind::Dict: return "a dict";
    case Kind::Global: return "a class or function";
    case Kind::Storage: return "a storage";
  }
  return "a value";
}

// Every value reachable from `from` (itself included), iteratively.
std::unordered_set<PtValue*> reachable(const std::vector<Value>& from) {
  std::unordered_set<PtValue*> seen;
  std::vector<PtValue*> todo;
  for (const Value& v : from)
    if (v && seen.insert(v.get()).second) todo.push_back(v.get());
  while (!todo.empty()) {
    PtValue* v = todo.back();
    todo.pop_back();
    auto visit = [&](const Value& c) {
      if (c && seen.insert(c.get()).second) todo.push_back(c.get());
    };
    for (const auto& c : v->items) visit(c);
    for (const auto& [k, c] : v->entries) {
      visit(k);
      visit(c);
    }
  }
  return seen;
}

// Empties every container among `nodes`: a pickle may build cycles (a list that holds itself),
// which shared pointers alone never free.
void clear_all(const std::unordered_set<PtValue*>& nodes) {
  std::vector<Value> hold;  // children stay alive until every container is emptied
  for (PtValue* v : nodes) {
    for (auto& c : v->items) hold.push_back(std::move(c));
    for (auto& [k, c] : v->entries) {
      hold.push_back(std::move(k));
      hold.push_back(std::move(c));
    }
    v->items.clear();
    v->entries.clear();
  }
}

// torch.<Name>Storage <-> dtype.
constexpr std::pair<const char*, DType> kStorageTypes[] = {
      {"torch.FloatStorage", DType::Float32}, {"torch.DoubleStorage", DType::Float64},
      {"torch.HalfStorage", DType::Float16},  {"torch.BFloat16Storage", DType::BFloat16},
      {"torch.LongStorage", DType::Int64},    {"torch.IntStorage", DType::Int32},
      {"torch.ShortStorage", DType::Int16},   {"torch.CharStorage", DType::Int8},
      {"torch.ByteStorage", DType::UInt8},    {"torch.BoolStorage", DType::Bool},
      {"torch.ComplexFloatStorage", DType::Complex64}, {"torch.ComplexDoubleStorage", DType::Complex128}};

bool storage_dtype(const std::string& global, DType& dt) {
  for (const auto& [name, t] : kStorageTypes)
    if (global == name) {
      dt = t;
      return true;
    }
  return false;
}

// The archive: data.pkl's bytes and, on demand, each storage member as a 1-D tensor.
class Archive {
 public:
  Archive(ByteSource& in, std::string where, bool check_crc)
      : in_(in), where_(std::move(where)), check_crc_(check_crc) {
    for (ZipMember& m : read_central_directory(in_, where_, "PyTorch checkpoint (zip)")) {
      const std::string& n = m.name;
      const size_t slash = n.find('/');
      if (slash != std::string::npos && n.compare(slash, std::string::npos, "/data.pkl") == 0) {
        if (!prefix_.empty() || have_pickle_)
          fail_at(where_, "not a PyTorch checkpoint (more than one data.pkl in the archive)");
        prefix_ = n.substr(0, slash + 1);
        pickle_ = m;
        have_pickle_ = true;
      }
      members_.emplace(n, std::move(m));
    }
    if (!have_pickle_) fail_at(where_, "not a PyTorch checkpoint (the zip archive has no <name>/data.pkl)");
    auto bo = members_.find(prefix_ + "byteorder");
    if (bo != members_.end()) {
      check_member(bo->second, where_);
      if (bo->second.uncomp > 16) fail_at(where_, "corrupt PyTorch checkpoint (byteorder member of ", bo->second.uncomp, " bytes)");
      std::string order(size_t(bo->second.uncomp), '\0');
      read_member_bytes(in_, bo->second, order.data(), where_, check_crc_);
      if (order != "little")
        fail_at(where_, "the checkpoint's tensors are stored ", quote_user(order), "-endian; tide reads little-endian ones");
    }
  }

  std::string pickle() {
    check_member(pickle_, where_);
    std::string data(size_t(pickle_.uncomp), '\0');
    read_member_bytes(in_, pickle_, data.data(), where_, check_crc_);
    return data;
  }

  // The storage `key` of numel elements of dt (the same tensor for every reference to it).
  Tensor storage(const std::string& key, DType dt, int64_t numel) {
    auto cached = storages_.find(key);
    if (cached != storages_.end()) {
      if (cached->second.dtype() != dt || cached->second.numel() != numel)
        fail_at(where_, "corrupt PyTorch checkpoint (storage '", quote_user(key), "' is referenced with two types or sizes)");
      return cached->second;
    }
    auto it = members_.find(prefix_ + "data/" + key);
    if (it == members_.end()) fail_at(where_, "corrupt PyTorch checkpoint (no member for storage '", quote_user(key), "')");
    if (numel < 0) fail_at(where_, "corrupt PyTorch checkpoint (storage '", quote_user(key), "' of ", numel, " elements)");
    const int64_t nbytes = checked_mul("torch.load", numel, int64_t(dtype_size(dt)), "storage '", quote_user(key), "'");
    if (uint64_t(nbytes) != it->second.uncomp)
      fail_at(where_, "corrupt PyTorch checkpoint (storage '", quote_user(key), "' holds ", it->second.uncomp,
              " bytes, but ", numel, " elements of ", dtype_name(dt), " need ", nbytes, ")");
    check_member(it->second, where_);
    Tensor t = Tensor::empty(Dims{numel}, dt, Device{}, "torch.load");
    if (nbytes) read_member_bytes(in_, it->second, t.data_ptr(), where_, check_crc_);
    if (dt == DType::Bool) {  // any nonzero byte is true, as the .npy reader does
      auto* p = static_cast<unsigned char*>(t.data_ptr());
      for (int64_t k = 0; k < numel; ++k) p[k] = p[k] != 0;
    }
    storages_.emplace(key, t);
    return t;
  }

 private:
  ByteSource& in_;
  std::string where_;
  bool check_crc_;
  std::string prefix_;
  ZipMember pickle_{};
  bool have_pickle_ = false;
  std::unordered_map<std::string, ZipMember> members_;
  std::unordered_map<std::string, Tensor> storages_;
};

// The pickle machine. Each opcode consumes at least one byte, so the stack, the memo and the
// objects are bounded by the pickle's size.
class Unpickler {
 public:
  Unpickler(std::string data, Archive& archive, std::string where)
      : data_(std::move(data)), archive_(archive), where_(std::move(where)) {}

  // Breaks the cycles among what the pickle built, except those of `result` (nullptr: all).
  void release_garbage(const Value& result) {
    std::vector<Value> all(stack_);
    for (const auto& [k, v] : memo_) all.push_back(v);
    std::unordered_set<PtValue*> garbage = reachable(all);
    if (result)
      for (PtValue* keep : reachable({result})) garbage.erase(keep);
    clear_all(garbage);
  }

  Value run() {
    for (;;) {
      if (pos_ >= data_.size()) fail("the pickle ends without STOP");
      const size_t at = pos_;
      const unsigned char op = byte();
      switch (op) {
        case 0x80: {  // PROTO
          const unsigned v = byte();
          if (v > 5) fail("pickle protocol ", v, " is not supported (at most 5)");
          break;
        }
        case 0x95: take(8); break;  // FRAME: a length hint
        case '}': push(make(Kind::Dict)); break;
        case ']': case ')': push(make(Kind::List)); break;
        case '(': marks_.push_back(stack_.size()); break;
        case 'N': push(make(Kind::None)); break;
        case 0x88: case 0x89: {
          Value v = make(Kind::Bool);
          v->boolean = op == 0x88;
          push(v);
          break;
        }
        case 'J': push_int(int32_t(le(4))); break;
        case 'K': push_int(int64_t(le(1))); break;
        case 'M': push_int(int64_t(le(2))); break;
        case 0x8a: push_int(long_int(byte())); break;
        case 0x8b: push_int(long_int(le(4))); break;
        case 'G': {
          uint64_t bits = 0;
          for (int k = 0; k < 8; ++k) bits = (bits << 8) | byte();  // big-endian
          Value v = make(Kind::Float);
          std::memcpy(&v->number, &bits, 8);
          push(v);
          break;
        }
        case 'X': case 'B': push_string(le(4)); break;
        case 0x8c: case 'C': case 'U': push_string(byte()); break;
        case 0x8d: case 0x8e: push_string(le(8)); break;
        case 'T': {
          const int64_t n = int32_t(le(4));
          if (n < 0) fail("a string of negative length");
          push_string(uint64_t(n));
          break;
        }
        case 'c': {
          std::string module = line(), name = line();
          push_global(module + "." + name);
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          Value name = pop(), module = pop();
          if (name->kind != Kind::String || module->kind != Kind::String) fail("STACK_GLOBAL expects two strings");
          push_global(module->string + "." + name->string);
          break;
        }
        case 'q': memo_[le(1)] = top(); break;
        case 'r': memo_[le(4)] = top(); break;
        case 0x94: memo_[memo_.size()] = top(); break;
        case 'h': case 'j': {
          const uint64_t k = op == 'h' ? le(1) : le(4);
          auto it = memo_.find(k);
          if (it == memo_.end()) fail("memo entry ", k, " is read before it is written");
          push(it->second);
          break;
        }
        case '0': pop(); break;
        case '1': pop_mark(); break;
        case '2': push(top()); break;
        case 'a': {
          Value v = pop();
          as(top(), Kind::List, "APPEND")->items.push_back(v);
          break;
        }
        case 'e': {
          std::vector<Value> vs = pop_mark();
          auto& items = as(top(), Kind::List, "APPENDS")->items;
          items.insert(items.end(), vs.begin(), vs.end());
          break;
        }
        case 's': {
          Value v = pop(), k = pop();
          set_item(as(top(), Kind::Dict, "SETITEM"), k, v);
          break;
        }
        case 'u': {
          std::vector<Value> vs = pop_mark();
          if (vs.size() % 2) fail("SETITEMS with an odd number of values");
          Value d = as(top(), Kind::Dict, "SETITEMS");
          for (size_t k = 0; k < vs.size(); k += 2) set_item(d, vs[k], vs[k + 1]);
          break;
        }
        case 't': {
          Value t = make(Kind::List);
          t->items = pop_mark();
          push(t);
          break;
        }
        case 0x85: case 0x86: case 0x87: {
          const size_t n = size_t(op - 0x84);
          if (stack_.size() < n + floor()) fail("TUPLE", n, " on a stack of ", stack_.size() - floor());
          Value t = make(Kind::List);
          t->items.assign(stack_.end() - long(n), stack_.end());
          stack_.resize(stack_.size() - n);
          push(t);
          break;
        }
        case 'Q': push(persistent_load(pop())); break;
        case 'R': case 0x81: {  // REDUCE, NEWOBJ: callable(*args)
          Value args = pop(), fn = pop();
          if (fn->kind != Kind::Global) fail("a call of ", kind_name(fn->kind));
          push(call(fn->string, as(args, Kind::List, "REDUCE")->items));
          break;
        }
        case 'b': {  // BUILD: an object's state; a dict's attributes (state_dict's _metadata) are dropped
          Value state = pop();
          Value obj = top();
          const bool empty_state = state->kind == Kind::None || (state->kind == Kind::Dict && state->entries.empty());
          if (!(obj->kind == Kind::Dict || (obj->kind == Kind::Tensor && empty_state)))
            fail("setting the state of ", kind_name(obj->kind));
          break;
        }
        case '.': {
          Value v = pop();
          if (v->kind == Kind::Global || v->kind == Kind::Storage)
            fail("the checkpoint holds ", kind_name(v->kind), ", not data");
          return v;
        }
        default:
          fail("unsupported pickle opcode 0x", hex(op), " at byte ", at,
               " (tide reads the pickles that torch.save writes)");
      }
    }
  }

 private:
  template <typename... A>
  [[noreturn]] void fail(const A&... args) {
    fail_at(where_, "cannot read the pickle: ", args...);
  }

  static std::string hex(unsigned v) {
    const char* d = "0123456789abcdef";
    return {d[(v >> 4) & 15], d[v & 15]};
  }

  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(Value v) { stack_.push_back(std::move(v)); }
  Value pop() {
    if (stack_.size() <= floor()) fail("a value is taken from an empty stack");
    Value v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  const Value& top() {
    if (stack_.size() <= floor()) fail("a value is read from an empty stack");
    return stack_.back();
  }
  std::vector<Value> pop_mark() {
    if (marks_.empty()) fail("no MARK to pop to");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Value> vs(stack_.begin() + long(m), stack_.end());
    stack_.resize(m);
    return vs;
  }

  const char* take(uint64_t n) {
    if (n > data_.size() - pos_) fail("the pickle ends inside a value (", n, " bytes wanted at byte ", pos_, ")");
    const char* p = data_.data() + pos_;
    pos_ += size_t(n);
    return p;
  }
  unsigned byte() { return static_cast<unsigned char>(*take(1)); }
  uint64_t le(int n) {
    const auto* p = reinterpret_cast<const unsigned char*>(take(uint64_t(n)));
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = (v << 8) | p[k];
    return v;
  }
  // A two's complement little-endian integer of n bytes (LONG1, LONG4), at most 8 of them.
  int64_t long_int(uint64_t n) {
    if (n > 8) fail("an integer of ", n, " bytes does not fit int64");
    if (n == 0) return 0;
    uint64_t v = le(int(n));
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign-extend
    return int64_t(v);
  }
  std::string line() {
    const size_t end = data_.find('\n', pos_);
    if (end == std::string::npos) fail("GLOBAL without a newline");
    std::string s = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  void push_int(int64_t i) {
    Value v = make(Kind::Int);
    v->integer = i;
    push(v);
  }
  void push_string(uint64_t n) {
    Value v = make(Kind::String);
    const char* p = take(n);
    v->string.assign(p, size_t(n));
    push(v);
  }
  void push_global(std::string name) {
    Value v = make(Kind::Global);
    v->string = std::move(name);
    push(v);
  }

  Value as(const Value& v, Kind k, const char* op) {
    if (v->kind != k) fail(op, " on ", kind_name(v->kind), ", expected ", kind_name(k));
    return v;
  }
  int64_t integer(const Value& v, const char* what) {
    if (v->kind != Kind::Int) fail(what, " is ", kind_name(v->kind), ", expected an integer");
    return v->integer;
  }
  Dims dims(const Value& v, const char* what) {
    if (v->kind != Kind::List) fail(what, " is ", kind_name(v->kind), ", expected a tuple");
    if (v->items.size() > size_t(kMaxDims)) fail("a tensor of ", v->items.size(), " dims (tide takes at most ", kMaxDims, ")");
    Dims d;
    for (const Value& x : v->items) d.push_back(integer(x, what));
    return d;
  }

  void set_item(const Value& dict, const Value& k, const Value& v) {
    if (k->kind != Kind::String && k->kind != Kind::Int && k->kind != Kind::Float && k->kind != Kind::Bool)
      fail("a dict key that is ", kind_name(k->kind), " (tide takes string and number keys)");
    dict->entries.emplace_back(k, v);
  }

  // ('storage', torch.<Type>Storage, key, location, numel) -> the storage's 1-D tensor.
  Value persistent_load(const Value& pid) {
    if (pid->kind != Kind::List || pid->items.size() != 5 || pid->items[0]->kind != Kind::String ||
        pid->items[0]->string != "storage")
      fail("a persistent id that is not ('storage', type, key, location, numel)");
    const Value& type = pid->items[1];
    DType dt;
    if (type->kind != Kind::Global || !storage_dtype(type->string, dt))
      fail("storage type ", type->kind == Kind::Global ? quote_user(type->string) : kind_name(type->kind),
           " is not supported (tide reads bool, integer and floating-point storages)");
    if (pid->items[2]->kind != Kind::String) fail("a storage key that is ", kind_name(pid->items[2]->kind));
    Value s = make(Kind::Storage);
    s->tensor = archive_.storage(pid->items[2]->string, dt, integer(pid->items[4], "a storage's size"));
    return s;
  }

  // The callables torch.save's pickles use; anything else is refused by name.
  Value call(const std::string& fn, const std::vector<Value>& args) {
    if (fn == "collections.OrderedDict") {
      if (!args.empty()) fail("OrderedDict with arguments");
      Value d = make(Kind::Dict);
      d->ordered = true;
      return d;
    }
    if (fn == "torch._utils._rebuild_tensor_v2" || fn == "torch._utils._rebuild_tensor") {
      const bool v2 = fn.back() == '2';
      if (args.size() < (v2 ? 6u : 4u) || args.size() > (v2 ? 7u : 4u)) fail(fn, " with ", args.size(), " arguments");
      if (args[0]->kind != Kind::Storage) fail(fn, " of ", kind_name(args[0]->kind), ", expected a storage");
      Value t = make(Kind::Tensor);
      t->tensor = view(args[0]->tensor, integer(args[1], "a storage offset"), dims(args[2], "a size"),
                       dims(args[3], "a stride"));
      if (v2) {
        if (args[4]->kind != Kind::Bool) fail("requires_grad is ", kind_name(args[4]->kind));
        t->requires_grad = args[4]->boolean;
      }
      return t;
    }
    if (fn == "_codecs.encode") {  // how protocol 2 pickles bytes: encode(text, "latin1")
      if (args.size() != 2 || args[0]->kind != Kind::String || args[1]->kind != Kind::String ||
          (args[1]->string != "latin1" && args[1]->string != "latin-1"))
        fail("_codecs.encode other than (text, 'latin1')");
      Value b = make(Kind::String);
      b->string = latin1_bytes(args[0]->string);
      return b;
    }
    if (fn == "torch._utils._rebuild_parameter" || fn == "torch._utils._rebuild_parameter_with_state") {
      if (args.size() < 2 || args[0]->kind != Kind::Tensor || args[1]->kind != Kind::Bool)
        fail(fn, " without (tensor, requires_grad, ...)");
      Value t = make(Kind::Tensor);
      t->tensor = args[0]->tensor;
      t->requires_grad = args[1]->boolean;
      t->parameter = true;
      return t;
    }
    fail("refuses to load '", quote_user(fn), "' (tide reads tensors, dicts, lists, tuples, numbers, strings, ",
         "booleans and None, and never runs code from a checkpoint)");
  }

  // The bytes whose Latin-1 text is `utf8` (each code point below 256 is one byte).
  std::string latin1_bytes(const std::string& utf8) {
    std::string out;
    for (size_t k = 0; k < utf8.size();) {
      const auto c = static_cast<unsigned char>(utf8[k]);
      if (c < 0x80) {
        out.push_back(char(c));
        k += 1;
      } else if ((c & 0xe0) == 0xc0 && c <= 0xc3 && k + 1 < utf8.size()) {
        out.push_back(char(((c & 0x1f) << 6) | (static_cast<unsigned char>(utf8[k + 1]) & 0x3f)));
        k += 2;
      } else {
        fail("_codecs.encode of text that is not Latin-1");
      }
    }
    return out;
  }

  // A strided view of a storage, every element inside it (no negative sizes, strides or offset).
  Tensor view(const Tensor& storage, int64_t offset, const Dims& sizes, const Dims& strides) {
    if (sizes.size() != strides.size())
      fail("a tensor with ", sizes.size(), " sizes and ", strides.size(), " strides");
    if (offset < 0) fail("a tensor at storage offset ", offset);
    bool empty = false;
    for (int k = 0; k < sizes.size(); ++k) {
      if (sizes[k] < 0 || strides[k] < 0) fail("a tensor of size ", sizes, " and stride ", strides);
      empty = empty || sizes[k] == 0;
    }
    if (!empty) {
      int64_t last = offset;
      for (int k = 0; k < sizes.size(); ++k)
        last = checked_add("torch.load", last, checked_mul("torch.load", sizes[k] - 1, strides[k], "a tensor's extent"),
                           "a tensor's extent");
      if (last >= storage.numel())
        fail("a tensor of size ", sizes, ", stride ", strides, " at offset ", offset, " reaches past its storage of ",
             storage.numel(), " elements");
    } else if (offset > storage.numel()) {
      fail("a tensor at offset ", offset, " of a storage of ", storage.numel(), " elements");
    }
    return Tensor::make_view(storage.storage(), sizes, strides, offset, storage.dtype());
  }

  std::string data_;
  Archive& archive_;
  std::string where_;
  size_t pos_ = 0;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Value> memo_;
};

// The checkpoint in `in`; a bare pickle (PyTorch before 1.6) is refused by name.
std::shared_ptr<PtValue> read_pt(ByteSource& in, const std::string& where, bool check_crc = true) {
  unsigned char b[2] = {0, 0};
  if (in.size() >= 2) in.read_at(0, b, 2);
  if (b[0] == 0x80)
    fail_at(where, "PyTorch's legacy checkpoint format (before 1.6) is not supported; load it in PyTorch and ",
            "save it again with torch.save");
  Archive archive(in, where, check_crc);
  Unpickler u(archive.pickle(), archive, where);
  Value result;
  try {
    result = u.run();
  } catch (...) {
    u.release_garbage(nullptr);
    throw;
  }
  u.release_garbage(result);
  return result;
}

// ---------------------------------------------------------------------------------------
// Writing

// The pickle of a PtValue tree and the storages it refers to, in the order of their keys.
class Pickler {
 public:
  Pickler(std::string where) : where_(std::move(where)) { out_ += "\x80\x02"; }  // PROTO 2

  std::string finish(const PtValue& root) {
    value(root);
    out_ += '.';
    return std::move(out_);
  }
  // Storage k (its key is k's decimal text) as a 1-D tensor over the whole storage.
  const std::vector<Tensor>& storages() const { return storages_; }

 private:
  template <typename... A>
  [[noreturn]] void fail(const A&... args) {
    fail_at(where_, path_.empty() ? "the value to save" : "the value at " + key_path_text(path_), " ", args...);
  }

  static std::string float_text(double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    return buf;
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_ += char((v >> (8 * i)) & 0xff);
  }
  void global(const char* module, const char* name) {
    out_ += 'c';
    out_ += module;
    out_ += '\n';
    out_ += name;
    out_ += '\n';
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      out_ += 'K';
      out_ += char(v);
    } else if (v >= 0 && v < 65536) {
      out_ += 'M';
      out_ += char(v & 0xff);
      out_ += char(v >> 8);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      out_ += 'J';
      u32(uint32_t(int32_t(v)));
    } else {
      out_ += "\x8a\x08";  // LONG1 of 8 bytes, two's complement
      for (int i = 0; i < 8; ++i) out_ += char((uint64_t(v) >> (8 * i)) & 0xff);
    }
  }
  void text(const std::string& s) {  // a str (BINUNICODE): s is UTF-8
    out_ += 'X';
    u32(uint32_t(s.size()));
    out_ += s;
  }
  void string(const std::string& s) {
    if (s.size() > 0xffffffffu) fail("is a string of ", s.size(), " bytes (a pickle holds at most 4 GiB)");
    if (valid_utf8(s)) return text(s);
    // bytes, as protocol 2 spells them: _codecs.encode(<the bytes as Latin-1 text>, "latin1")
    global("_codecs", "encode");
    std::string latin1;
    for (char c : s) {
      const auto b = static_cast<unsigned char>(c);
      if (b < 0x80) {
        latin1 += c;
      } else {
        latin1 += char(0xc0 | (b >> 6));
        latin1 += char(0x80 | (b & 0x3f));
      }
    }
    text(latin1);
    text("latin1");
    out_ += "\x86R";  // TUPLE2 REDUCE
  }
  void dims(const Dims& d) {
    if (d.size() == 0) {
      out_ += ')';
      return;
    }
    out_ += '(';
    for (int k = 0; k < d.size(); ++k) integer(d[k]);
    out_ += 't';
  }
  void empty_ordered_dict() {
    global("collections", "OrderedDict");
    out_ += ")R";
  }
  // LONG_BINPUT / LONG_BINGET: a value reached again refers to its first pickling.
  void memo_put(const PtValue& v) {
    const uint32_t k = uint32_t(memo_.size());
    memo_.emplace(&v, k);
    out_ += 'r';
    u32(k);
  }
  bool memo_get(const PtValue& v) {
    auto it = memo_.find(&v);
    if (it == memo_.end()) return false;
    out_ += 'j';
    u32(it->second);
    return true;
  }

  // The record of t's storage (with t's dtype), made on first use.
  size_t storage_of(const Tensor& t) {
    const auto key = std::make_pair(t.storage().get(), t.dtype());
    auto it = storage_index_.find(key);
    if (it != storage_index_.end()) return it->second;
    const int64_t numel = int64_t(t.storage()->nbytes() / dtype_size(t.dtype()));
    storages_.push_back(Tensor::make_view(t.storage(), Dims{numel}, Dims{1}, 0, t.dtype()));
    storage_index_.emplace(key, storages_.size() - 1);
    return storages_.size() - 1;
  }

  void tensor(const PtValue& v) {
    Tensor t = v.tensor;
    if (!t.defined()) fail("is a freed tensor");
    const char* type = nullptr;
    for (const auto& [name, dt] : kStorageTypes)
      if (dt == t.dtype()) type = name;
    if (!type)
      fail("is a tensor of dtype ", dtype_name(t.dtype()), ", which PyTorch's checkpoints cannot hold (convert it: ",
           "x:long() or x:int())");
    if (t.has_negative_stride()) t = t.contiguous();  // PyTorch has no negative strides
    const size_t s = storage_of(t);
    if (v.parameter) global("torch._utils", "_rebuild_parameter");
    global("torch._utils", "_rebuild_tensor_v2");
    out_ += "((";  // the arguments, then the persistent id ('storage', type, key, location, numel)
    text("storage");
    const std::string_view tn(type);
    global("torch", std::string(tn.substr(6)).c_str());  // "torch.FloatStorage" -> torch FloatStorage
    text(std::to_string(s));
    text("cpu");
    integer(storages_[s].numel());
    out_ += "tQ";  // TUPLE BINPERSID
    integer(t.offset());
    dims(t.sizes());
    dims(t.strides());
    out_ += (v.requires_grad && !v.parameter) ? '\x88' : '\x89';
    empty_ordered_dict();  // backward hooks
    out_ += "tR";
    if (v.parameter) {  // _rebuild_parameter(tensor, requires_grad, backward_hooks)
      out_ += v.requires_grad ? '\x88' : '\x89';
      empty_ordered_dict();
      out_ += "\x87R";  // TUPLE3 REDUCE
    }
  }

  void value(const PtValue& v) {
    switch (v.kind) {
      case Kind::None: out_ += 'N'; return;
      case Kind::Bool: out_ += v.boolean ? '\x88' : '\x89'; return;
      case Kind::Int: integer(v.integer); return;
      case Kind::Float: {
        uint64_t bits;
        std::memcpy(&bits, &v.number, 8);
        out_ += 'G';
        for (int k = 7; k >= 0; --k) out_ += char((bits >> (8 * k)) & 0xff);  // big-endian
        return;
      }
      case Kind::String: string(v.string); return;
      case Kind::Tensor:
        if (memo_get(v)) return;
        tensor(v);
        memo_put(v);
        return;
      case Kind::List:
      case Kind::Dict: break;
      default: fail("is ", kind_name(v.kind), ", which a checkpoint cannot hold");
    }
    if (memo_get(v)) return;
    if (open_.size() >= 200) fail("nests deeper than 200 levels");
    if (!open_.insert(&v).second) fail("holds itself (a cycle)");
    if (v.kind == Kind::List) {
      out_ += ']';
      memo_put(v);
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i % 1000 == 0) out_ += '(';  // APPENDS in batches, as Python's pickler
        path_.emplace_back(int64_t(i + 1));
        value(*v.items[i]);
        path_.pop_back();
        if (i % 1000 == 999 || i + 1 == v.items.size()) out_ += 'e';
      }
    } else {
      if (v.ordered) empty_ordered_dict();
      else out_ += '}';
      memo_put(v);
      for (size_t i = 0; i < v.entries.size(); ++i) {
        const auto& [k, val] = v.entries[i];
        if (i % 1000 == 0) out_ += '(';
        value(*k);
        if (k->kind == Kind::String) path_.emplace_back(k->string);
        else if (k->kind == Kind::Int) path_.emplace_back(k->integer);
        else if (k->kind == Kind::Bool) path_.emplace_back(std::string(k->boolean ? "true" : "false"));
        else path_.emplace_back(float_text(k->number));
        value(*val);
        path_.pop_back();
        if (i % 1000 == 999 || i + 1 == v.entries.size()) out_ += 'u';
      }
    }
    open_.erase(&v);
  }

  std::string where_;
  std::string out_;
  KeyPath path_;
  std::unordered_map<const PtValue*, uint32_t> memo_;
  std::unordered_set<const PtValue*> open_;
  std::map<std::pair<const Storage*, DType>, size_t> storage_index_;
  std::vector<Tensor> storages_;
};

// The archive: data.pkl, byteorder, data/<key> for each storage, version.
void write_pt(Output& out, const PtValue& root, const std::string& where) {
  Pickler p(where);
  const std::string pickle = p.finish(root);
  ZipWriter zip(out, where, 64);
  auto member = [&](const std::string& name, const void* data, size_t n) {
    zip.begin("archive/" + name, n, false);
    zip.write(data, n);
    zip.end();
  };
  member("data.pkl", pickle.data(), pickle.size());
  member("byteorder", "little", 6);
  for (size_t k = 0; k < p.storages().size(); ++k) {
    const Tensor host = to_host(p.storages()[k]);  // a device storage's copy
    member("data/" + std::to_string(k), host.data_ptr(), host.nbytes());
  }
  member("version", "3\n", 2);
  zip.finish();
}

}  // namespace

bool looks_like_pt(const std::string& path, const char* op) {
  FileSource in(path, where_of(op, path));
  unsigned char b[4] = {0, 0, 0, 0};
  if (in.size() < 4) return false;
  in.read_at(0, b, 4);
  const bool zip = b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4;
  const bool legacy = b[0] == 0x80 && b[1] == 0x02 && b[2] == 0x8a && b[3] == 0x0a;  // pickle + torch's magic number
  return zip || legacy;
}

std::shared_ptr<PtValue> load_pt(const std::string& path, const char* op) {
  const std::string where = where_of(op, path);
  FileSource in(path, where);
  return read_pt(in, where);
}

std::shared_ptr<PtValue> load_pt_bytes(const void* data, size_t size, const std::string& name, bool check_crc) {
  MemorySource in(data, size);
  return read_pt(in, "torch.load: " + quote_user(name), check_crc);
}

void save_pt(const std::string& path, const PtValue& root, const char* op) {
  const std::string where = where_of(op, path);
  FileOutput out(path, where);
  write_pt(out, root, where);
  out.commit();
}

std::string save_pt_bytes(const PtValue& root, const std::string& name, const char* op) {
  StringOutput out;
  write_pt(out, root, where_of(op, name));
  return std::move(out.buf);
}

void release_pt(const std::shared_ptr<PtValue>& root) { clear_all(reachable({root})); }

}  // namespace tide::io
