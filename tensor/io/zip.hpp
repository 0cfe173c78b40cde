// Zip archives, shared by .npz (npy.cpp) and PyTorch's checkpoints (pt.cpp).
// Reading: the central directory, every size and offset checked against the archive's size
// before anything is allocated, and a member's bytes (stored or deflate), CRC-checked. zip64
// records are read (PyTorch writes them); encrypted members and multi-disk archives are clear
// errors. Writing (zip.cpp): stored or deflated members, zip64 records where a size, an offset
// or the number of members needs them, and optionally each member's data aligned as PyTorch's
// writer aligns it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "file_io.hpp"

namespace tide::io {

struct ZipMember {
  std::string name;
  uint16_t flags, method;
  uint32_t crc;
  uint64_t comp, uncomp;
  uint64_t local_off;  // after read_central_directory: where the member's data starts
};

// The members of the archive in `in`. Messages start with `where` and call the file "a valid
// <kind> archive" ("a valid .npz archive").
std::vector<ZipMember> read_central_directory(ByteSource& in, const std::string& where, const char* kind);

// Throws unless member m can be read (stored or deflate, not encrypted) with sizes that agree
// (deflate expands at most ~1000x): after it, m.uncomp bytes may be allocated.
void check_member(const ZipMember& m, const std::string& where);

// Reads member m's m.uncomp uncompressed bytes into dst, checking its CRC-32 (unless
// check_crc is false: the file fuzzer's way past the checksum to the parsers behind it).
void read_member_bytes(ByteSource& in, const ZipMember& m, void* dst, const std::string& where,
                       bool check_crc = true);

// Writes a zip archive to `out`, one member at a time: begin, write (its bytes, in pieces),
// end; then finish. Dates are fixed (1980-01-01) so that equal contents give equal files.
// Errors start with `where`.
class ZipWriter {
 public:
  // align > 1: each member's data starts at a multiple of `align` bytes in the archive, padded
  // by an extra field (id "FB", filled with 'Z') as PyTorch's writer does (align 64).
  ZipWriter(Output& out, std::string where, uint64_t align = 1);
  ~ZipWriter();
  ZipWriter(const ZipWriter&) = delete;
  ZipWriter& operator=(const ZipWriter&) = delete;

  // Starts a member of `size` uncompressed bytes, stored or (deflate) compressed.
  void begin(const std::string& name, uint64_t size, bool deflate);
  void write(const void* p, size_t n);
  // Checks that `size` bytes came, then records the member's CRC-32 and sizes.
  void end();
  // The central directory and the end records.
  void finish();

 private:
  struct Entry {
    std::string name;
    bool deflate, zip64_local;
    uint32_t crc;
    uint64_t size, comp, offset;
  };
  struct Deflater;
  void emit(const void* p, size_t n);

  Output& out_;
  std::string where_;
  uint64_t align_;
  std::vector<Entry> entries_;
  bool open_ = false;
  uint64_t written_ = 0, data_start_ = 0;
  std::unique_ptr<Deflater> deflater_;
};

}  // namespace tide::io
