// Delimited text files: np.loadtxt and np.savetxt.
//
// loadtxt reads plain or gzip-compressed text (told apart by content, not by name), parses
// numbers with std::from_chars, and follows NumPy's shape rules: a 2-D table squeezed to
// 1-D (one row or one column) or 0-D (one value) unless ndmin asks for more. A bad number or
// a ragged row is an error naming the file, the line and the column.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../tensor.hpp"

namespace tide::io {

struct LoadtxtOptions {
  std::optional<char> delimiter;              // nullopt: fields are separated by whitespace
  std::vector<std::string> comments = {"#"};  // text after any of these is ignored; empty: none
  int64_t skiprows = 0;                       // lines skipped first (comments and blanks included)
  std::vector<int64_t> usecols;               // 0-based column numbers, negative from the end; empty: all
  int64_t max_rows = -1;                      // data rows to read; -1: all
  DType dtype = DType::Float64;
  int ndmin = 0;  // 0, 1 or 2
};

Tensor loadtxt(const std::string& path, const LoadtxtOptions& opt = {}, const char* op = "np.loadtxt");
// The same on text in memory (`name` stands for the file in messages).
Tensor loadtxt_string(std::string_view text, const LoadtxtOptions& opt = {},
                      const std::string& name = "<string>", const char* op = "np.loadtxt");

struct SavetxtOptions {
  // printf-style: one conversion (%e %E %f %F %g %G %d %i, with flags, width, precision) used
  // for every value, or exactly one per column (then `delimiter` is not used).
  std::string fmt = "%.18e";
  std::string delimiter = " ";
  std::string newline = "\n";
  std::string header, footer;  // written as comment lines when not empty
  std::string comments = "# ";
};

// Writes a 1-D (one value per line) or 2-D tensor; a path ending in ".gz" is gzip-compressed.
void savetxt(const std::string& path, const Tensor& t, const SavetxtOptions& opt = {},
             const char* op = "np.savetxt");
std::string savetxt_string(const Tensor& t, const SavetxtOptions& opt = {}, const char* op = "np.savetxt");

}  // namespace tide::io
