// Text files: np.loadtxt, np.genfromtxt, np.savetxt, and x:tofile / np.fromfile (raw or text).
//
// loadtxt reads plain or gzip-compressed text (told apart by content, not by name), parses
// numbers with std::from_chars, and follows NumPy's shape rules: a 2-D table squeezed to
// 1-D (one row or one column) or 0-D (one value) unless ndmin asks for more. A bad number or
// a ragged row is an error naming the file, the line and the column. genfromtxt is the same
// parser with missing fields filled, a footer dropped and an optional header line of names.
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

// np.genfromtxt: loadtxt (skiprows is NumPy's skip_header) that also accepts missing values.
struct GenfromtxtOptions : LoadtxtOptions {
  // A field is missing when it is empty or equals one of these; it gets `filling`
  // (default NaN for floats, -1 for integers, as NumPy). Any other bad field is an error.
  std::vector<std::string> missing_values;
  std::optional<double> filling;
  int64_t skip_footer = 0;  // data rows dropped at the end
  bool names = false;       // the first line (after skip_header; may start with a comment marker) names the columns
};

struct Genfromtxt {
  Tensor table;                    // 2-D rows x columns when names, else squeezed as loadtxt does
  std::vector<std::string> names;  // the (usecols-selected) column names when names
};

Genfromtxt genfromtxt(const std::string& path, const GenfromtxtOptions& opt, const char* op = "np.genfromtxt");
Genfromtxt genfromtxt_string(std::string_view text, const GenfromtxtOptions& opt,
                             const std::string& name = "<string>", const char* op = "np.genfromtxt");

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

// x:tofile(path, {sep=, format=}): sep "" writes the raw bytes of x in row-major order
// (NumPy's native layout); otherwise the values as text joined by sep, each formatted with
// `format` (one printf conversion) or, when empty, as Python's str() of the value.
struct TofileOptions {
  std::string sep;
  std::string format;
};
void tofile(const std::string& path, const Tensor& t, const TofileOptions& opt = {}, const char* op = "tofile");

// np.fromfile(path, {dtype=, count=, sep=, offset=}): sep "" reads raw bytes from `offset`;
// otherwise numbers separated by sep (whitespace around it is ignored; a space matches any
// whitespace). count -1 reads all; asking for more than there is, raw data that is not a
// whole number of items, or text that is not a number is an error (NumPy returns less).
struct FromfileOptions {
  DType dtype = DType::Float64;
  int64_t count = -1;
  std::string sep;
  int64_t offset = 0;
};
Tensor fromfile(const std::string& path, const FromfileOptions& opt = {}, const char* op = "np.fromfile");

}  // namespace tide::io
