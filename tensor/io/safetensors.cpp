// safetensors reading and writing, and tide's checkpoints on top (see safetensors.hpp).
//
// The layers, bottom up:
//   JSON     a small strict parser (RFC 8259: UTF-8, escapes, surrogate pairs, duplicate keys
//            refused, nesting capped) into a tree, and string quoting for the writer
//   ByteSource  random-access bytes of a file (pread) or of a memory buffer (file_io.hpp)
//   decode   header length -> header JSON -> every tensor's spec checked -> the layout
//            checked (no gap, no overlap, the buffer exactly covered) -> allocation and reads
//   encode   the header of a set of tensors, then their bytes, to a string or to a file
//            written through a temporary file and a rename (FileOutput, file_io.hpp)
//   checkpoints  key paths <-> dotted names, recorded in __metadata__
#include "safetensors.hpp"


#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "file_io.hpp"

namespace tide::io {

static_assert(std::endian::native == std::endian::little,
              "safetensors data are little-endian and are read and written without swapping");

namespace {

// The safetensors names of the dtypes tide has.
struct DTypeName {
  const char* name;
  DType dtype;
};
constexpr DTypeName kDTypeNames[] = {
    {"BOOL", DType::Bool},   {"U8", DType::UInt8},    {"I8", DType::Int8},       {"I16", DType::Int16},
    {"I32", DType::Int32},   {"I64", DType::Int64},   {"F16", DType::Float16},   {"BF16", DType::BFloat16},
    {"F32", DType::Float32}, {"F64", DType::Float64}, {"U16", DType::UInt16},  {"U32", DType::UInt32},
    {"U64", DType::UInt64},
};

const char* safetensors_dtype(DType dt) {
  for (const DTypeName& d : kDTypeNames)
    if (d.dtype == dt) return d.name;
  TIDE_FAIL("internal error (a bug in tide): no safetensors name for ", dtype_name(dt));
}

std::optional<DType> parse_safetensors_dtype(std::string_view name) {
  for (const DTypeName& d : kDTypeNames)
    if (name == d.name) return d.dtype;
  return std::nullopt;
}

// "[2, 3]": a shape as the JSON header spells it.
std::string shape_text(const Dims& shape) {
  std::string s = "[";
  for (int k = 0; k < shape.size(); ++k) {
    if (k) s += ", ";
    s += std::to_string(shape[k]);
  }
  return s + "]";
}

// ---------------------------------------------------------------------------------------
// JSON

// A parsed JSON value. The header is small, so a tree is the simplest thing to validate.
struct Json {
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text;               // a string's value, or a number's literal text
  std::vector<std::string> keys;  // an object's keys, in order; items holds their values
  std::vector<Json> items;        // an array's elements, or an object's values

  const Json* find(std::string_view key) const {
    for (size_t k = 0; k < keys.size(); ++k)
      if (keys[k] == key) return &items[k];
    return nullptr;
  }
};

// What a value is, for messages: a number's text, a short string quoted, else its kind.
std::string describe(const Json& v) {
  switch (v.kind) {
    case Json::Kind::Null: return "null";
    case Json::Kind::Bool: return v.boolean ? "true" : "false";
    case Json::Kind::Number: return quote_user(v.text);
    case Json::Kind::String: return "'" + quote_user(v.text) + "'";
    case Json::Kind::Array: return "a list";
    case Json::Kind::Object: return "an object";
  }
  return "?";
}

// The value as an integer, when it is an integer literal that fits int64.
std::optional<int64_t> as_integer(const Json& v) {
  if (v.kind != Json::Kind::Number) return std::nullopt;
  int64_t x = 0;
  const char* end = v.text.data() + v.text.size();
  auto [p, ec] = std::from_chars(v.text.data(), end, x);
  if (ec != std::errc() || p != end) return std::nullopt;
  return x;
}

// A strict recursive-descent parser of one JSON document (the input is valid UTF-8).
class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& where) : s_(text), where_(where) {}

  // The document's one value; only whitespace may follow it.
  Json document() {
    Json v = value(0);
    skip_ws();
    if (i_ != s_.size()) bad("text after the end of the JSON value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;
  std::string_view s_;
  const std::string& where_;
  size_t i_ = 0;

  [[noreturn]] void bad(const std::string& what) const { fail_at(where_, "bad JSON at byte ", i_, ": ", what); }

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool at(char c) const { return i_ < s_.size() && s_[i_] == c; }
  bool at_digit() const { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; }
  bool eat(char c) {
    skip_ws();
    if (!at(c)) return false;
    ++i_;
    return true;
  }
  void expect(char c, const char* what) {
    if (!eat(c)) bad(std::string("expected ") + what);
  }

  Json value(int depth) {
    if (depth > kMaxDepth) bad("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    skip_ws();
    if (i_ >= s_.size()) bad("unexpected end of the text");
    Json v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.kind = Json::Kind::Object;
      if (eat('}')) return v;
      std::set<std::string> seen;
      do {
        skip_ws();
        if (!at('"')) bad("expected a string key");
        const size_t key_at = i_;
        std::string key = string();
        if (!seen.insert(key).second) {
          i_ = key_at;
          bad("duplicate key '" + key + "'");
        }
        expect(':', "':' after a key");
        v.items.push_back(value(depth + 1));
        v.keys.push_back(std::move(key));
      } while (eat(','));
      expect('}', "',' or '}' in an object");
    } else if (c == '[') {
      ++i_;
      v.kind = Json::Kind::Array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']', "',' or ']' in a list");
    } else if (c == '"') {
      v.kind = Json::Kind::String;
      v.text = string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Kind::Number;
      v.text = number();
    } else if (s_.substr(i_, 4) == "true" || s_.substr(i_, 5) == "false") {
      v.kind = Json::Kind::Bool;
      v.boolean = c == 't';
      i_ += v.boolean ? 4 : 5;
    } else if (s_.substr(i_, 4) == "null") {
      i_ += 4;
    } else {
      bad(std::string("unexpected character '") + c + "'");
    }
    return v;
  }

  // A number's literal text, checked against JSON's grammar.
  std::string number() {
    const size_t start = i_;
    if (at('-')) ++i_;
    if (at('0')) {
      ++i_;
    } else {
      if (!at_digit()) bad("a number needs digits");
      while (at_digit()) ++i_;
    }
    if (at('.')) {
      ++i_;
      if (!at_digit()) bad("a number needs digits after '.'");
      while (at_digit()) ++i_;
    }
    if (at('e') || at('E')) {
      ++i_;
      if (at('+') || at('-')) ++i_;
      if (!at_digit()) bad("a number needs digits in its exponent");
      while (at_digit()) ++i_;
    }
    return std::string(s_.substr(start, i_ - start));
  }

  uint32_t hex4() {
    if (s_.size() - i_ < 4) bad("\\u needs 4 hex digits");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f') v |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= uint32_t(h - 'A' + 10);
      else bad("\\u needs 4 hex digits");
    }
    return v;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(char(cp));
    } else if (cp < 0x800) {
      out.push_back(char(0xC0 | (cp >> 6)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(char(0xE0 | (cp >> 12)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(char(0xF0 | (cp >> 18)));
      out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    }
  }

  // A string's value, from its opening quote; escapes decoded (\u pairs to one code point).
  std::string string() {
    ++i_;
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) bad("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c < 0x20) bad("a control character inside a string");
      ++i_;
      if (c == '"') return out;
      if (c != '\\') {
        out.push_back(char(c));
        continue;
      }
      if (i_ >= s_.size()) bad("unterminated string");
      const char e = s_[i_++];
      switch (e) {
        case '"': case '\\': case '/': out.push_back(e); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) bad("a lone low surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(i_, 2) != "\\u") bad("a high surrogate without its low half");
            i_ += 2;
            const uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) bad("a high surrogate without its low half");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: bad(std::string("unknown escape '\\") + e + "'");
      }
    }
  }
};

// Appends s as a JSON string literal (s is valid UTF-8, which JSON carries as is).
void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

// ---------------------------------------------------------------------------------------
// Decoding

// One tensor's entry of the header, checked on its own.
struct TensorSpec {
  std::string name;
  DType dtype = DType::Float32;
  Dims shape;
  uint64_t begin = 0, end = 0;
};

// The [begin, end] pair of data_offsets.
std::string offsets_text(const TensorSpec& s) {
  std::string t = "[";
  t += std::to_string(s.begin);
  t += ", ";
  t += std::to_string(s.end);
  return t + "]";
}

TensorSpec parse_spec(const std::string& name, const Json& v, uint64_t buffer, const std::string& where) {
  const std::string at = where + ": tensor '" + quote_user(name) + "'";
  if (v.kind != Json::Kind::Object) TIDE_FAIL(at, " is described by ", describe(v), ", not an object");
  const Json* dtype = v.find("dtype");
  const Json* shape = v.find("shape");
  const Json* offsets = v.find("data_offsets");
  if (!dtype || !shape || !offsets) TIDE_FAIL(at, " needs the keys dtype, shape and data_offsets");
  TensorSpec s;
  s.name = name;
  std::optional<DType> dt;
  if (dtype->kind == Json::Kind::String) dt = parse_safetensors_dtype(dtype->text);
  if (!dt) TIDE_FAIL(at, " has the unknown dtype ", describe(*dtype), " (tide reads BOOL U8 U16 U32 U64 I8 I16 I32 I64 F16 BF16 F32 F64)");
  s.dtype = *dt;
  if (shape->kind != Json::Kind::Array) TIDE_FAIL(at, " has the shape ", describe(*shape), ", not a list of sizes");
  if (shape->items.size() > size_t(kMaxDims))
    TIDE_FAIL(at, " has ", shape->items.size(), " dims; tide tensors have at most ", kMaxDims);
  for (const Json& d : shape->items) {
    std::optional<int64_t> n = as_integer(d);
    if (!n || *n < 0) TIDE_FAIL(at, " has the size ", describe(d), " in its shape; sizes are integers >= 0");
    s.shape.push_back(*n);
  }
  check_extent(at.c_str(), s.shape, s.dtype);
  const uint64_t nbytes = uint64_t(shape_numel(s.shape)) * dtype_size(s.dtype);
  std::optional<int64_t> begin, end;
  if (offsets->kind == Json::Kind::Array && offsets->items.size() == 2) {
    begin = as_integer(offsets->items[0]);
    end = as_integer(offsets->items[1]);
  }
  if (!begin || !end || *begin < 0 || *end < *begin)
    TIDE_FAIL(at, " needs data_offsets [begin, end] with 0 <= begin <= end");
  s.begin = uint64_t(*begin);
  s.end = uint64_t(*end);
  if (s.end - s.begin != nbytes)
    TIDE_FAIL(at, " has data_offsets ", offsets_text(s), " holding ", s.end - s.begin, " bytes, but its shape ",
            shape_text(s.shape), " of ", safetensors_dtype(s.dtype), " needs ", nbytes);
  if (s.end > buffer)
    TIDE_FAIL(at, " has data_offsets ", offsets_text(s), " beyond the ", buffer, "-byte data buffer");
  return s;
}

std::vector<std::pair<std::string, std::string>> parse_metadata(const Json& v, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  if (v.kind == Json::Kind::Null) return out;
  if (v.kind != Json::Kind::Object) fail_at(where, "__metadata__ is ", describe(v), ", not an object of strings");
  for (size_t k = 0; k < v.keys.size(); ++k) {
    if (v.items[k].kind != Json::Kind::String)
      fail_at(where, "__metadata__ '", quote_user(v.keys[k]), "' is ", describe(v.items[k]), ", not a string");
    out.emplace_back(v.keys[k], v.items[k].text);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The tensors, in data order, must tile the buffer: no gap, no overlap, nothing left over.
void check_layout(std::vector<TensorSpec>& specs, uint64_t buffer, const std::string& where) {
  std::vector<const TensorSpec*> order;
  for (const TensorSpec& s : specs) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](const TensorSpec* a, const TensorSpec* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const TensorSpec* last = nullptr;  // the tensor that ends at `covered`
  for (const TensorSpec* s : order) {
    if (s->begin < covered)
      fail_at(where, "tensors '", quote_user(last->name), "' and '", quote_user(s->name), "' overlap (data_offsets ", offsets_text(*last),
              " and ", offsets_text(*s), ")");
    if (s->begin > covered)
      fail_at(where, "a gap of ", s->begin - covered, " bytes in the data buffer before tensor '", quote_user(s->name),
              "' (data_offsets ", offsets_text(*s), ")");
    if (s->end > covered || !last) last = s;
    covered = s->end;
  }
  if (covered != buffer)
    fail_at(where, "the data buffer is ", buffer, " bytes but the tensors cover ", covered);
}

Safetensors decode(ByteSource& in, const std::string& where) {
  const uint64_t size = in.size();
  if (size < 8)
    fail_at(where, "the file is ", size, " bytes, too short for a safetensors file (it starts with an 8-byte header length)");
  unsigned char len8[8];
  in.read_at(0, len8, 8);
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | len8[k];
  if (n > size - 8)
    fail_at(where, "the header length ", n, " goes beyond the end of the file (", size - 8, " bytes follow it)");
  if (n > kMaxSafetensorsHeader)
    fail_at(where, "the header is ", n, " bytes, over the limit of ", kMaxSafetensorsHeader);
  std::string text(size_t(n), '\0');
  in.read_at(8, text.data(), text.size());
  if (!valid_utf8(text)) fail_at(where, "the header is not valid UTF-8");
  const Json root = JsonParser(text, where).document();
  if (root.kind != Json::Kind::Object) fail_at(where, "the header is ", describe(root), ", not a JSON object");

  const uint64_t buffer = size - 8 - n;
  Safetensors st;
  std::vector<TensorSpec> specs;
  for (size_t k = 0; k < root.keys.size(); ++k) {
    if (root.keys[k] == "__metadata__") st.metadata = parse_metadata(root.items[k], where);
    else specs.push_back(parse_spec(root.keys[k], root.items[k], buffer, where));
  }
  check_layout(specs, buffer, where);
  // Every size is now known to lie inside the file: allocating them is safe.
  for (TensorSpec& s : specs) {
    Tensor t = Tensor::empty(s.shape, s.dtype);
    in.read_at(8 + n + s.begin, t.data_ptr(), t.nbytes());
    if (s.dtype == DType::Bool) {  // any non-zero byte is true, as NumPy and PyTorch read it
      uint8_t* b = static_cast<uint8_t*>(t.data_ptr());
      for (size_t i = 0; i < t.nbytes(); ++i) b[i] = b[i] != 0;
    }
    st.tensors.emplace_back(std::move(s.name), std::move(t));
  }
  return st;
}

// ---------------------------------------------------------------------------------------
// Encoding

// The order of the tensors in the data buffer: largest itemsize first (so that each starts
// aligned to its itemsize after the 8-aligned header), then by name.
std::vector<size_t> data_order(const Safetensors& st) {
  std::vector<size_t> order(st.tensors.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t ia = st.tensors[a].second.itemsize(), ib = st.tensors[b].second.itemsize();
    return ia != ib ? ia > ib : st.tensors[a].first < st.tensors[b].first;
  });
  return order;
}

// The 8-byte length and the header (padded with spaces to a multiple of 8), after checking
// every name and tensor.
std::string header_bytes(const Safetensors& st, const std::vector<size_t>& order, const char* op) {
  std::set<std::string_view> names;
  for (const auto& [name, t] : st.tensors) {
    TIDE_CHECK(t.defined(), op, ": tensor '", quote_user(name), "' is undefined");
    TIDE_CHECK(name != "__metadata__", op, ": the name '__metadata__' is reserved by the safetensors format");
    TIDE_CHECK(valid_utf8(name), op, ": the tensor name '", quote_user(name), "' is not valid UTF-8");
    TIDE_CHECK(names.insert(name).second, op, ": two tensors are named '", quote_user(name), "'");
  }
  std::string h = "{";
  if (!st.metadata.empty()) {
    h += "\"__metadata__\":{";
    for (size_t k = 0; k < st.metadata.size(); ++k) {
      const auto& [key, value] = st.metadata[k];
      TIDE_CHECK(valid_utf8(key) && valid_utf8(value), op, ": metadata '", quote_user(key), "' is not valid UTF-8");
      if (k) h += ',';
      append_json_string(h, key);
      h += ':';
      append_json_string(h, value);
    }
    h += "},";
  }
  uint64_t offset = 0;
  for (size_t k : order) {
    const auto& [name, t] = st.tensors[k];
    // The safetensors format (0.4) names no complex dtype.
    TIDE_CHECK(!is_complex(t.dtype()), op, ": '", quote_user(name), "' is ", dtype_name(t.dtype()),
               ", which safetensors files cannot hold; save torch.view_as_real(x) or use np.save");
    append_json_string(h, name);
    h += ":{\"dtype\":\"";
    h += safetensors_dtype(t.dtype());
    h += "\",\"shape\":[";
    for (int d = 0; d < t.dim(); ++d) {
      if (d) h += ',';
      h += std::to_string(t.size(d));
    }
    h += "],\"data_offsets\":[";
    h += std::to_string(offset);
    h += ',';
    offset += t.nbytes();
    h += std::to_string(offset);
    h += "]},";
  }
  if (h.size() > 1) h.pop_back();  // the last comma
  h += '}';
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int k = 0; k < 8; ++k) out[size_t(k)] = char((uint64_t(h.size()) >> (8 * k)) & 0xff);
  return out + h;
}

// Sends the data buffer to sink(const void*, size_t): each tensor's bytes in data order, one
// contiguous copy alive at a time.
template <typename Sink>
void emit_data(const Safetensors& st, const std::vector<size_t>& order, Sink&& sink) {
  for (size_t k : order) {
    const Tensor h = to_host(st.tensors[k].second).contiguous();
    sink(h.data_ptr(), h.nbytes());
  }
}

// ---------------------------------------------------------------------------------------
// Checkpoints

constexpr const char* kSingleName = "tensor";

bool is_identifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}


// tide.keys: {"<name>": [key, ...], ...}.
std::string keys_json(const std::vector<std::pair<std::string, const KeyPath*>>& named) {
  std::string j = "{";
  for (size_t k = 0; k < named.size(); ++k) {
    if (k) j += ',';
    append_json_string(j, named[k].first);
    j += ":[";
    for (size_t c = 0; c < named[k].second->size(); ++c) {
      if (c) j += ',';
      const Key& key = (*named[k].second)[c];
      if (const int64_t* i = std::get_if<int64_t>(&key)) j += std::to_string(*i);
      else append_json_string(j, std::get<std::string>(key));
    }
    j += ']';
  }
  return j + "}";
}

// The path that tide.keys records for `name`, checked to spell that name.
KeyPath recorded_path(const Json& v, const std::string& name, const std::string& where) {
  KeyPath path;
  if (v.kind == Json::Kind::Array)
    for (const Json& c : v.items) {
      if (c.kind == Json::Kind::String) path.emplace_back(c.text);
      else if (std::optional<int64_t> i = as_integer(c)) path.emplace_back(*i);
      else fail_at(where, "metadata tide.keys gives '", quote_user(name), "' the key ", describe(c), "; keys are strings or integers");
    }
  if (path.empty() || dotted_name(path) != name)
    fail_at(where, "metadata tide.keys gives '", quote_user(name), "' a key path that does not spell that name");
  return path;
}

// The tensors at the paths that tide.keys records (every tensor has one; no path may lead
// through another tensor).
std::vector<std::pair<KeyPath, Tensor>> entries_from_keys(Safetensors& st, const std::string& keys_text,
                                                          const std::string& where) {
  const std::string at = where + ": metadata tide.keys";
  if (!valid_utf8(keys_text)) fail_at(at, "is not valid UTF-8");
  const Json keys = JsonParser(keys_text, at).document();
  if (keys.kind != Json::Kind::Object) fail_at(at, "is ", describe(keys), ", not an object");
  if (keys.keys.size() != st.tensors.size())
    fail_at(where, "metadata tide.keys lists ", keys.keys.size(), " tensors but the file holds ", st.tensors.size());
  std::unordered_map<std::string_view, const Json*> by_name;
  for (size_t k = 0; k < keys.keys.size(); ++k) by_name.emplace(keys.keys[k], &keys.items[k]);
  std::vector<std::pair<KeyPath, Tensor>> entries;
  for (auto& [name, t] : st.tensors) {
    auto it = by_name.find(name);
    if (it == by_name.end()) fail_at(where, "metadata tide.keys has no key path for tensor '", quote_user(name), "'");
    entries.emplace_back(recorded_path(*it->second, name, where), std::move(t));
  }
  // Sorted, a path that leads through another tensor comes right after that tensor's path.
  std::vector<const KeyPath*> sorted;
  for (const auto& e : entries) sorted.push_back(&e.first);
  std::sort(sorted.begin(), sorted.end(), [](const KeyPath* a, const KeyPath* b) { return *a < *b; });
  for (size_t k = 1; k < sorted.size(); ++k) {
    const KeyPath& a = *sorted[k - 1];
    const KeyPath& b = *sorted[k];
    if (a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin()))
      fail_at(where, "metadata tide.keys makes ", key_path_text(a), " both a tensor and the table holding ", key_path_text(b));
  }
  return entries;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public entry points

Safetensors load_safetensors(const std::string& path, const char* op) {
  const std::string where = where_of(op, path);
  FileSource in(path, where);
  return decode(in, where);
}

Safetensors decode_safetensors(const void* data, size_t size, const std::string& name, const char* op) {
  MemorySource in(data, size);
  return decode(in, where_of(op, name));
}

void save_safetensors(const std::string& path, const Safetensors& st, const char* op) {
  const std::string where = where_of(op, path);
  const std::vector<size_t> order = data_order(st);
  const std::string header = header_bytes(st, order, op);  // every check before the file is touched
  FileOutput out(path, where);
  out.write(header.data(), header.size());
  emit_data(st, order, [&](const void* p, size_t n) { out.write(p, n); });
  out.commit();
}

std::string encode_safetensors(const Safetensors& st, const char* op) {
  const std::vector<size_t> order = data_order(st);
  std::string out = header_bytes(st, order, op);
  emit_data(st, order, [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

std::string key_path_text(const KeyPath& path) {
  std::string s;
  for (const Key& k : path) {
    if (const int64_t* i = std::get_if<int64_t>(&k)) {
      s += '[';
      s += std::to_string(*i);
      s += ']';
    } else {
      const std::string& name = std::get<std::string>(k);
      if (is_identifier(name)) s += (s.empty() ? "" : ".") + quote_user(name);
      else s += "[\"" + quote_user(name) + "\"]";
    }
  }
  return s;
}

std::string dotted_name(const KeyPath& path) {
  std::string s;
  for (size_t k = 0; k < path.size(); ++k) {
    if (k) s += '.';
    if (const int64_t* i = std::get_if<int64_t>(&path[k])) s += std::to_string(*i);
    else s += std::get<std::string>(path[k]);
  }
  return s;
}

Safetensors checkpoint_to_safetensors(const Checkpoint& ck, const char* op) {
  Safetensors st;
  if (ck.single) {
    TIDE_ASSERT(ck.entries.size() == 1);
    st.tensors.emplace_back(kSingleName, ck.entries[0].second);
    st.metadata = {{"format", "pt"}, {"tide.object", "tensor"}};
    return st;
  }
  std::map<std::string, const KeyPath*> by_name;
  for (const auto& [path, t] : ck.entries) {
    TIDE_ASSERT(!path.empty());
    std::string name = dotted_name(path);
    auto [it, fresh] = by_name.emplace(name, &path);
    TIDE_CHECK(fresh, op, ": the keys ", key_path_text(*it->second), " and ", key_path_text(path),
               " would both be stored as '", name, "'");
    st.tensors.emplace_back(std::move(name), t);
  }
  std::vector<std::pair<std::string, const KeyPath*>> named(by_name.begin(), by_name.end());
  st.metadata = {{"format", "pt"}, {"tide.keys", keys_json(named)}, {"tide.object", "table"}};
  return st;
}

Checkpoint checkpoint_from_safetensors(Safetensors st, const std::string& where) {
  Checkpoint ck;
  auto meta = [&](const char* key) -> const std::string* {
    for (const auto& [k, v] : st.metadata)
      if (k == key) return &v;
    return nullptr;
  };
  const std::string* object = meta("tide.object");
  if (!object) {  // written elsewhere: a flat table of the names
    for (auto& [name, t] : st.tensors) ck.entries.emplace_back(KeyPath{name}, std::move(t));
    return ck;
  }
  if (*object == "tensor") {
    if (st.tensors.size() != 1)
      fail_at(where, "metadata tide.object says the file holds one tensor, but it holds ", st.tensors.size());
    ck.single = true;
    ck.entries.emplace_back(KeyPath{}, std::move(st.tensors[0].second));
    return ck;
  }
  if (*object != "table") fail_at(where, "metadata tide.object is '", quote_user(*object), "', not 'tensor' or 'table'");
  const std::string* keys = meta("tide.keys");
  if (!keys) fail_at(where, "metadata tide.object is 'table' but tide.keys is missing");
  ck.entries = entries_from_keys(st, *keys, where);
  return ck;
}

}  // namespace tide::io
