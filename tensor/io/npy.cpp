// .npy and .npz reading and writing (see npy.hpp for what is accepted and guaranteed).
//
// The layers, bottom up:
//   ByteSource  random-access bytes (a file through pread, or a memory buffer; file_io.hpp)
//   Reader  sequential bytes of one .npy payload: a plain range of a ByteSource, or a deflate
//           stream inflated on the fly; both keep the CRC-32 of what they produced
//   decode  a .npy payload from a Reader into a tensor (header checks before allocation)
//   zip     the central directory of an archive, checked against the archive's size
// and the same on the way out: Output (file or string), npy header + data, zip records.
#include "npy.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

#include "file_io.hpp"
#include "zip.hpp"

namespace tide::io {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";  // 6 bytes
constexpr size_t kNpyMagicLen = 6;
constexpr bool kHostLittle = std::endian::native == std::endian::little;
constexpr size_t kChunk = 1 << 16;
// Deflate cannot expand more than 1032:1, so a member declaring more than that is lying.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint16_t rd16(const unsigned char* p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t rd32(const unsigned char* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
uint64_t rd64(const unsigned char* p) { return uint64_t(rd32(p)) | (uint64_t(rd32(p + 4)) << 32); }
void wr16(std::string& s, uint16_t v) {
  s.push_back(char(v & 0xff));
  s.push_back(char(v >> 8));
}
void wr32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(char((v >> (8 * i)) & 0xff));
}

uint32_t crc_update(uint32_t crc, const void* p, size_t n) {
  return uint32_t(crc32_z(crc, static_cast<const Bytef*>(p), n));
}

// ---------------------------------------------------------------------------------------
// Readers of one payload

class Reader {
 public:
  virtual ~Reader() = default;
  // Reads exactly n bytes; n <= remaining() (callers check, with a message, first).
  virtual void read(void* dst, size_t n) = 0;
  uint64_t remaining() const { return remaining_; }
  uint32_t crc() const { return crc_; }
  // Consumes what is left (to complete the CRC) and checks the payload ends where declared.
  virtual void finish() {
    char buf[4096];
    while (remaining_ > 0) read(buf, size_t(std::min<uint64_t>(remaining_, sizeof buf)));
  }

 protected:
  uint64_t remaining_ = 0;
  uint32_t crc_ = 0;
};

class RangeReader : public Reader {
 public:
  RangeReader(ByteSource& in, uint64_t off, uint64_t len) : in_(in), pos_(off) { remaining_ = len; }
  void read(void* dst, size_t n) override {
    TIDE_ASSERT(n <= remaining_);
    in_.read_at(pos_, dst, n);
    crc_ = crc_update(crc_, dst, n);
    pos_ += n;
    remaining_ -= n;
  }

 private:
  ByteSource& in_;
  uint64_t pos_;
};

class InflateReader : public Reader {
 public:
  InflateReader(ByteSource& in, uint64_t off, uint64_t comp_len, uint64_t uncomp_len, std::string where)
      : in_(in), pos_(off), comp_left_(comp_len), where_(std::move(where)), buf_(kChunk) {
    remaining_ = uncomp_len;
    std::memset(&zs_, 0, sizeof zs_);
    if (inflateInit2(&zs_, -15) != Z_OK) fail_at(where_, "cannot initialise zlib");
  }
  ~InflateReader() override { inflateEnd(&zs_); }

  void read(void* dst, size_t n) override {
    TIDE_ASSERT(n <= remaining_);
    unsigned char* out = static_cast<unsigned char*>(dst);
    size_t left = n;
    while (left > 0) {
      uInt want = uInt(std::min<size_t>(left, size_t(1) << 30));
      zs_.next_out = out;
      zs_.avail_out = want;
      while (zs_.avail_out > 0) {
        refill();
        int ret = inflate(&zs_, Z_NO_FLUSH);
        if (ret == Z_STREAM_END && zs_.avail_out > 0)
          fail_at(where_, "compressed data ends before the ", remaining_, " bytes its entry declares");
        check(ret);
      }
      crc_ = crc_update(crc_, out, want);
      out += want;
      left -= want;
      remaining_ -= want;
    }
  }

  void finish() override {
    Reader::finish();
    // The stream must end here: one more byte of output means the entry lied about its size.
    unsigned char extra;
    for (;;) {
      zs_.next_out = &extra;
      zs_.avail_out = 1;
      refill();
      int ret = inflate(&zs_, Z_NO_FLUSH);
      if (zs_.avail_out == 0) fail_at(where_, "decompressed data is longer than its entry declares");
      if (ret == Z_STREAM_END) return;
      check(ret);
    }
  }

 private:
  void refill() {
    if (zs_.avail_in > 0 || comp_left_ == 0) return;
    size_t n = size_t(std::min<uint64_t>(comp_left_, buf_.size()));
    in_.read_at(pos_, buf_.data(), n);
    pos_ += n;
    comp_left_ -= n;
    zs_.next_in = buf_.data();
    zs_.avail_in = uInt(n);
  }
  void check(int ret) {
    if (ret == Z_OK || ret == Z_STREAM_END) return;
    if (ret == Z_BUF_ERROR && zs_.avail_in == 0 && comp_left_ == 0)
      fail_at(where_, "compressed data is truncated");
    if (ret == Z_BUF_ERROR) return;  // no progress possible yet: refill and go on
    if (ret == Z_MEM_ERROR) throw OutOfMemory(where_ + ": out of memory while decompressing");
    fail_at(where_, "corrupt compressed data (", zs_.msg ? zs_.msg : "zlib error", ")");
  }

  ByteSource& in_;
  uint64_t pos_, comp_left_;
  std::string where_;
  std::vector<unsigned char> buf_;
  z_stream zs_;
};

// ---------------------------------------------------------------------------------------
// Strided walking (writing non-contiguous tensors, Fortran-order loading)

// Calls sink(ptr, nbytes) over the bytes of t in row-major order, in runs as long as the
// layout allows.
template <typename F>
void for_each_run(const Tensor& t, F&& sink) {
  int64_t numel = t.numel();
  if (numel == 0) return;
  const size_t item = t.itemsize();
  const char* base = static_cast<const char*>(t.data_ptr());
  int d = t.dim() - 1;
  int64_t run = 1;
  for (; d >= 0; --d) {
    if (t.size(d) != 1 && t.stride(d) != run) break;
    run *= t.size(d);
  }
  if (d < 0) {
    sink(base, size_t(numel) * item);
    return;
  }
  int64_t idx[kMaxDims] = {0};
  int64_t off = 0;
  const size_t run_bytes = size_t(run) * item;
  for (int64_t outer = numel / run; outer > 0; --outer) {
    sink(base + off * int64_t(item), run_bytes);
    for (int k = d; k >= 0; --k) {
      off += t.stride(k);
      if (++idx[k] < t.size(k)) break;
      off -= t.stride(k) * t.size(k);
      idx[k] = 0;
    }
  }
}

void copy_to_contiguous(const Tensor& view, void* dst) {
  char* out = static_cast<char*>(dst);
  for_each_run(view, [&](const char* p, size_t n) {
    std::memcpy(out, p, n);
    out += n;
  });
}


// ---------------------------------------------------------------------------------------
// .npy header text

struct HeaderParser {
  const std::string& s;
  const std::string& where;
  size_t i = 0;

  [[noreturn]] void bad(const std::string& what) {
    std::string shown = quote_user(s);
    for (char& c : shown)
      if (c == '\n' || c == '\0') c = ' ';
    fail_at(where, "malformed .npy header (", what, "): ", shown);
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) bad(std::string("expected '") + c + "'");
  }
  std::string str() {
    ws();
    if (i < s.size() && (s[i] == 'u' || s[i] == 'b')) ++i;  // Python 2 style u'...'
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) bad("expected a quoted string");
    char q = s[i++];
    size_t start = i;
    while (i < s.size() && s[i] != q) {
      if (s[i] == '\\') bad("escapes in strings are not supported");
      ++i;
    }
    if (i >= s.size()) bad("unterminated string");
    return s.substr(start, i++ - start);
  }
  bool boolean() {
    ws();
    if (s.compare(i, 4, "True") == 0) {
      i += 4;
      return true;
    }
    if (s.compare(i, 5, "False") == 0) {
      i += 5;
      return false;
    }
    bad("fortran_order must be True or False");
  }
  int64_t integer() {
    ws();
    if (i >= s.size() || s[i] < '0' || s[i] > '9') bad("shape must be a tuple of non-negative integers");
    int64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (__builtin_mul_overflow(v, int64_t(10), &v) || __builtin_add_overflow(v, int64_t(s[i] - '0'), &v))
        fail_at(where, "shape size in the .npy header is too large");
      ++i;
    }
    if (i < s.size() && (s[i] == 'L' || s[i] == 'l')) ++i;  // Python 2 longs
    return v;
  }
  Dims shape() {
    expect('(');
    std::vector<int64_t> v;
    if (!eat(')')) {
      for (;;) {
        v.push_back(integer());
        if (v.size() > size_t(kMaxDims))
          fail_at(where, "array has more than ", kMaxDims, " dims, which tide does not support");
        if (eat(')')) break;
        expect(',');
        if (eat(')')) break;
      }
    }
    return Dims(v);
  }
};

[[noreturn]] void unsupported_dtype(const std::string& where, const std::string& descr, const char* why) {
  fail_at(where, "unsupported dtype '", quote_user(descr), "'", why,
          " (tide reads bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, float32, "
          "float64)");
}

void set_dtype_from_descr(NpyHeader& h, const std::string& descr, const std::string& where) {
  auto unsupported = [&](const char* why) { unsupported_dtype(where, descr, why); };
  if (descr.empty()) unsupported("");
  size_t p = 0;
  char order = '=';
  if (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=') order = descr[p++];
  if (p >= descr.size()) unsupported("");
  char kind = descr[p++];
  if (kind == '?') kind = 'b';  // '?' is another spelling of bool
  if (kind == 'O') unsupported(": object arrays need pickle, which tide does not read");
  std::string digits = descr.substr(p);
  int size = 0;
  if (digits.empty() && kind == 'b') size = 1;
  if (!digits.empty()) {
    if (digits.size() > 2) unsupported("");
    for (char c : digits) {
      if (c < '0' || c > '9') unsupported("");
      size = size * 10 + (c - '0');
    }
  }
  DType dt = DType::Float64;
  switch (kind) {
    case 'b':
      if (size != 1) unsupported("");
      dt = DType::Bool;
      break;
    case 'u':
      if (size == 1) dt = DType::UInt8;
      else if (size == 2) dt = DType::UInt16;
      else if (size == 4) dt = DType::UInt32;
      else if (size == 8) dt = DType::UInt64;
      else unsupported("");
      break;
    case 'i':
      if (size == 1) dt = DType::Int8;
      else if (size == 2) dt = DType::Int16;
      else if (size == 4) dt = DType::Int32;
      else if (size == 8) dt = DType::Int64;
      else unsupported("");
      break;
    case 'f':
      if (size == 2) dt = DType::Float16;
      else if (size == 4) dt = DType::Float32;
      else if (size == 8) dt = DType::Float64;
      else unsupported("");
      break;
    case 'c':
      if (size == 8) dt = DType::Complex64;
      else if (size == 16) dt = DType::Complex128;
      else unsupported("");
      break;
    default: unsupported_dtype(where, descr, "");
  }
  h.dtype = dt;
  h.kind = kind;
  h.file_itemsize = size;
  bool little = order == '<' || ((order == '=' || order == '|') && kHostLittle);
  h.byteswap = size > 1 && little != kHostLittle;
}

// The DType the raw bytes are read as (bool is read as bytes, then normalised).
DType raw_dtype(const NpyHeader& h) { return h.kind == 'b' ? DType::UInt8 : h.dtype; }

inline uint16_t bswap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t bswap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t bswap(uint64_t v) { return __builtin_bswap64(v); }

template <typename T>
void byteswap_n(void* data, int64_t n) {
  T* p = static_cast<T*>(data);
  for (int64_t k = 0; k < n; ++k) p[k] = bswap(p[k]);
}

// Reads a .npy payload's magic and header from r (which is left at the data) and checks
// that the data the header declares fits in what follows. Returns the header and the
// data's size in bytes.
std::pair<NpyHeader, uint64_t> read_npy_header(Reader& r, const std::string& where) {
  const uint64_t total = r.remaining();
  unsigned char pre[8];
  if (total < 10) {
    if (total >= kNpyMagicLen) {
      r.read(pre, kNpyMagicLen);
      if (std::memcmp(pre, kNpyMagic, kNpyMagicLen) != 0) fail_at(where, "not a .npy file (bad magic bytes)");
    }
    fail_at(where, "truncated .npy file (", total, " bytes, shorter than any header)");
  }
  r.read(pre, 8);
  if (std::memcmp(pre, kNpyMagic, kNpyMagicLen) != 0) fail_at(where, "not a .npy file (bad magic bytes)");
  int major = pre[6], minor = pre[7];
  uint64_t hlen;
  unsigned char lenb[4];
  if (major == 1 && minor == 0) {
    r.read(lenb, 2);
    hlen = rd16(lenb);
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (r.remaining() < 4) fail_at(where, "truncated .npy file (the header length is cut off)");
    r.read(lenb, 4);
    hlen = rd32(lenb);
  } else {
    fail_at(where, "unsupported .npy format version ", major, ".", minor, " (tide reads 1.0, 2.0 and 3.0)");
  }
  if (hlen > kMaxNpyHeader)
    fail_at(where, ".npy header length ", hlen, " exceeds the limit of ", kMaxNpyHeader, " bytes");
  if (hlen > r.remaining())
    fail_at(where, "truncated .npy file (header of ", hlen, " bytes, but only ", r.remaining(), " bytes follow)");
  std::string text(size_t(hlen), '\0');
  r.read(text.data(), text.size());
  NpyHeader h = parse_npy_header(text, where);

  check_extent(where.c_str(), h.shape, h.dtype);
  const uint64_t numel = uint64_t(shape_numel(h.shape));
  const uint64_t nbytes = numel * uint64_t(h.file_itemsize);
  if (nbytes > r.remaining())
    fail_at(where, "truncated .npy data: shape ", h.shape.str(), " of ", dtype_name(h.dtype), " needs ", nbytes,
            " bytes, but only ", r.remaining(), " bytes follow the header");
  return {std::move(h), nbytes};
}

// The strides of a Fortran-order array of this shape (the C order of the reversed shape).
Dims fortran_strides(const Dims& shape) {
  Dims layout = shape;
  std::reverse(layout.begin(), layout.end());
  const Dims rstrides = contiguous_strides(layout);
  const int nd = shape.size();
  Dims strides(nd, 0);
  for (int k = 0; k < nd; ++k) strides[k] = rstrides[nd - 1 - k];
  return strides;
}

// Reads a whole .npy payload (magic, header, data) from r.
Tensor decode_npy(Reader& r, const std::string& where) {
  const auto [h, nbytes] = read_npy_header(r, where);
  const uint64_t numel = uint64_t(shape_numel(h.shape));
  const int nd = h.shape.size();
  const bool fortran = h.fortran_order && nd >= 2;
  Dims layout = h.shape;
  if (fortran) std::reverse(layout.begin(), layout.end());
  Tensor raw = Tensor::empty(layout, raw_dtype(h));
  if (nbytes) r.read(raw.data_ptr(), size_t(nbytes));
  const int64_t n = int64_t(numel);

  if (h.byteswap) {
    // A complex item is two floats, each swapped on its own.
    const int64_t words = h.kind == 'c' ? 2 * n : n, word = h.kind == 'c' ? h.file_itemsize / 2 : h.file_itemsize;
    if (word == 2) byteswap_n<uint16_t>(raw.data_ptr(), words);
    else if (word == 4) byteswap_n<uint32_t>(raw.data_ptr(), words);
    else if (word == 8) byteswap_n<uint64_t>(raw.data_ptr(), words);
  }
  Tensor arr = raw;
  if (h.kind == 'b') {  // any nonzero byte is true; a C++ bool must hold exactly 0 or 1
    unsigned char* p = raw.data<unsigned char>();
    for (int64_t k = 0; k < n; ++k) p[k] = p[k] != 0;
    arr = Tensor::make_view(raw.storage(), raw.sizes(), raw.strides(), 0, DType::Bool);
  }
  if (!fortran) return arr;
  // Fortran order: the data is the C-order array of the reversed shape; read it transposed.
  Tensor view = Tensor::make_view(arr.storage(), h.shape, fortran_strides(h.shape), 0, arr.dtype());
  Tensor out = Tensor::empty(h.shape, arr.dtype());
  copy_to_contiguous(view, out.data_ptr());
  return out;
}

// ---------------------------------------------------------------------------------------
// .npz (zip) reading

}  // namespace

std::vector<ZipMember> read_central_directory(ByteSource& in, const std::string& where, const char* kind) {
  const std::string archive = std::string(kind) + " archive";
  const uint64_t size = in.size();
  if (size < 22) fail_at(where, "not a valid ", archive, " (", size, " bytes, too short for a zip file)");
  const uint64_t tail = std::min<uint64_t>(size, 22 + 65535);
  std::vector<unsigned char> buf(tail);
  in.read_at(size - tail, buf.data(), tail);
  int64_t eocd = -1;
  for (int64_t k = int64_t(tail) - 22; k >= 0; --k) {
    const unsigned char* p = buf.data() + k;
    if (rd32(p) == 0x06054b50 && uint64_t(k) + 22 + rd16(p + 20) <= tail) {
      eocd = k;
      break;
    }
  }
  if (eocd < 0)
    fail_at(where, "not a valid ", archive, " (no zip end-of-central-directory record; the file may be truncated)");
  const unsigned char* e = buf.data() + eocd;
  const uint64_t eocd_pos = size - tail + uint64_t(eocd);
  uint64_t disk = rd16(e + 4), cd_disk = rd16(e + 6), n_disk = rd16(e + 8), n_total = rd16(e + 10);
  uint64_t cd_size = rd32(e + 12), cd_off = rd32(e + 16);
  uint64_t dir_end = eocd_pos;  // the central directory lies before this
  const bool markers = n_total == 0xffff || n_disk == 0xffff || cd_size == 0xffffffffu || cd_off == 0xffffffffu;
  if (eocd >= 20 && rd32(e - 20) == 0x07064b50) {  // zip64 (PyTorch writes it for any size)
    const unsigned char* l = e - 20;
    if (rd32(l + 4) != 0 || rd32(l + 16) > 1) fail_at(where, "multi-disk zip archives are not supported");
    const uint64_t rec = rd64(l + 8);
    if (rec > eocd_pos - 20 || eocd_pos - 20 - rec < 56)
      fail_at(where, "corrupt ", archive, " (zip64 end record at ", rec, " lies outside the file)");
    unsigned char r[56];
    in.read_at(rec, r, 56);
    if (rd32(r) != 0x06064b50) fail_at(where, "corrupt ", archive, " (bad zip64 end record)");
    disk = rd32(r + 16), cd_disk = rd32(r + 20), n_disk = rd64(r + 24), n_total = rd64(r + 32);
    cd_size = rd64(r + 40), cd_off = rd64(r + 48);
    dir_end = rec;
  } else if (markers) {
    fail_at(where, "corrupt ", archive, " (zip64 markers without a zip64 end record)");
  }
  if (disk != 0 || cd_disk != 0 || n_disk != n_total)
    fail_at(where, "multi-disk zip archives are not supported");
  if (cd_size > dir_end || cd_off > dir_end - cd_size)
    fail_at(where, "corrupt ", archive, " (central directory at ", cd_off, "+", cd_size,
            " lies outside the file)");
  if (n_total > cd_size / 46)
    fail_at(where, "corrupt ", archive, " (", n_total, " members cannot fit a central directory of ", cd_size,
            " bytes)");
  std::vector<unsigned char> cd(cd_size);
  in.read_at(cd_off, cd.data(), cd_size);

  std::vector<ZipMember> members;
  members.reserve(n_total);
  size_t p = 0;
  for (unsigned k = 0; k < n_total; ++k) {
    if (p + 46 > cd.size() || rd32(&cd[p]) != 0x02014b50)
      fail_at(where, "corrupt ", archive, " (bad central directory entry ", k + 1, ")");
    const unsigned char* c = &cd[p];
    ZipMember m;
    m.flags = rd16(c + 8);
    m.method = rd16(c + 10);
    m.crc = rd32(c + 16);
    m.comp = rd32(c + 20), m.uncomp = rd32(c + 24), m.local_off = rd32(c + 42);
    size_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
    if (p + 46 + nlen + xlen + clen > cd.size())
      fail_at(where, "corrupt ", archive, " (central directory entry ", k + 1, " runs past its end)");
    m.name.assign(reinterpret_cast<const char*>(c + 46), nlen);
    // zip64: the sizes and offset marked 0xffffffff are in the extra field 0x0001, in this order.
    uint64_t* wide[3] = {&m.uncomp, &m.comp, &m.local_off};
    if (m.uncomp == 0xffffffffu || m.comp == 0xffffffffu || m.local_off == 0xffffffffu) {
      const unsigned char* x = c + 46 + nlen;
      size_t at = 0, found = 0;
      while (at + 4 <= xlen && rd16(x + at) != 0x0001) at += 4 + rd16(x + at + 2);
      if (at + 4 <= xlen) {
        const size_t len = std::min<size_t>(rd16(x + at + 2), xlen - at - 4);
        for (uint64_t* v : wide)
          if (*v == 0xffffffffu && 8 * (found + 1) <= len) *v = rd64(x + at + 4 + 8 * found++);
      }
      for (uint64_t* v : wide)
        if (*v == 0xffffffffu)
          fail_at(where, "corrupt ", archive, " (member '", quote_user(m.name), "' lacks its zip64 sizes)");
    }
    members.push_back(std::move(m));
    p += 46 + nlen + xlen + clen;
  }
  // Members' data must lie before the central directory.
  for (ZipMember& m : members) {
    const std::string mw = where + " member '" + quote_user(m.name) + "'";
    if (m.local_off > cd_off || cd_off - m.local_off < 30) fail_at(mw, "corrupt ", archive, " (local header offset out of range)");
    unsigned char lh[30];
    in.read_at(m.local_off, lh, 30);
    if (rd32(lh) != 0x04034b50) fail_at(mw, "corrupt ", archive, " (bad local header)");
    uint64_t data = m.local_off + 30 + rd16(lh + 26) + rd16(lh + 28);
    if (data > cd_off || m.comp > cd_off - data)
      fail_at(mw, "corrupt ", archive, " (", m.comp, " bytes of data at offset ", data,
              " run past the end of the archive's data)");
    m.local_off = data;  // from here on: where the data starts
  }
  return members;
}

void check_member(const ZipMember& m, const std::string& where) {
  const std::string mw = where + " member '" + quote_user(m.name) + "'";
  if (m.flags & 1) fail_at(mw, "encrypted zip members are not supported");
  if (m.method == 0) {
    if (m.comp != m.uncomp)
      fail_at(mw, "corrupt zip archive (stored member with sizes ", m.comp, " and ", m.uncomp, ")");
  } else if (m.method == 8) {
    if (m.uncomp > m.comp * kMaxDeflateRatio + 64)
      fail_at(mw, "corrupt zip archive (", m.comp, " compressed bytes cannot hold the ", m.uncomp,
              " bytes declared)");
  } else {
    fail_at(mw, "unsupported zip compression method ", m.method, " (tide reads stored and deflate)");
  }
}

namespace {

// A reader of member m's uncompressed bytes (stored or deflate, checked by check_member); its
// crc() is checked against m.crc after finish().
std::unique_ptr<Reader> member_reader(ByteSource& in, const ZipMember& m, const std::string& where) {
  check_member(m, where);
  if (m.method == 0) return std::make_unique<RangeReader>(in, m.local_off, m.comp);
  return std::make_unique<InflateReader>(in, m.local_off, m.comp, m.uncomp,
                                         where + " member '" + quote_user(m.name) + "'");
}

Tensor read_member(ByteSource& in, const ZipMember& m, const std::string& where) {
  const std::string mw = where + " member '" + quote_user(m.name) + "'";
  std::unique_ptr<Reader> r = member_reader(in, m, where);
  Tensor t = decode_npy(*r, mw);
  r->finish();
  if (r->crc() != m.crc) fail_at(mw, "CRC-32 mismatch: the data is corrupt");
  return t;
}

}  // namespace

void read_member_bytes(ByteSource& in, const ZipMember& m, void* dst, const std::string& where, bool check_crc) {
  const std::string mw = where + " member '" + quote_user(m.name) + "'";
  std::unique_ptr<Reader> r = member_reader(in, m, where);
  r->read(dst, size_t(m.uncomp));
  r->finish();
  if (check_crc && r->crc() != m.crc) fail_at(mw, "CRC-32 mismatch: the data is corrupt");
}

namespace {

enum class Kind { Npy, Npz, Other };

Kind sniff(ByteSource& in, const std::string& where) {
  if (in.size() == 0) fail_at(where, "the file is empty");
  unsigned char b[6] = {0};
  in.read_at(0, b, size_t(std::min<uint64_t>(6, in.size())));
  if (in.size() >= 6 && std::memcmp(b, kNpyMagic, 6) == 0) return Kind::Npy;
  if (in.size() >= 4 && b[0] == 'P' && b[1] == 'K' &&
      ((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6)))
    return Kind::Npz;
  return Kind::Other;
}

std::vector<NamedTensor> read_npz(ByteSource& in, const std::string& where) {
  std::vector<NamedTensor> out;
  for (const ZipMember& m : read_central_directory(in, where, ".npz")) {
    const std::string& n = m.name;
    if (n.size() < 4 || n.compare(n.size() - 4, 4, ".npy") != 0) continue;  // not an array
    out.emplace_back(n.substr(0, n.size() - 4), read_member(in, m, where));
  }
  return out;
}

Tensor read_npy(ByteSource& in, const std::string& where) {
  RangeReader r(in, 0, in.size());
  return decode_npy(r, where);
}

Loaded load_any(ByteSource& in, const std::string& where) {
  Loaded l;
  switch (sniff(in, where)) {
    case Kind::Npy: l.tensor = read_npy(in, where); break;
    case Kind::Npz:
      l.is_npz = true;
      l.members = read_npz(in, where);
      break;
    default: fail_at(where, "not a .npy file or .npz archive (unknown magic bytes)");
  }
  return l;
}

// ---------------------------------------------------------------------------------------
// Writing

std::string shape_repr(const Dims& s) {
  if (s.size() == 0) return "()";
  std::string r = "(";
  for (int k = 0; k < s.size(); ++k) {
    if (k) r += ", ";
    r += std::to_string(s[k]);
  }
  return r + (s.size() == 1 ? ",)" : ")");
}

// Magic, version, length and header dict, padded as NumPy pads it.
std::string npy_header(const Tensor& t, const char* op) {
  std::string dict = "{'descr': '" + npy_descr(t.dtype(), op) + "', 'fortran_order': False, 'shape': " +
                     shape_repr(t.sizes()) + ", }";
  // NumPy leaves room to grow the first axis in place (GROWTH_AXIS_MAX_DIGITS = 21).
  if (t.dim() > 0) dict.append(size_t(std::max<int>(0, 21 - int(std::to_string(t.size(0)).size()))), ' ');
  const size_t hlen = dict.size() + 1;  // + '\n'
  int version = 1;
  size_t pad = 64 - (10 + hlen) % 64;
  if (hlen + pad > 65535) {  // only a header over 64 KiB needs format 2.0
    version = 2;
    pad = 64 - (12 + hlen) % 64;
  }
  dict.append(pad, ' ');
  dict.push_back('\n');
  std::string out(kNpyMagic, kNpyMagicLen);
  out.push_back(char(version));
  out.push_back(0);
  if (version == 1) wr16(out, uint16_t(dict.size()));
  else wr32(out, uint32_t(dict.size()));
  return out + dict;
}

struct Prepared {
  std::string name;  // member name, with ".npy"
  Tensor t;          // on the host
  std::string header;
  uint64_t size;  // header + data bytes
};

Prepared prepare(const std::string& name, const Tensor& t, const char* op) {
  Prepared p;
  p.name = name;
  TIDE_CHECK(t.defined(), op, ": got an undefined tensor");
  p.t = to_host(t);
  p.header = npy_header(p.t, op);
  p.size = p.header.size() + p.t.nbytes();
  return p;
}

void write_npy(Output& out, const Prepared& p) {
  out.write(p.header.data(), p.header.size());
  for_each_run(p.t, [&](const char* d, size_t n) { out.write(d, n); });
}

// The archive of "<name>.npy" members (through ZipWriter, zip64 where needed).
void write_npz(Output& out, const std::vector<NamedTensor>& members, bool compressed, const char* op,
               const std::string& where) {
  std::vector<Prepared> prep;
  prep.reserve(members.size());
  std::unordered_set<std::string> names;
  for (const auto& [name, t] : members) {
    TIDE_CHECK(names.insert(name).second, where, ": the name '", quote_user(name), "' is given twice");
    prep.push_back(prepare(name + ".npy", t, op));
  }
  ZipWriter zip(out, where);
  for (const Prepared& p : prep) {
    zip.begin(p.name, p.size, compressed);
    zip.write(p.header.data(), p.header.size());
    for_each_run(p.t, [&](const char* d, size_t n) { zip.write(d, n); });
    zip.end();
  }
  zip.finish();
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public entry points

NpyHeader parse_npy_header(const std::string& text, const std::string& where) {
  HeaderParser ps{text, where};
  NpyHeader h;
  bool got_descr = false, got_fortran = false, got_shape = false;
  ps.expect('{');
  while (!ps.eat('}')) {
    std::string key = ps.str();
    ps.expect(':');
    if (key == "descr") {
      ps.ws();
      if (ps.i < text.size() && text[ps.i] == '[')
        fail_at(where, "structured dtypes (records) are not supported");
      set_dtype_from_descr(h, ps.str(), where);
      got_descr = true;
    } else if (key == "fortran_order") {
      h.fortran_order = ps.boolean();
      got_fortran = true;
    } else if (key == "shape") {
      h.shape = ps.shape();
      got_shape = true;
    } else {
      ps.bad("unexpected key '" + key + "'");
    }
    if (!ps.eat(',')) {
      ps.expect('}');
      break;
    }
  }
  ps.ws();
  if (ps.i != text.size()) ps.bad("text after the closing brace");
  if (!got_descr || !got_fortran || !got_shape) ps.bad("it needs the keys descr, fortran_order and shape");
  return h;
}

std::string npy_descr(DType dtype, const char* op) {
  const char o = kHostLittle ? '<' : '>';
  switch (dtype) {
    case DType::Bool: return "|b1";
    case DType::UInt8: return "|u1";
    case DType::UInt16: return std::string(1, o) + "u2";
    case DType::UInt32: return std::string(1, o) + "u4";
    case DType::UInt64: return std::string(1, o) + "u8";
    case DType::Int8: return "|i1";
    case DType::Int16: return std::string(1, o) + "i2";
    case DType::Int32: return std::string(1, o) + "i4";
    case DType::Int64: return std::string(1, o) + "i8";
    case DType::Float16: return std::string(1, o) + "f2";
    case DType::Float32: return std::string(1, o) + "f4";
    case DType::Float64: return std::string(1, o) + "f8";
    case DType::Complex64: return std::string(1, o) + "c8";
    case DType::Complex128: return std::string(1, o) + "c16";
    case DType::BFloat16: break;
  }
  TIDE_FAIL(op, ": bfloat16 has no NumPy dtype; convert with x:float()");
}

Loaded load(const std::string& path, const char* op) {
  const std::string where = where_of(op, path);
  FileSource in(path, where);
  return load_any(in, where);
}

Tensor load_npy(const std::string& path, const char* op) {
  const std::string where = where_of(op, path);
  FileSource in(path, where);
  if (sniff(in, where) == Kind::Npz) fail_at(where, "this is a .npz archive, not a .npy file");
  return read_npy(in, where);
}

std::vector<NamedTensor> load_npz(const std::string& path, const char* op) {
  const std::string where = where_of(op, path);
  FileSource in(path, where);
  if (sniff(in, where) == Kind::Npy) fail_at(where, "this is a .npy file, not a .npz archive");
  return read_npz(in, where);
}

Tensor load_npy_mmap(const std::string& path, MmapMode mode, const char* op) {
  const std::string where = where_of(op, path);
  const int fd = ::open(path.c_str(), (mode == MmapMode::ReadWrite ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) fail_at(where, "cannot open file: ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail_at(where, "not a regular file");
  }
  const size_t size = size_t(st.st_size);
  if (size == 0) {
    ::close(fd);
    fail_at(where, "the file is empty");
  }
  const int prot = mode == MmapMode::ReadOnly ? PROT_READ : PROT_READ | PROT_WRITE;
  void* base = ::mmap(nullptr, size, prot, mode == MmapMode::ReadWrite ? MAP_SHARED : MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (base == MAP_FAILED) fail_at(where, "cannot map the file: ", std::strerror(map_errno));
  // Owned by the storage from here on: an error below unmaps it with the last reference.
  std::shared_ptr<Storage> storage = Storage::wrap(base, size, Device{}, [size](void* p) { ::munmap(p, size); });
  if (mode == MmapMode::ReadOnly) storage->set_read_only();
  MemorySource in(base, size);
  const Kind kind = sniff(in, where);
  if (kind == Kind::Npz) fail_at(where, "mmap_mode maps .npy files only; load a .npz archive without it");
  if (kind != Kind::Npy) fail_at(where, "not a .npy file (unknown magic bytes)");
  RangeReader r(in, 0, size);
  const auto [h, nbytes] = read_npy_header(r, where);  // the same checks as reading
  const uint64_t data_off = size - r.remaining();
  if (h.byteswap || raw_dtype(h) != h.dtype || h.kind == 'b')
    fail_at(where, "cannot map ", h.kind == 'b' ? "a bool array" : h.byteswap ? "data of the other byte order" : "this dtype",
            " (tide converts it on loading); load without mmap_mode");
  if (data_off % dtype_size(h.dtype) != 0)
    fail_at(where, "cannot map: the data starts at byte ", data_off, ", not a multiple of the ", dtype_size(h.dtype),
            "-byte item size; load without mmap_mode");
  const bool fortran = h.fortran_order && h.shape.size() >= 2;
  return Tensor::make_view(storage, h.shape, fortran ? fortran_strides(h.shape) : contiguous_strides(h.shape),
                           int64_t(data_off / dtype_size(h.dtype)), h.dtype);
}

Loaded load_bytes(const void* data, size_t size, const std::string& name, const char* op) {
  MemorySource in(data, size);
  return load_any(in, where_of(op, name));
}

void save_npy(const std::string& path, const Tensor& t, const char* op) {
  const std::string where = where_of(op, path);
  Prepared p = prepare("", t, op);  // checks the dtype before the file is touched
  FileOutput out(path, where);
  write_npy(out, p);
  out.commit();
}

std::string save_npy_bytes(const Tensor& t, const char* op) {
  StringOutput out;
  write_npy(out, prepare("", t, op));
  return std::move(out.buf);
}

void save_npz(const std::string& path, const std::vector<NamedTensor>& members, bool compressed, const char* op) {
  const std::string where = where_of(op, path);
  for (const auto& m : members) {
    TIDE_CHECK(m.second.defined(), where, ": array '", m.first, "' is undefined");
    npy_descr(m.second.dtype(), op);  // refuse bfloat16 before the file is touched
  }
  FileOutput out(path, where);
  write_npz(out, members, compressed, op, where);
  out.commit();
}

std::string save_npz_bytes(const std::vector<NamedTensor>& members, bool compressed, const char* op) {
  StringOutput out;
  write_npz(out, members, compressed, op, op);
  return std::move(out.buf);
}

}  // namespace tide::io
