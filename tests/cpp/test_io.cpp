// .npy / .npz / loadtxt parsers on in-memory buffers: round trips, NumPy's layout details,
// and hostile input (every truncation, corrupted bytes, lying headers) giving errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <zlib.h>
#include <string>
#include <vector>

#include "../../tensor/io/npy.hpp"
#include "../../tensor/io/text.hpp"
#include "../../tensor/io/zip.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::io::NamedTensor;

namespace {

// A contiguous tensor of the given shape whose element k is k * scale (cast to the dtype).
Tensor iota(const Dims& shape, DType dt, double scale = 1.0) {
  Tensor t = Tensor::empty(shape, dt);
  TIDE_DISPATCH_ALL(dt, "iota", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t k = 0; k < t.numel(); ++k) {
      if constexpr (std::is_same_v<scalar_t, bool>) p[k] = k % 3 == 1;
      else p[k] = scalar_t(compute_t<scalar_t>(double(k % 100) * scale - (std::is_signed_v<compute_t<scalar_t>> ? 7 : 0)));
    }
  });
  return t;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.is_contiguous() && b.is_contiguous() &&
         (a.nbytes() == 0 || std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0);
}

Tensor load1(const std::string& bytes) {
  io::Loaded l = io::load_bytes(bytes.data(), bytes.size(), "mem.npy");
  REQUIRE_FALSE(l.is_npz);
  return l.tensor;
}

// The message with which loading these bytes fails.
std::string error_of(const std::string& bytes) {
  return tide::test::error_of([&] { io::load_bytes(bytes.data(), bytes.size(), "bad.npy"); });
}

// A .npy file from a header dict and raw data bytes, padded as NumPy pads.
std::string npy_file(std::string dict, const std::string& data, int version = 1) {
  size_t prefix = version == 1 ? 10 : 12;
  size_t hlen = dict.size() + 1;
  dict.append(64 - (prefix + hlen) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += char(version);
  out += '\0';
  for (size_t k = 0; k < (version == 1 ? 2u : 4u); ++k) out += char((dict.size() >> (8 * k)) & 0xff);
  return out + dict + data;
}

const DType kNumpyDTypes[] = {DType::Bool,    DType::UInt8,   DType::Int8,    DType::Int16,  DType::Int32,
                              DType::Int64,   DType::Float16, DType::Float32, DType::Float64, DType::UInt16,
                              DType::UInt32,  DType::UInt64};

}  // namespace

TEST_CASE("npy: round trip of every dtype and shape") {
  for (DType dt : kNumpyDTypes) {
    for (const Dims& shape : {Dims{}, Dims{0}, Dims{5}, Dims{2, 3}, Dims{2, 0, 3}, Dims{3, 1, 4, 2}}) {
      CAPTURE(dtype_name(dt));
      CAPTURE(shape.str());
      Tensor t = iota(shape, dt, 0.5);
      std::string bytes = io::save_npy_bytes(t);
      Tensor u = load1(bytes);
      CHECK(same_bytes(t, u));
    }
  }
}

TEST_CASE("npy: header layout matches NumPy") {
  std::string b = io::save_npy_bytes(iota({3, 4}, DType::Float64));
  REQUIRE(b.size() == 128 + 96);
  CHECK(b.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
  CHECK(b[8] == 118);
  CHECK(b.substr(10, 59) == "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }");
  CHECK(b[127] == '\n');
  CHECK(io::save_npy_bytes(iota({}, DType::Bool)).find("'descr': '|b1', 'fortran_order': False, 'shape': (), }") !=
        std::string::npos);
  CHECK(io::save_npy_bytes(iota({7}, DType::Int8)).find("'shape': (7,), }") != std::string::npos);
  for (DType dt : kNumpyDTypes) CHECK(io::save_npy_bytes(iota({2}, dt)).size() % 64 == 2 * dtype_size(dt) % 64);
}

TEST_CASE("npy: bfloat16 is refused with a hint") {
  CHECK_THROWS_WITH_AS(io::save_npy_bytes(iota({2}, DType::BFloat16)),
                       "np.save: bfloat16 has no NumPy dtype; convert with x:float()", tide::Error);
  CHECK_THROWS_AS(io::save_npz_bytes({{"w", iota({2}, DType::BFloat16)}}, false), tide::Error);
}

TEST_CASE("npy: a non-contiguous tensor is saved as its contiguous copy") {
  Tensor t = iota({3, 4}, DType::Int32);
  Tensor tt = t.as_strided({4, 3}, {1, 4}, 0);  // the transpose
  Tensor u = load1(io::save_npy_bytes(tt));
  REQUIRE(u.sizes() == Dims{4, 3});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) CHECK(u.data<int32_t>()[i * 3 + j] == t.data<int32_t>()[j * 4 + i]);
  Tensor col = t.as_strided({3}, {4}, 1);  // column 1
  Tensor c = load1(io::save_npy_bytes(col));
  CHECK(c.data<int32_t>()[2] == t.data<int32_t>()[9]);
}

TEST_CASE("npy: big-endian, Fortran order, bool bytes, unsigned widening, v2/v3 headers") {
  SUBCASE("big-endian int32 and float64") {
    std::string data("\x00\x00\x00\x01\xff\xff\xff\xfe", 8);
    Tensor t = load1(npy_file("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", data));
    CHECK(t.dtype() == DType::Int32);
    CHECK(t.data<int32_t>()[0] == 1);
    CHECK(t.data<int32_t>()[1] == -2);
    std::string d8("\x3f\xf8\0\0\0\0\0\0", 8);  // 1.5
    CHECK(load1(npy_file("{'descr': '>f8', 'fortran_order': False, 'shape': (), }", d8)).data<double>()[0] == 1.5);
  }
  SUBCASE("fortran order") {
    int16_t col_major[6] = {1, 4, 2, 5, 3, 6};  // [[1,2,3],[4,5,6]]
    Tensor t = load1(npy_file("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }",
                              std::string(reinterpret_cast<char*>(col_major), 12)));
    REQUIRE(t.sizes() == Dims{2, 3});
    for (int k = 0; k < 6; ++k) CHECK(t.data<int16_t>()[k] == k + 1);
  }
  SUBCASE("bool bytes other than 0/1 are true") {
    Tensor t = load1(npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\0\2\1", 3)));
    CHECK(t.dtype() == DType::Bool);
    CHECK(reinterpret_cast<uint8_t*>(t.data_ptr())[1] == 1);
  }
  SUBCASE("uint16, uint32 and uint64 (big-endian too)") {
    Tensor t = load1(npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", std::string("\xff\xfe", 2)));
    CHECK(t.dtype() == DType::UInt16);
    CHECK(t.data<uint16_t>()[0] == 0xfeff);
    Tensor u = load1(npy_file("{'descr': '>u4', 'fortran_order': False, 'shape': (1,), }", std::string("\xff\xff\xff\xfe", 4)));
    CHECK(u.dtype() == DType::UInt32);
    CHECK(u.data<uint32_t>()[0] == 4294967294u);
    Tensor w = load1(npy_file("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\xff')));
    CHECK(w.dtype() == DType::UInt64);
    CHECK(w.data<uint64_t>()[0] == UINT64_MAX);
  }
  SUBCASE("format 2.0 and 3.0") {
    for (int v : {2, 3}) {
      Tensor t = load1(npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", "\x07\x08", v));
      CHECK(t.data<uint8_t>()[1] == 8);
    }
  }
  SUBCASE("header spellings") {
    auto h = io::parse_npy_header("{\"shape\": (3L, 2L,), \"descr\": \"<f4\", \"fortran_order\": False}", "x");
    CHECK(h.shape == Dims{3, 2});
    CHECK(h.dtype == DType::Float32);
  }
}

TEST_CASE("npy: bad headers are errors naming the op and the file") {
  auto bad = [](const std::string& dict) {
    return error_of(npy_file(dict, std::string(64, '\0')));
  };
  CHECK(bad("{'descr': '<c32', 'fortran_order': False, 'shape': (1,), }").find("unsupported dtype '<c32'") !=
        std::string::npos);
  CHECK(bad("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }").find("pickle") != std::string::npos);
  CHECK(bad("{'descr': '<u3', 'fortran_order': False, 'shape': (1,), }").find("unsupported dtype '<u3'") !=
        std::string::npos);
  CHECK(bad("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }").find("structured") !=
        std::string::npos);
  CHECK(bad("{'descr': '<f4', 'shape': (1,), }").find("malformed") != std::string::npos);
  CHECK(bad("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }").find("malformed") != std::string::npos);
  CHECK(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }").find("malformed") != std::string::npos);
  CHECK(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }")
            .find("more than 16 dims") != std::string::npos);
  CHECK(bad("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }").find("too large") !=
        std::string::npos);
  CHECK(bad("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")
            .find("shape {4294967296,4294967296} of float64 is too large (its byte size or strides would pass 2^63-1)") !=
        std::string::npos);
  std::string e = bad("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }");
  CHECK(e.rfind("np.load: bad.npy: truncated .npy data", 0) == 0);
  CHECK(error_of("\x93NUMPX\x01\x00\x00\x00").find("not a .npy file") != std::string::npos);
  CHECK(error_of(std::string("\x93NUMPY\x04\x00\x00\x00xx", 12)).find("version 4.0") != std::string::npos);
  std::string huge("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  CHECK(error_of(huge + "{").find("exceeds the limit") != std::string::npos);
  CHECK(error_of("").find("empty") != std::string::npos);
  CHECK(error_of("hello world").find("not a .npy file or .npz archive") != std::string::npos);
}

TEST_CASE("npy/npz: every truncation is an error, never a crash") {
  Tensor a = iota({3, 5}, DType::Float32), b = iota({4}, DType::Int64);
  std::vector<std::string> files = {io::save_npy_bytes(a), io::save_npz_bytes({{"a", a}, {"b", b}}, false),
                                    io::save_npz_bytes({{"a", a}, {"b", b}}, true)};
  for (const std::string& f : files) {
    for (size_t n = 0; n < f.size(); ++n) {
      CAPTURE(n);
      std::string cut = f.substr(0, n);
      CHECK_THROWS_AS(io::load_bytes(cut.data(), cut.size(), "cut"), tide::Error);
    }
  }
}

TEST_CASE("npz: round trip, stored and compressed, and corruption is caught") {
  Tensor a = iota({3, 5}, DType::Float32), b = iota({4}, DType::Int64), c = iota({}, DType::Bool);
  for (bool compressed : {false, true}) {
    CAPTURE(compressed);
    std::string z = io::save_npz_bytes({{"a", a}, {"bee", b}, {"c", c}}, compressed);
    io::Loaded l = io::load_bytes(z.data(), z.size(), "mem.npz");
    REQUIRE(l.is_npz);
    REQUIRE(l.members.size() == 3);
    CHECK(l.members[0].first == "a");
    CHECK(l.members[1].first == "bee");
    CHECK(same_bytes(l.members[0].second, a));
    CHECK(same_bytes(l.members[1].second, b));
    CHECK(same_bytes(l.members[2].second, c));
    // Flip each byte in turn: either an error or a successful load, never a crash. Flips
    // inside the array data must be caught by the CRC.
    size_t data_errors = 0;
    for (size_t k = 0; k < z.size(); ++k) {
      std::string bad = z;
      bad[k] = char(bad[k] ^ 0x5a);
      try {
        io::load_bytes(bad.data(), bad.size(), "flip.npz");
      } catch (const tide::Error&) {
        ++data_errors;
      }
    }
    CHECK(data_errors > z.size() / 2);
  }
  SUBCASE("a flipped data byte in a stored member fails the CRC") {
    std::string z = io::save_npz_bytes({{"a", a}}, false);
    z[30 + 5 + 128 + 3] ^= 1;  // local header + "a.npy" + npy header + 3 bytes into the data
    io::Loaded l;
    CHECK_THROWS_WITH_AS(io::load_bytes(z.data(), z.size(), "crc.npz"),
                         "np.load: crc.npz member 'a.npy': CRC-32 mismatch: the data is corrupt", tide::Error);
  }
  SUBCASE("empty archive") {
    std::string z = io::save_npz_bytes({}, false);
    CHECK(z.size() == 22);
    io::Loaded l = io::load_bytes(z.data(), z.size(), "e.npz");
    CHECK(l.is_npz);
    CHECK(l.members.empty());
  }
  SUBCASE("duplicate names are refused") {
    CHECK_THROWS_AS(io::save_npz_bytes({{"a", a}, {"a", b}}, false), tide::Error);
  }
}

TEST_CASE("npz: lying sizes and zip64 are errors") {
  Tensor a = iota({64}, DType::Float64);
  std::string z = io::save_npz_bytes({{"a", a}}, true);
  const size_t cd = z.size() - 22 - (46 + 5);  // the only central directory entry
  REQUIRE(z.compare(cd, 4, "PK\x01\x02") == 0);
  SUBCASE("a decompression bomb declaration") {
    std::string bad = z;
    std::memcpy(&bad[cd + 24], "\x00\x00\x00\x7f", 4);  // uncompressed size ~2 GiB
    std::string e;
    try {
      io::load_bytes(bad.data(), bad.size(), "bomb.npz");
    } catch (const tide::Error& err) {
      e = err.what();
    }
    CHECK(e.find("cannot hold") != std::string::npos);
  }
  SUBCASE("compressed size past the archive") {
    std::string bad = z;
    std::memcpy(&bad[cd + 20], "\x00\x00\x01\x00", 4);
    CHECK_THROWS_AS(io::load_bytes(bad.data(), bad.size(), "x.npz"), tide::Error);
  }
  SUBCASE("zip64 markers") {
    std::string bad = z;
    std::memcpy(&bad[z.size() - 22 + 10], "\xff\xff", 2);
    std::string e;
    try {
      io::load_bytes(bad.data(), bad.size(), "z64.npz");
    } catch (const tide::Error& err) {
      e = err.what();
    }
    CHECK(e.find("zip64") != std::string::npos);
  }
}

// An archive past 4 GiB without the memory or the disk: writes of 1 MiB and more are taken to
// be zeros (the test writes only zeros that large) and not kept, smaller writes and patches are
// kept; reading gives zeros between.
class SparseArchive : public io::Output, public io::ByteSource {
 public:
  void write(const void* p, size_t n) override {
    if (n < (1u << 20)) kept_[end_] = std::string(static_cast<const char*>(p), n);
    end_ += n;
    size_ = end_;
  }
  uint64_t tell() const override { return end_; }
  void patch(uint64_t off, const void* p, size_t n) override {
    REQUIRE(n < 64);
    kept_[off] = std::string(static_cast<const char*>(p), n);
  }

 protected:
  void read_bytes(uint64_t off, void* dst, size_t n) override {
    char* out = static_cast<char*>(dst);
    std::memset(out, 0, n);
    for (const auto& [at, bytes] : kept_)  // later patches win: a map orders by offset, patches are 4-16 bytes
      for (size_t k = 0; k < bytes.size(); ++k)
        if (at + k >= off && at + k < off + n) out[at + k - off] = bytes[k];
  }

 private:
  std::map<uint64_t, std::string> kept_;
  uint64_t end_ = 0;
};

TEST_CASE("zip writer: a member past 4 GiB gets zip64 sizes, the next one a zip64 offset") {
  SparseArchive ar;
  io::ZipWriter zip(ar, "big.zip", 64);
  const uint64_t big = (uint64_t(1) << 32) + 4096;
  std::vector<char> zeros(size_t(1) << 26, 0);
  zip.begin("archive/data/0", big, false);
  uint32_t crc = 0;
  for (uint64_t left = big; left > 0;) {
    const size_t n = size_t(std::min<uint64_t>(left, zeros.size()));
    zip.write(zeros.data(), n);
    crc = uint32_t(crc32_z(crc, reinterpret_cast<const Bytef*>(zeros.data()), n));
    left -= n;
  }
  zip.end();
  zip.begin("archive/version", 2, false);
  zip.write("3\n", 2);
  zip.end();
  zip.finish();
  std::vector<io::ZipMember> members = io::read_central_directory(ar, "big.zip", "zip");
  REQUIRE(members.size() == 2);
  CHECK(members[0].name == "archive/data/0");
  CHECK(members[0].uncomp == big);
  CHECK(members[0].comp == big);
  CHECK(members[0].crc == crc);
  CHECK(members[0].local_off % 64 == 0);
  CHECK(members[1].local_off > (uint64_t(1) << 32));
  CHECK(members[1].local_off % 64 == 0);
  char version[2];
  io::read_member_bytes(ar, members[1], version, "big.zip");
  CHECK(std::string(version, 2) == "3\n");
}

TEST_CASE("loadtxt: shapes, options and errors") {
  using io::loadtxt_string;
  io::LoadtxtOptions csv;
  csv.delimiter = ',';
  Tensor t = loadtxt_string("# header\n1,2,3\n4, 5 ,6\r\n\n7,8,9", csv);
  REQUIRE(t.sizes() == Dims{3, 3});
  CHECK(t.dtype() == DType::Float64);
  CHECK(t.data<double>()[4] == 5);
  CHECK(t.data<double>()[8] == 9);
  CHECK(loadtxt_string("1 2 3\n").sizes() == Dims{3});
  CHECK(loadtxt_string("1\n2\n").sizes() == Dims{2});
  CHECK(loadtxt_string("5").sizes() == Dims{});
  CHECK(loadtxt_string("").sizes() == Dims{0});
  io::LoadtxtOptions o;
  o.ndmin = 2;
  CHECK(loadtxt_string("1\n2\n", o).sizes() == Dims{2, 1});
  CHECK(loadtxt_string("1 2\n", o).sizes() == Dims{1, 2});
  o.ndmin = 1;
  CHECK(loadtxt_string("5", o).sizes() == Dims{1});

  io::LoadtxtOptions u;
  u.usecols = {-1, 0};
  u.skiprows = 1;
  u.max_rows = 2;
  u.dtype = DType::Int32;
  Tensor v = loadtxt_string("a b c\n1 2 3\n4 5 6\n7 8 9\n", u);
  REQUIRE(v.sizes() == Dims{2, 2});
  CHECK(v.dtype() == DType::Int32);
  CHECK(v.data<int32_t>()[0] == 3);
  CHECK(v.data<int32_t>()[3] == 4);

  Tensor s = loadtxt_string("+1.5 -inf nan 1e400 2.0e-3\n");
  CHECK(s.data<double>()[0] == 1.5);
  CHECK(std::isinf(s.data<double>()[1]));
  CHECK(std::isnan(s.data<double>()[2]));
  CHECK(std::isinf(s.data<double>()[3]));
  CHECK(s.data<double>()[4] == 0.002);

  CHECK_THROWS_WITH_AS(loadtxt_string("1,2\n3,x\n", csv, "f.csv"),
                       "np.loadtxt: f.csv line 2, column 2: could not convert 'x' to float64", tide::Error);
  CHECK_THROWS_WITH_AS(loadtxt_string("1,2\n3\n", csv, "f.csv"),
                       "np.loadtxt: f.csv line 2: found 1 columns, but the rows before have 2 (use usecols to read a "
                       "subset)",
                       tide::Error);
  CHECK_THROWS_WITH_AS(loadtxt_string("1,2,\n", csv, "f.csv"),
                       "np.loadtxt: f.csv line 1, column 3: could not convert '' to float64", tide::Error);
  io::LoadtxtOptions i8;
  i8.dtype = DType::Int8;
  CHECK_THROWS_WITH_AS(loadtxt_string("1 300\n", i8, "f"), "np.loadtxt: f line 1, column 2: 300 is out of range for int8",
                       tide::Error);
  CHECK_THROWS_AS(loadtxt_string("1.5\n", i8, "f"), tide::Error);
  CHECK(loadtxt_string("3.0 -4\n", i8).data<int8_t>()[1] == -4);
  io::LoadtxtOptions uc;
  uc.usecols = {5};
  CHECK_THROWS_WITH_AS(loadtxt_string("1 2\n", uc, "f"),
                       "np.loadtxt: f line 1: usecols asks for column 6, but the line has 2 columns", tide::Error);
  // Found by the file fuzzer: the 1-based column of the message overflowed (UBSan).
  uc.usecols = {INT64_MAX};
  CHECK_THROWS_WITH_AS(loadtxt_string("1 2\n", uc, "f"),
                       "np.loadtxt: f line 1: usecols asks for column 9223372036854775808, but the line has 2 columns",
                       tide::Error);
  uc.usecols = {INT64_MIN};
  CHECK_THROWS_WITH_AS(loadtxt_string("1 2\n", uc, "f"),
                       "np.loadtxt: f line 1: usecols asks for column -9223372036854775808, but the line has 2 columns",
                       tide::Error);
}

TEST_CASE("savetxt: formats") {
  Tensor t = iota({2, 2}, DType::Float64, 1.5);  // -7, -5.5, -4, -2.5
  io::SavetxtOptions o;
  CHECK(io::savetxt_string(t, o) ==
        "-7.000000000000000000e+00 -5.500000000000000000e+00\n-4.000000000000000000e+00 -2.500000000000000000e+00\n");
  o.fmt = std::string("%d");
  o.delimiter = std::string(",");
  o.header = std::string("x\ny");
  CHECK(io::savetxt_string(t, o) == "# x\n# y\n-7,-5\n-4,-2\n");
  o.fmt = "%.1f|%5.2f%%";
  o.header.clear();
  CHECK(io::savetxt_string(t, o) == "-7.0|-5.50%\n-4.0|-2.50%\n");
  o.fmt = "%s";
  CHECK_THROWS_AS(io::savetxt_string(t, o), tide::Error);
  o.fmt = "%n";
  CHECK_THROWS_AS(io::savetxt_string(t, o), tide::Error);
  o.fmt = "%.3f %.3f %.3f";
  CHECK_THROWS_AS(io::savetxt_string(t, o), tide::Error);
  // A round trip through text.
  io::SavetxtOptions def;
  Tensor back = io::loadtxt_string(io::savetxt_string(t, def));
  CHECK(std::memcmp(back.data_ptr(), t.data_ptr(), t.nbytes()) == 0);
}
