// Reading zip archives, shared by .npz (npy.cpp) and PyTorch's checkpoints (pt.cpp): the
// central directory, every size and offset checked against the archive's size before anything
// is allocated, and a member's bytes (stored or deflate), CRC-checked. zip64 records are read
// (PyTorch writes them); encrypted members and multi-disk archives are clear errors.
#pragma once
#include <cstdint>
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

}  // namespace tide::io
