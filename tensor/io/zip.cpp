// Writing zip archives (see zip.hpp): .npz archives (npy.cpp) and PyTorch's checkpoints (pt.cpp).
//
// Each member is a local header, then its data. The header is written first with the sizes
// (known for a stored member; for a deflated one, room for them) and patched with the CRC-32 and
// the compressed size once the data is out, so data never has to be held in memory. A member
// that may reach 4 GiB gets a zip64 extra field in its local header; the central directory
// gets zip64 fields for sizes and offsets past 4 GiB, and the zip64 end records come when the
// directory's size or offset, or the number of members, overflow the classic end record.
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "zip.hpp"

namespace tide::io {
namespace {

constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, fixed for reproducible files
constexpr uint64_t kMax32 = 0xffffffffu;
// A deflated member may grow a little over its input (5 bytes per 16 KiB stored block): one of
// more than this many bytes gets zip64 sizes in its local header.
constexpr uint64_t kMaxPlainDeflate = kMax32 - (kMax32 >> 8);
constexpr size_t kChunk = 1 << 16;

void wr16(std::string& s, uint16_t v) {
  s.push_back(char(v & 0xff));
  s.push_back(char(v >> 8));
}
void wr32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(char((v >> (8 * i)) & 0xff));
}
void wr64(std::string& s, uint64_t v) {
  wr32(s, uint32_t(v));
  wr32(s, uint32_t(v >> 32));
}
uint32_t clamp32(uint64_t v) { return uint32_t(std::min(v, kMax32)); }

// General-purpose flags: bit 11 says the name is UTF-8 (any byte above 0x7f).
uint16_t name_flags(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return (unsigned char)c >= 0x80; }) ? 0x0800 : 0;
}

}  // namespace

// A raw deflate stream (zlib, window 15) writing its output through the archive.
struct ZipWriter::Deflater {
  z_stream zs{};
  std::vector<unsigned char> buf = std::vector<unsigned char>(kChunk);
  explicit Deflater(const std::string& where) {
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      fail_at(where, "cannot initialise zlib");
  }
  ~Deflater() { deflateEnd(&zs); }
  // Compresses n bytes (flush = Z_FINISH ends the stream), handing each output piece to put.
  template <typename Put>
  void pump(const char* d, size_t n, int flush, const std::string& where, Put put) {
    do {
      const size_t piece = std::min<size_t>(n, size_t(1) << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(d));
      zs.avail_in = uInt(piece);
      const int f = (flush == Z_FINISH && piece == n) ? Z_FINISH : Z_NO_FLUSH;
      int ret;
      do {
        zs.next_out = buf.data();
        zs.avail_out = uInt(buf.size());
        ret = deflate(&zs, f);
        if (ret == Z_STREAM_ERROR) fail_at(where, "compression failed");
        put(buf.data(), buf.size() - zs.avail_out);
      } while (zs.avail_out == 0 || (f == Z_FINISH && ret != Z_STREAM_END));
      d += piece;
      n -= piece;
    } while (n > 0);
  }
};

ZipWriter::ZipWriter(Output& out, std::string where, uint64_t align)
    : out_(out), where_(std::move(where)), align_(std::max<uint64_t>(align, 1)) {}

ZipWriter::~ZipWriter() = default;

void ZipWriter::emit(const void* p, size_t n) { out_.write(p, n); }

void ZipWriter::begin(const std::string& name, uint64_t size, bool deflate) {
  TIDE_ASSERT(!open_);
  TIDE_CHECK(name.size() <= 0xffff, where_, ": the member name '", quote_user(name), "' is too long (", name.size(),
             " bytes)");
  Entry e{name, deflate, deflate ? size > kMaxPlainDeflate : size >= kMax32, 0, size, 0, out_.tell()};
  std::string h;
  wr32(h, 0x04034b50);
  wr16(h, e.zip64_local ? 45 : 20);
  wr16(h, name_flags(name));
  wr16(h, deflate ? 8 : 0);
  wr16(h, 0);
  wr16(h, kDosDate);
  wr32(h, 0);  // CRC-32, patched by end()
  wr32(h, e.zip64_local ? uint32_t(kMax32) : deflate ? 0 : uint32_t(size));
  wr32(h, e.zip64_local ? uint32_t(kMax32) : uint32_t(size));
  const uint64_t fixed_extra = e.zip64_local ? 20 : 0;
  uint64_t pad = 0;
  if (align_ > 1) pad = (align_ - (e.offset + 30 + name.size() + fixed_extra + 4) % align_) % align_;
  const uint64_t extra = fixed_extra + (align_ > 1 ? 4 + pad : 0);
  TIDE_CHECK(extra <= 0xffff, where_, ": alignment ", align_, " needs an extra field over 64 KiB");
  wr16(h, uint16_t(name.size()));
  wr16(h, uint16_t(extra));
  h += name;
  if (e.zip64_local) {
    wr16(h, 0x0001);
    wr16(h, 16);
    wr64(h, size);
    wr64(h, deflate ? 0 : size);
  }
  if (align_ > 1) {
    wr16(h, 0x4246);  // "FB": PyTorch's padding field
    wr16(h, uint16_t(pad));
    h.append(size_t(pad), 'Z');
  }
  emit(h.data(), h.size());
  data_start_ = out_.tell();
  written_ = 0;
  open_ = true;
  if (deflate) deflater_ = std::make_unique<Deflater>(where_);
  entries_.push_back(std::move(e));
}

void ZipWriter::write(const void* p, size_t n) {
  TIDE_ASSERT(open_);
  Entry& e = entries_.back();
  TIDE_CHECK(n <= e.size - written_, where_, ": member '", quote_user(e.name), "' gets more than its ", e.size,
             " bytes");
  e.crc = uint32_t(crc32_z(e.crc, static_cast<const Bytef*>(p), n));
  written_ += n;
  if (!e.deflate) return emit(p, n);
  deflater_->pump(static_cast<const char*>(p), n, Z_NO_FLUSH, where_,
                  [&](const void* q, size_t m) { emit(q, m); });
}

void ZipWriter::end() {
  TIDE_ASSERT(open_);
  Entry& e = entries_.back();
  TIDE_CHECK(written_ == e.size, where_, ": member '", quote_user(e.name), "' got ", written_, " of its ", e.size,
             " bytes");
  if (e.deflate) {
    deflater_->pump(nullptr, 0, Z_FINISH, where_, [&](const void* q, size_t m) { emit(q, m); });
    deflater_.reset();
  }
  e.comp = out_.tell() - data_start_;
  TIDE_CHECK(e.zip64_local || e.comp < kMax32, where_, ": member '", quote_user(e.name), "' compressed to ", e.comp,
             " bytes, past what its header can hold");
  std::string crc;
  wr32(crc, e.crc);
  out_.patch(e.offset + 14, crc.data(), 4);
  std::string sizes;
  if (e.zip64_local) {
    wr64(sizes, e.size);
    wr64(sizes, e.comp);
    out_.patch(e.offset + 30 + e.name.size() + 4, sizes.data(), 16);
  } else {
    wr32(sizes, uint32_t(e.comp));
    out_.patch(e.offset + 18, sizes.data(), 4);
  }
  open_ = false;
}

void ZipWriter::finish() {
  TIDE_ASSERT(!open_);
  const uint64_t cd_off = out_.tell();
  std::string dir;
  for (const Entry& e : entries_) {
    std::string z64;  // the zip64 extra field: the values that overflow, in this order
    for (uint64_t v : {e.size, e.comp, e.offset})
      if (v >= kMax32) wr64(z64, v);
    wr32(dir, 0x02014b50);
    wr16(dir, z64.empty() ? 0x0314 : 0x032d);  // made by: Unix, zip 2.0 (4.5 with zip64)
    wr16(dir, z64.empty() && !e.zip64_local ? 20 : 45);
    wr16(dir, name_flags(e.name));
    wr16(dir, e.deflate ? 8 : 0);
    wr16(dir, 0);
    wr16(dir, kDosDate);
    wr32(dir, e.crc);
    wr32(dir, clamp32(e.comp));
    wr32(dir, clamp32(e.size));
    wr16(dir, uint16_t(e.name.size()));
    wr16(dir, uint16_t(z64.empty() ? 0 : 4 + z64.size()));
    wr16(dir, 0);
    wr16(dir, 0);
    wr16(dir, 0);
    wr32(dir, 0100644u << 16);  // a regular file, rw-r--r--
    wr32(dir, clamp32(e.offset));
    dir += e.name;
    if (!z64.empty()) {
      wr16(dir, 0x0001);
      wr16(dir, uint16_t(z64.size()));
      dir += z64;
    }
  }
  const uint64_t cd_size = dir.size(), n = entries_.size();
  if (n >= 0xffff || cd_size >= kMax32 || cd_off >= kMax32) {
    const uint64_t z64_off = cd_off + cd_size;
    wr32(dir, 0x06064b50);  // zip64 end of central directory record
    wr64(dir, 44);
    wr16(dir, 0x032d);
    wr16(dir, 45);
    wr32(dir, 0);
    wr32(dir, 0);
    wr64(dir, n);
    wr64(dir, n);
    wr64(dir, cd_size);
    wr64(dir, cd_off);
    wr32(dir, 0x07064b50);  // its locator
    wr32(dir, 0);
    wr64(dir, z64_off);
    wr32(dir, 1);
  }
  wr32(dir, 0x06054b50);  // end of central directory
  wr16(dir, 0);
  wr16(dir, 0);
  wr16(dir, uint16_t(std::min<uint64_t>(n, 0xffff)));
  wr16(dir, uint16_t(std::min<uint64_t>(n, 0xffff)));
  wr32(dir, clamp32(cd_size));
  wr32(dir, clamp32(cd_off));
  wr16(dir, 0);
  emit(dir.data(), dir.size());
}

}  // namespace tide::io
