// safetensors and checkpoints: round trips of every dtype and shape, the exact bytes written,
// files laid out the way other writers lay them out, every kind of bad header as an error
// naming the file and the fault, random corruption and truncation as errors (never a crash),
// key paths through __metadata__, and the temporary-file-and-rename save.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../../tensor/io/safetensors.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::contains;
using tide::test::values;

namespace {

const DType kAllDTypes[] = {DType::Bool,    DType::UInt8,    DType::Int8,     DType::Int16,   DType::Int32,
                            DType::Int64,   DType::Float16,  DType::BFloat16, DType::Float32, DType::Float64,
                            DType::UInt16,  DType::UInt32,   DType::UInt64};

// A contiguous tensor whose element k is (k % 7) - 3 (k % 2 for bool), cast to the dtype.
Tensor ramp(const Dims& shape, DType dt) {
  Tensor t = Tensor::empty(shape, dt);
  TIDE_DISPATCH_ALL(dt, "ramp", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t k = 0; k < t.numel(); ++k) {
      if constexpr (std::is_same_v<scalar_t, bool>) p[k] = k % 2 == 1;
      else if constexpr (std::is_unsigned_v<scalar_t>) p[k] = scalar_t(k % 7);
      else p[k] = scalar_t(compute_t<scalar_t>(double(k % 7) - 3));
    }
  });
  return t;
}

bool same(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && values(a) == values(b);
}

// A file from a header text and data bytes, as any writer would produce it.
std::string st_file(const std::string& header, const std::string& data = "") {
  std::string out;
  for (int k = 0; k < 8; ++k) out.push_back(char((uint64_t(header.size()) >> (8 * k)) & 0xff));
  return out + header + data;
}

io::Safetensors decode(const std::string& bytes) { return io::decode_safetensors(bytes.data(), bytes.size(), "f.st"); }

std::string error_of(const std::string& bytes) {
  return tide::test::error_of([&] { decode(bytes); });
}

// A header with one F32 tensor "w" of the given shape and offsets, and `data_len` data bytes.
std::string one_f32(const std::string& shape, const std::string& offsets, size_t data_len) {
  return st_file("{\"w\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}}",
                 std::string(data_len, '\0'));
}

io::Safetensors three_tensors() {
  io::Safetensors st;
  st.tensors = {{"b", ramp({2, 3}, DType::Float32)}, {"a", ramp({4}, DType::Int64)}, {"m", ramp({3}, DType::Bool)}};
  st.metadata = {{"format", "pt"}};
  return st;
}

// A fresh empty directory under the system's temporary one, removed at the end of scope.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tide-st-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  size_t entries() const {
    return size_t(std::distance(std::filesystem::directory_iterator(path), std::filesystem::directory_iterator()));
  }
};

}  // namespace

TEST_CASE("safetensors: round trip of every dtype and shape, views written as their values") {
  for (DType dt : kAllDTypes) {
    for (const Dims& shape : {Dims{}, Dims{0}, Dims{5}, Dims{2, 3}, Dims{2, 0, 3}, Dims{3, 1, 4, 2}}) {
      CAPTURE(dtype_name(dt));
      CAPTURE(shape.str());
      io::Safetensors st;
      st.tensors = {{"x", ramp(shape, dt)}};
      io::Safetensors back = decode(io::encode_safetensors(st));
      REQUIRE(back.tensors.size() == 1);
      CHECK(back.tensors[0].first == "x");
      CHECK(same(back.tensors[0].second, st.tensors[0].second));
    }
  }
  Tensor m = ramp({3, 4}, DType::Int16);
  io::Safetensors st;
  st.tensors = {{"t", m.as_strided({4, 3}, {1, 4}, 0)}, {"col", m.as_strided({3}, {4}, 1)}};
  io::Safetensors back = decode(io::encode_safetensors(st));
  for (auto& [name, t] : back.tensors) {
    const Tensor& orig = name == "t" ? st.tensors[0].second : st.tensors[1].second;
    CHECK(t.is_contiguous());
    CHECK(same(t, orig));
  }
}

TEST_CASE("safetensors: the bytes written") {
  io::Safetensors st;
  Tensor h = Tensor::empty({2}, DType::Float16);
  h.data<Half>()[0] = Half(1.0f);
  h.data<Half>()[1] = Half(-2.0f);
  Tensor d = Tensor::empty({}, DType::Float64);
  d.data<double>()[0] = 0.5;
  st.tensors = {{"h", h}, {"d", d}, {"e", Tensor::empty({0, 2}, DType::Int32)}};
  st.metadata = {{"format", "pt"}, {"note", "a \"quoted\"\nline"}};
  const std::string b = io::encode_safetensors(st);
  const std::string header =
      "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"a \\\"quoted\\\"\\u000aline\"},"
      "\"d\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]},"
      "\"e\":{\"dtype\":\"I32\",\"shape\":[0,2],\"data_offsets\":[8,8]},"
      "\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[8,12]}}";
  const size_t padded = (header.size() + 7) / 8 * 8;
  REQUIRE(b.size() == 8 + padded + 12);
  uint64_t n = 0;
  std::memcpy(&n, b.data(), 8);
  CHECK(n == padded);
  CHECK(b.substr(8, header.size()) == header);
  CHECK(b.substr(8 + header.size(), padded - header.size()) == std::string(padded - header.size(), ' '));
  CHECK(b.substr(8 + padded) == std::string("\0\0\0\0\0\0\xe0\x3f\x00\x3c\x00\xc0", 12));  // 0.5, 1.0, -2.0
}

TEST_CASE("safetensors: files as other writers lay them out") {
  // Python's json.dumps spacing, keys out of data order, escapes, metadata last, a BF16.
  std::string header =
      "{\"layer\\u00e9.w\": {\"dtype\": \"BF16\", \"shape\": [2], \"data_offsets\": [8, 12]}, "
      "\"\\ud83d\\ude00\": {\"dtype\": \"I64\", \"shape\": [1], \"data_offsets\": [0, 8], \"extra\": [1, {\"x\": null}]}, "
      "\"__metadata__\": {\"format\": \"pt\"}}   ";
  std::string data("\x07\0\0\0\0\0\0\0\x80\x3f\x40\xc0", 12);  // 7; bf16 1.0, -3.0
  io::Safetensors st = decode(st_file(header, data));
  REQUIRE(st.tensors.size() == 2);
  CHECK(st.tensors[0].first == "layer\xc3\xa9.w");
  CHECK(values(st.tensors[0].second) == std::vector<double>{1.0, -3.0});
  CHECK(st.tensors[0].second.dtype() == DType::BFloat16);
  CHECK(st.tensors[1].first == "\xf0\x9f\x98\x80");
  CHECK(values(st.tensors[1].second) == std::vector<double>{7});
  REQUIRE(st.metadata.size() == 1);
  CHECK(st.metadata[0] == std::pair<std::string, std::string>{"format", "pt"});
  // No tensors at all, with or without metadata.
  CHECK(decode(st_file("{}")).tensors.empty());
  CHECK(decode(st_file("{\"__metadata__\":null}")).metadata.empty());
  // Bool bytes other than 0 and 1 read as true.
  io::Safetensors b = decode(st_file("{\"m\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]}}", std::string("\0\2\1", 3)));
  CHECK(std::vector<uint8_t>(b.tensors[0].second.data<uint8_t>(), b.tensors[0].second.data<uint8_t>() + 3) ==
        std::vector<uint8_t>{0, 1, 1});
}

TEST_CASE("safetensors: bad files are errors naming the file and the fault") {
  struct Case {
    std::string bytes, message;
  };
  const std::string forged_len("\x00\x00\x00\x00\x00\x00\x00\x80{}", 10);
  const Case cases[] = {
      {"abc", "torch.load: f.st: the file is 3 bytes, too short for a safetensors file"},
      {forged_len, "torch.load: f.st: the header length 9223372036854775808 goes beyond the end of the file (2 bytes follow it)"},
      {st_file("{\"w\":1"), "torch.load: f.st: bad JSON at byte 6: expected ',' or '}' in an object"},
      {st_file("{\"w\":{},}"), "bad JSON at byte 8: expected a string key"},
      {st_file("{} {}"), "bad JSON at byte 3: text after the end of the JSON value"},
      {st_file("{\"a\":\"\x01\"}"), "bad JSON at byte 6: a control character inside a string"},
      {st_file("{\"a\\q\":1}"), "unknown escape '\\q'"},
      {st_file("{\"\\ud800\":1}"), "a high surrogate without its low half"},
      {st_file("{\"a\":01}"), "bad JSON at byte 6: expected ',' or '}' in an object"},
      {st_file("{\"a\":-}"), "a number needs digits"},
      {st_file("{\"\xff\":1}"), "torch.load: f.st: the header is not valid UTF-8"},
      {st_file("{\"\xc0\xaf\":1}"), "the header is not valid UTF-8"},  // an overlong '/'
      {st_file("[1, 2]"), "torch.load: f.st: the header is a list, not a JSON object"},
      {st_file("{\"w\":[]}"), "torch.load: f.st: tensor 'w' is described by a list, not an object"},
      {st_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[]}}"), "tensor 'w' needs the keys dtype, shape and data_offsets"},
      {st_file("{\"w\":{\"dtype\":\"C64\",\"shape\":[],\"data_offsets\":[0,8]}}", "........"),
       "tensor 'w' has the unknown dtype 'C64' (tide reads BOOL U8 U16 U32 U64 I8 I16 I32 I64 F16 BF16 F32 F64)"},
      {st_file("{\"w\":{\"dtype\":7,\"shape\":[],\"data_offsets\":[0,2]}}"), "tensor 'w' has the unknown dtype 7"},
      {one_f32("[2, -1]", "[0, 8]", 8), "tensor 'w' has the size -1 in its shape; sizes are integers >= 0"},
      {one_f32("[2.0]", "[0, 8]", 8), "tensor 'w' has the size 2.0 in its shape"},
      {one_f32("[1e2]", "[0, 8]", 8), "tensor 'w' has the size 1e2 in its shape"},
      {one_f32("[99999999999999999999]", "[0, 8]", 8), "has the size 99999999999999999999 in its shape"},
      {one_f32("\"2\"", "[0, 8]", 8), "tensor 'w' has the shape '2', not a list of sizes"},
      {one_f32("[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "[0, 4]", 4), "tensor 'w' has 17 dims; tide tensors have at most 16"},
      {one_f32("[4294967296, 4294967296]", "[0, 4]", 4),
       "tensor 'w': shape {4294967296,4294967296} of float32 is too large (its byte size or strides would pass 2^63-1)"},
      {one_f32("[0, 4294967296, 4294967296]", "[0, 0]", 0), "tensor 'w': shape {0,4294967296,4294967296} of float32 is too large"},
      {one_f32("[2]", "[0]", 8), "tensor 'w' needs data_offsets [begin, end] with 0 <= begin <= end"},
      {one_f32("[2]", "[8, 0]", 8), "needs data_offsets [begin, end] with 0 <= begin <= end"},
      {one_f32("[2]", "[-8, 0]", 8), "needs data_offsets [begin, end]"},
      {one_f32("[2]", "[0, 4]", 8), "tensor 'w' has data_offsets [0, 4] holding 4 bytes, but its shape [2] of F32 needs 8"},
      {one_f32("[2]", "[8, 16]", 8), "tensor 'w' has data_offsets [8, 16] beyond the 8-byte data buffer"},
      {one_f32("[2]", "[18446744073709551608, 18446744073709551616]", 8), "needs data_offsets [begin, end]"},
      {one_f32("[2]", "[4, 12]", 12), "torch.load: f.st: a gap of 4 bytes in the data buffer before tensor 'w' (data_offsets [4, 12])"},
      {one_f32("[2]", "[0, 8]", 11), "torch.load: f.st: the data buffer is 11 bytes but the tensors cover 8"},
      {st_file("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[4,12]}}", std::string(12, '\0')),
       "torch.load: f.st: tensors 'a' and 'b' overlap (data_offsets [0, 8] and [4, 12])"},
      {st_file("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"e\":{\"dtype\":\"I32\",\"shape\":[0],\"data_offsets\":[4,4]}}", std::string(8, '\0')),
       "tensors 'a' and 'e' overlap"},
      {st_file("{\"w\":{\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[0,1]},"
               "\"w\":{\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[1,2]}}", "xy"),
       "bad JSON at byte 53: duplicate key 'w'"},
      {st_file("{\"__metadata__\":{\"a\":1}}"), "torch.load: f.st: __metadata__ 'a' is 1, not a string"},
      {st_file("{\"__metadata__\":[]}"), "__metadata__ is a list, not an object of strings"},
      {st_file("{\"w\":{\"x\":" + std::string(100, '[') + std::string(100, ']') + "}}"),
       "bad JSON at byte 73: nested deeper than 64 levels"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.bytes);
    const std::string e = error_of(c.bytes);
    CHECK_MESSAGE(contains(e, c.message), e);
  }
}

TEST_CASE("safetensors: every truncation and random corruption is an error, never a crash") {
  const std::string good = io::encode_safetensors(three_tensors());
  for (size_t len = 0; len < good.size(); ++len) {
    CAPTURE(len);
    CHECK_THROWS_AS(decode(good.substr(0, len)), tide::Error);
  }
  std::mt19937 rng(12345);
  int errors = 0, loaded = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bad = good;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Mostly in the length and the header, where a flip changes the structure.
      const size_t at = rng() % 4 == 0 ? rng() % bad.size() : rng() % std::min<size_t>(bad.size(), 8 + 200);
      bad[at] = char(rng() % 3 == 0 ? (rng() & 0xff) : (uint8_t(bad[at]) ^ (1u << (rng() % 8))));
    }
    try {
      io::Safetensors st = decode(bad);
      for (auto& [name, t] : st.tensors) CHECK(t.nbytes() <= bad.size());
      ++loaded;
    } catch (const tide::Error& e) {
      CHECK(std::string(e.what()).rfind("torch.load: f.st: ", 0) == 0);
      ++errors;
    }
  }
  CHECK(errors > 1000);  // most corruptions of the header are caught
  CHECK(errors + loaded == 3000);
}

TEST_CASE("safetensors: names and tensors refused on writing") {
  io::Safetensors st;
  st.tensors = {{"a", ramp({1}, DType::Int8)}, {"a", ramp({1}, DType::Int8)}};
  CHECK(tide::test::error_of([&] { io::encode_safetensors(st); }) == "torch.save: two tensors are named 'a'");
  st.tensors = {{"__metadata__", ramp({1}, DType::Int8)}};
  CHECK(tide::test::error_of([&] { io::encode_safetensors(st); }) ==
        "torch.save: the name '__metadata__' is reserved by the safetensors format");
  st.tensors = {{"bad\xff", ramp({1}, DType::Int8)}};
  CHECK(tide::test::error_of([&] { io::encode_safetensors(st); }) == "torch.save: the tensor name 'bad\xff' is not valid UTF-8");
}

TEST_CASE("checkpoints: key paths through __metadata__") {
  using io::KeyPath;
  CHECK(io::dotted_name({"fc1", "weight"}) == "fc1.weight");
  CHECK(io::dotted_name({"layers", int64_t(1), "w"}) == "layers.1.w");
  CHECK(io::key_path_text({"layers", int64_t(1), "w"}) == "layers[1].w");
  CHECK(io::key_path_text({"fc1.weight"}) == "[\"fc1.weight\"]");
  CHECK(io::key_path_text({int64_t(-2), "a b"}) == "[-2][\"a b\"]");

  io::Checkpoint ck;
  ck.entries = {{KeyPath{"fc1", "weight"}, ramp({2, 3}, DType::Float32)},
                {KeyPath{"layers", int64_t(1), "w"}, ramp({2}, DType::Float64)},
                {KeyPath{"fc1.bias"}, ramp({2}, DType::Float32)}};
  io::Safetensors st = io::checkpoint_to_safetensors(ck);
  REQUIRE(st.metadata.size() == 3);
  CHECK(st.metadata[0] == std::pair<std::string, std::string>{"format", "pt"});
  CHECK(st.metadata[1] == std::pair<std::string, std::string>{
                              "tide.keys", "{\"fc1.bias\":[\"fc1.bias\"],\"fc1.weight\":[\"fc1\",\"weight\"],"
                                           "\"layers.1.w\":[\"layers\",1,\"w\"]}"});
  CHECK(st.metadata[2] == std::pair<std::string, std::string>{"tide.object", "table"});
  const std::string bytes = io::encode_safetensors(st);
  io::Checkpoint back = io::checkpoint_from_safetensors(decode(bytes), "torch.load: f.st");
  CHECK_FALSE(back.single);
  REQUIRE(back.entries.size() == 3);
  for (auto& [path, t] : back.entries) {
    CAPTURE(io::dotted_name(path));
    bool found = false;
    for (auto& [p0, t0] : ck.entries)
      if (p0 == path) found = same(t, t0);
    CHECK(found);
  }

  // One tensor alone.
  io::Checkpoint one;
  one.single = true;
  one.entries = {{KeyPath{}, ramp({}, DType::Int64)}};
  io::Safetensors s1 = io::checkpoint_to_safetensors(one);
  CHECK(s1.tensors[0].first == "tensor");
  io::Checkpoint b1 = io::checkpoint_from_safetensors(decode(io::encode_safetensors(s1)), "w");
  CHECK(b1.single);
  CHECK(same(b1.entries[0].second, one.entries[0].second));

  // Written elsewhere: a flat table of the names.
  io::Safetensors foreign;
  foreign.tensors = {{"fc1.weight", ramp({1}, DType::Float32)}};
  io::Checkpoint flat = io::checkpoint_from_safetensors(decode(io::encode_safetensors(foreign)), "w");
  REQUIRE(flat.entries.size() == 1);
  CHECK(flat.entries[0].first == KeyPath{"fc1.weight"});

  // Two paths that make one name.
  io::Checkpoint clash;
  clash.entries = {{KeyPath{"a", int64_t(1)}, ramp({1}, DType::Int8)}, {KeyPath{"a", "1"}, ramp({1}, DType::Int8)}};
  CHECK(tide::test::error_of([&] { io::checkpoint_to_safetensors(clash); }) ==
        "torch.save: the keys a[1] and a[\"1\"] would both be stored as 'a.1'");
}

TEST_CASE("checkpoints: metadata that does not match the tensors is an error") {
  auto with_meta = [](std::vector<std::pair<std::string, std::string>> meta, std::vector<std::string> names) {
    io::Safetensors st;
    for (const std::string& n : names) st.tensors.emplace_back(n, ramp({1}, DType::Int8));
    st.metadata = std::move(meta);
    const std::string bytes = io::encode_safetensors(st);
    return tide::test::error_of([&] { io::checkpoint_from_safetensors(decode(bytes), "torch.load: f.st"); });
  };
  CHECK(with_meta({{"tide.object", "tensor"}}, {"a", "b"}) ==
        "torch.load: f.st: metadata tide.object says the file holds one tensor, but it holds 2");
  CHECK(with_meta({{"tide.object", "list"}}, {"a"}) ==
        "torch.load: f.st: metadata tide.object is 'list', not 'tensor' or 'table'");
  CHECK(with_meta({{"tide.object", "table"}}, {"a"}) ==
        "torch.load: f.st: metadata tide.object is 'table' but tide.keys is missing");
  CHECK(with_meta({{"tide.object", "table"}, {"tide.keys", "{\"a\":[\"a\"]"}}, {"a"}) ==
        "torch.load: f.st: metadata tide.keys: bad JSON at byte 10: expected ',' or '}' in an object");
  CHECK(with_meta({{"tide.object", "table"}, {"tide.keys", "{\"a\":[\"a\"]}"}}, {"a", "b"}) ==
        "torch.load: f.st: metadata tide.keys lists 1 tensors but the file holds 2");
  CHECK(with_meta({{"tide.object", "table"}, {"tide.keys", "{\"a\":[\"a\"],\"c\":[\"c\"]}"}}, {"a", "b"}) ==
        "torch.load: f.st: metadata tide.keys has no key path for tensor 'b'");
  CHECK(with_meta({{"tide.object", "table"}, {"tide.keys", "{\"a.b\":[\"a\",\"c\"]}"}}, {"a.b"}) ==
        "torch.load: f.st: metadata tide.keys gives 'a.b' a key path that does not spell that name");
  CHECK(with_meta({{"tide.object", "table"}, {"tide.keys", "{\"a\":[]}"}}, {"a"}) ==
        "torch.load: f.st: metadata tide.keys gives 'a' a key path that does not spell that name");
  CHECK(with_meta({{"tide.object", "table"}, {"tide.keys", "{\"a.1\":[\"a\",1.5]}"}}, {"a.1"}) ==
        "torch.load: f.st: metadata tide.keys gives 'a.1' the key 1.5; keys are strings or integers");
  CHECK(with_meta({{"tide.object", "table"}, {"tide.keys", "{\"a\":[\"a\"],\"a.b\":[\"a\",\"b\"]}"}}, {"a", "a.b"}) ==
        "torch.load: f.st: metadata tide.keys makes a both a tensor and the table holding a.b");
}

TEST_CASE("safetensors files: save, overwrite, and a failed save leaves the old file") {
  TempDir dir;
  const std::string path = dir / "model.safetensors";
  io::save_safetensors(path, three_tensors());
  io::Safetensors back = io::load_safetensors(path);
  CHECK(back.tensors.size() == 3);
  CHECK(dir.entries() == 1);

  // Overwriting keeps the file's permissions and replaces its contents.
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  io::Safetensors small;
  small.tensors = {{"only", ramp({2}, DType::Int32)}};
  io::save_safetensors(path, small);
  back = io::load_safetensors(path);
  REQUIRE(back.tensors.size() == 1);
  CHECK(values(back.tensors[0].second) == std::vector<double>{-3, -2});
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);

  // A save refused before writing, and one whose rename fails, leave no trace.
  io::Safetensors bad;
  bad.tensors = {{"__metadata__", ramp({1}, DType::Int8)}};
  CHECK_THROWS_AS(io::save_safetensors(path, bad), tide::Error);
  std::filesystem::create_directory(dir / "sub");
  std::filesystem::create_directory(dir / "sub/inner");
  const std::string e = tide::test::error_of([&] { io::save_safetensors(dir / "sub", small); });
  CHECK(contains(e, "torch.save: " + (dir / "sub") + ": cannot replace the file: "));
  CHECK(values(io::load_safetensors(path).tensors[0].second) == std::vector<double>{-3, -2});
  CHECK(dir.entries() == 2);  // model.safetensors and sub: no temporary file left
  CHECK(contains(tide::test::error_of([&] { io::save_safetensors(dir / "missing/x.safetensors", small); }),
                 "/missing/x.safetensors: cannot create a file there: No such file or directory"));
  CHECK(contains(tide::test::error_of([&] { io::load_safetensors(dir / "none.safetensors"); }),
                 "torch.load: " + (dir / "none.safetensors") + ": cannot open file: No such file or directory"));
  CHECK(contains(tide::test::error_of([&] { io::load_safetensors(dir / "sub"); }), ": not a regular file"));
}
