// np.loadtxt / np.genfromtxt / np.savetxt (see text.hpp).
//
// loadtxt streams the file through zlib's gz reader (which passes plain text through
// unchanged) in 1 MiB blocks, splits complete lines, and parses fields in place with
// std::from_chars: no iostreams, no per-field allocation.
#include "text.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "file_io.hpp"

namespace tide::io {
namespace {

constexpr size_t kBlock = 1 << 16;  // read size; small enough for malloc to reuse warm memory

// Values collected in fixed blocks: no reallocation copies while a large table is parsed,
// and blocks small enough that malloc recycles them instead of mapping fresh pages.
template <typename T>
class Chunked {
 public:
  static constexpr size_t kPer = 8192;
  void push_back(T v) {
    if (n_ % kPer == 0) blocks_.emplace_back(new T[kPer]);
    blocks_.back()[n_ % kPer] = v;
    ++n_;
  }
  size_t size() const { return n_; }
  T operator[](size_t i) const { return blocks_[i / kPer][i % kPer]; }
  template <typename F>
  void for_each(F&& f) const {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      size_t n = std::min(kPer, n_ - b * kPer);
      const T* p = blocks_[b].get();
      for (size_t k = 0; k < n; ++k) f(p[k]);
    }
  }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t n_ = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

bool parse_double(const char* b, const char* e, double& out) {
  if (b < e && *b == '+') {
    ++b;
    if (b < e && (*b == '+' || *b == '-')) return false;
  }
  if (b == e) return false;
  auto r = std::from_chars(b, e, out, std::chars_format::general);
  if (r.ptr != e) return false;
  if (r.ec == std::errc::result_out_of_range) {  // overflow gives inf, underflow 0 (as NumPy)
    std::string s(b, e);
    out = std::strtod(s.c_str(), nullptr);
    return true;
  }
  return r.ec == std::errc();
}

// An integer, or a float literal with an integral value ("3.0", "1e3").
bool parse_int(const char* b, const char* e, int64_t& out) {
  const char* s = b;
  if (s < e && *s == '+') {
    ++s;
    if (s < e && (*s == '+' || *s == '-')) return false;
  }
  if (s == e) return false;
  auto r = std::from_chars(s, e, out, 10);
  if (r.ptr == e && r.ec == std::errc()) return true;
  double d;
  if (!parse_double(b, e, d) || !std::isfinite(d) || d != std::trunc(d) || d < -9.2233720368547758e18 ||
      d >= 9.2233720368547758e18)
    return false;
  out = int64_t(d);
  return true;
}

void int_range(DType dt, int64_t& lo, int64_t& hi) {
  switch (dt) {
    case DType::Bool: lo = INT64_MIN, hi = INT64_MAX; break;  // nonzero is true
    case DType::UInt8: lo = 0, hi = 255; break;
    case DType::Int8: lo = -128, hi = 127; break;
    case DType::Int16: lo = INT16_MIN, hi = INT16_MAX; break;
    case DType::Int32: lo = INT32_MIN, hi = INT32_MAX; break;
    case DType::UInt16: lo = 0, hi = UINT16_MAX; break;
    case DType::UInt32: lo = 0, hi = UINT32_MAX; break;
    case DType::UInt64: lo = 0, hi = INT64_MAX; break;  // parsed as int64
    default: lo = INT64_MIN, hi = INT64_MAX; break;
  }
}

class TextParser {
 public:
  // g: the genfromtxt extras (o is then *g), nullptr for loadtxt.
  TextParser(const LoadtxtOptions& o, std::string where, const GenfromtxtOptions* g = nullptr)
      : o_(o), g_(g), where_(std::move(where)) {
    TIDE_CHECK(o.ndmin >= 0 && o.ndmin <= 2, where_, ": ndmin must be 0, 1 or 2, got ", o.ndmin);
    TIDE_CHECK(o.skiprows >= 0, where_, ": skiprows must be >= 0, got ", o.skiprows);
    if (o.delimiter) {
      char d = *o.delimiter;
      TIDE_CHECK(d != '\n' && d != '\r' && d != '\0', where_, ": the delimiter cannot be a line break");
      for (const std::string& c : o.comments)
        TIDE_CHECK(c.find(d) == std::string::npos, where_, ": the delimiter '", d,
                   "' cannot be part of a comment marker");
    }
    for (const std::string& c : o.comments) TIDE_CHECK(!c.empty(), where_, ": a comment marker cannot be empty");
    floating_ = is_floating(o.dtype);
    int_range(o.dtype, lo_, hi_);
    done_ = o.max_rows == 0;
    if (g) {
      TIDE_CHECK(g->skip_footer >= 0, where_, ": skip_footer must be >= 0, got ", g->skip_footer);
      TIDE_CHECK(g->skip_footer == 0 || o.max_rows < 0, where_, ": skip_footer and max_rows cannot be used together");
      if (g->filling && !floating_) {
        const double f = *g->filling;
        TIDE_CHECK(f == std::trunc(f) && f >= double(lo_) && f <= double(hi_), where_, ": filling_values ", f,
                   " is not a value of ", dtype_name(o.dtype));
      }
      fill_f_ = g->filling.value_or(std::numeric_limits<double>::quiet_NaN());
      fill_i_ = g->filling && !floating_ ? int64_t(*g->filling) : -1;
      done_ = done_ && !g->names;  // the header is still read
    }
  }

  // One physical line, without its '\n'.
  void line(const char* b, const char* e) {
    ++line_no_;
    if (done_ || line_no_ <= o_.skiprows) return;
    if (g_ && g_->names && !have_names_) return header(b, e);
    for (const std::string& c : o_.comments) {
      const char* hit = c.size() == 1 ? static_cast<const char*>(std::memchr(b, c[0], size_t(e - b)))
                                      : std::search(b, e, c.begin(), c.end());
      if (hit && hit < e) e = hit;
    }
    split(b, e);
    if (fields_.empty()) return;
    const int64_t nf = int64_t(fields_.size());
    if (o_.usecols.empty()) {
      if (ncols_ < 0) ncols_ = nf;
      else if (nf != ncols_)
        TIDE_FAIL(where_, " line ", line_no_, ": found ", nf, " columns, but the rows before have ", ncols_,
                  " (use usecols to read a subset)");
      for (int64_t c = 0; c < nf; ++c) value(c);
    } else {
      for (int64_t c : o_.usecols) value(column(c, nf));
    }
    ++rows_;
    if (o_.max_rows >= 0 && rows_ >= o_.max_rows) done_ = true;
  }

  bool done() const { return done_; }

  // The loaded table, and the column names when the options asked for them.
  Genfromtxt result() {
    const int64_t cols = !o_.usecols.empty() ? int64_t(o_.usecols.size()) : ncols_ >= 0 ? ncols_
                         : have_names_ ? int64_t(names_.size()) : 1;
    const int64_t footer = g_ ? std::min(g_->skip_footer, rows_) : 0;
    const int64_t rows = rows_ - footer;
    Dims shape{rows, cols};
    Tensor t = Tensor::empty(shape, o_.dtype, Device{}, where_.c_str());
    int64_t n = rows * cols;
    TIDE_ASSERT((floating_ ? fvals_.size() : ivals_.size()) == size_t(rows_ * cols));
    if (floating_) {
      TIDE_DISPATCH_FLOAT(o_.dtype, "np.loadtxt", [&] {
        scalar_t* p = t.data<scalar_t>();
        fvals_.for_each([&](double v) {
          if (n-- > 0) *p++ = scalar_t(compute_t<scalar_t>(v));
        });
      });
    } else {
      TIDE_DISPATCH_INTEGRAL(o_.dtype, "np.loadtxt", [&] {
        scalar_t* p = t.data<scalar_t>();
        ivals_.for_each([&](int64_t v) {
          if (n-- <= 0) return;
          if constexpr (std::is_same_v<scalar_t, bool>) *p++ = v != 0;
          else *p++ = scalar_t(v);
        });
      });
    }
    Genfromtxt r;
    if (g_ && g_->names) {  // one column per name: kept 2-D
      TIDE_CHECK(have_names_, where_, ": names=true, but the file has no header line");
      if (o_.usecols.empty()) {
        TIDE_CHECK(ncols_ < 0 || ncols_ == int64_t(names_.size()), where_, ": the header names ", names_.size(),
                   " columns, but the rows have ", ncols_);
        r.names = names_;
      } else {
        for (int64_t c : o_.usecols) r.names.push_back(names_[size_t(column(c, int64_t(names_.size())))]);
      }
      r.table = t;
      return r;
    }
    // NumPy's ndmin rules: squeeze when there are more dims than asked, then pad.
    Dims s;
    if (2 > o_.ndmin) {
      for (int64_t x : shape)
        if (x != 1) s.push_back(x);
    } else {
      s = shape;
    }
    if (s.size() < o_.ndmin) {
      if (o_.ndmin == 1) s = Dims{1};
      else if (s.size() == 0) s = Dims{1, 1};
      else s = Dims{s[0], 1};  // atleast_2d(a).T
    }
    r.table = Tensor::make_view(t.storage(), s, contiguous_strides(s), 0, t.dtype());
    return r;
  }

 private:
  // Splits [b, e) (comments already cut) into fields_.
  void split(const char* b, const char* e) {
    fields_.clear();
    if (!o_.delimiter) {
      const char* p = b;
      for (;;) {
        while (p < e && is_space(*p)) ++p;
        if (p == e) break;
        const char* s = p;
        while (p < e && !is_space(*p)) ++p;
        fields_.push_back({s, p});
      }
    } else {
      const char* p = b;
      while (p < e && is_space(*p)) ++p;
      if (p == e) return;  // blank line
      const char d = *o_.delimiter;
      p = b;
      for (;;) {
        const char* q = static_cast<const char*>(std::memchr(p, d, size_t(e - p)));
        const char* end = q ? q : e;
        const char* s = p;
        const char* t = end;
        while (s < t && is_space(*s)) ++s;
        while (t > s && is_space(t[-1])) --t;
        fields_.push_back({s, t});
        if (!q) break;
        p = q + 1;
      }
    }
  }

  // The 0-based field of usecols entry c (0-based, negative from the end) in a line of nf fields.
  int64_t column(int64_t c, int64_t nf) const {
    int64_t k = c < 0 ? c + nf : c;
    if (k < 0 || k >= nf)  // 1-based in the message; unsigned, so that c = INT64_MAX says 2^63
      TIDE_FAIL(where_, " line ", line_no_, ": usecols asks for column ",
                c >= 0 ? std::to_string(uint64_t(c) + 1) : std::to_string(c), ", but the line has ", nf, " columns");
    return k;
  }

  // genfromtxt's names=true header: the first line with fields; text up to a comment marker
  // is dropped (NumPy's "# a b c" header), and the names are the fields after it.
  void header(const char* b, const char* e) {
    for (const std::string& c : o_.comments) {
      const char* hit = std::search(b, e, c.begin(), c.end());
      if (hit < e) b = hit + c.size();
    }
    split(b, e);
    if (fields_.empty()) return;
    for (auto [fb, fe] : fields_) names_.emplace_back(fb, fe);
    have_names_ = true;
    done_ = o_.max_rows == 0;
  }

  void value(int64_t col) {
    const auto [b, e] = fields_[size_t(col)];
    if (g_ && missing(b, e)) {
      if (floating_) fvals_.push_back(fill_f_);
      else ivals_.push_back(fill_i_);
      return;
    }
    if (floating_) {
      double v;
      if (!parse_double(b, e, v)) bad(b, e, col);
      fvals_.push_back(v);
    } else {
      int64_t v;
      if (!parse_int(b, e, v)) bad(b, e, col);
      if (v < lo_ || v > hi_)
        TIDE_FAIL(where_, " line ", line_no_, ", column ", col + 1, ": ", v, " is out of range for ",
                  dtype_name(o_.dtype));
      ivals_.push_back(v);
    }
  }
  bool missing(const char* b, const char* e) const {
    const std::string_view f(b, size_t(e - b));
    return f.empty() || std::find(g_->missing_values.begin(), g_->missing_values.end(), f) != g_->missing_values.end();
  }
  [[noreturn]] void bad(const char* b, const char* e, int64_t col) {
    TIDE_FAIL(where_, " line ", line_no_, ", column ", col + 1, ": could not convert '",
              quote_user(std::string_view(b, size_t(e - b))), "' to ",
              dtype_name(o_.dtype));
  }

  const LoadtxtOptions& o_;
  const GenfromtxtOptions* g_;
  std::string where_;
  bool have_names_ = false;
  std::vector<std::string> names_;
  double fill_f_ = 0;
  int64_t fill_i_ = 0;
  bool floating_ = true, done_ = false;
  int64_t lo_ = 0, hi_ = 0;
  int64_t line_no_ = 0, rows_ = 0, ncols_ = -1;
  std::vector<std::pair<const char*, const char*>> fields_;
  Chunked<double> fvals_;
  Chunked<int64_t> ivals_;
};

// Feeds complete lines of [b, e) to the parser; returns where the unfinished last line starts.
const char* feed_lines(TextParser& p, const char* b, const char* e) {
  while (b < e && !p.done()) {
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', size_t(e - b)));
    if (!nl) return b;
    p.line(b, nl);
    b = nl + 1;
  }
  return e;
}

// ---------------------------------------------------------------------------------------
// savetxt formats

struct FmtSpec {
  std::string literal;  // text before the conversion
  std::string spec;     // "%.18e" or "%5lld", ready for snprintf
  bool integer = false;
};

struct Format {
  std::vector<FmtSpec> specs;
  std::string tail;  // text after the last conversion
};

Format parse_format(const std::string& fmt, const char* op) {
  Format f;
  std::string lit;
  for (size_t i = 0; i < fmt.size();) {
    if (fmt[i] != '%') {
      lit += fmt[i++];
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      lit += "%%";
      i += 2;
      continue;
    }
    size_t j = i + 1;
    while (j < fmt.size() && std::strchr("-+ #0", fmt[j])) ++j;
    size_t w0 = j;
    while (j < fmt.size() && fmt[j] >= '0' && fmt[j] <= '9') ++j;
    TIDE_CHECK(j - w0 <= 3, op, ": width in format '", quote_user(fmt), "' is too large");
    if (j < fmt.size() && fmt[j] == '.') {
      size_t p0 = ++j;
      while (j < fmt.size() && fmt[j] >= '0' && fmt[j] <= '9') ++j;
      TIDE_CHECK(j - p0 <= 2, op, ": precision in format '", quote_user(fmt), "' is too large");
    }
    TIDE_CHECK(j < fmt.size() && std::strchr("eEfFgGdi", fmt[j]), op, ": unsupported format '", quote_user(fmt),
               "' (use conversions like %.18e, %g, %.3f or %d)");
    FmtSpec s;
    s.literal = lit;
    lit.clear();
    s.integer = fmt[j] == 'd' || fmt[j] == 'i';
    s.spec = fmt.substr(i, j - i) + (s.integer ? "lld" : std::string(1, fmt[j]));
    f.specs.push_back(std::move(s));
    i = j + 1;
  }
  f.tail = lit;
  TIDE_CHECK(!f.specs.empty(), op, ": format '", quote_user(fmt), "' has no conversion (like %.18e)");
  return f;
}

// Writes data to path (created or truncated).
void write_plain(const std::string& path, const std::string& where, const std::string& data) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) TIDE_FAIL(where, ": cannot open file for writing: ", std::strerror(errno));
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  ok = std::fclose(f) == 0 && ok;
  TIDE_CHECK(ok, where, ": write error: ", std::strerror(errno));
}

// v formatted by the printf format `spec` (one conversion; `integer`: %lld, which truncates
// a float as Python's %d does). `fmt` is the user's format, for messages.
template <typename T>
std::string_view format_value(char (&buf)[512], const std::string& spec, bool integer, T raw, const std::string& fmt,
                              const char* op) {
  int n;
  if (integer) {
    long long v;
    if constexpr (std::is_integral_v<T>) {
      v = (long long)raw;
    } else {
      double d = double(compute_t<T>(raw));
      TIDE_CHECK(std::isfinite(d) && std::fabs(d) < 9.2e18, op, ": cannot format ", d, " with '", quote_user(fmt),
                 "' (an integer conversion)");
      v = (long long)d;
    }
    n = std::snprintf(buf, sizeof buf, spec.c_str(), v);
  } else {
    double d;
    if constexpr (std::is_integral_v<T>) d = double(raw);
    else d = double(compute_t<T>(raw));
    n = std::snprintf(buf, sizeof buf, spec.c_str(), d);
  }
  TIDE_CHECK(n >= 0 && size_t(n) < sizeof buf, op, ": formatted value is too long (format '", quote_user(fmt), "')");
  return std::string_view(buf, size_t(n));
}

std::string savetxt_impl(const Tensor& t0, const SavetxtOptions& opt, const char* op) {
  TIDE_CHECK(t0.defined(), op, ": got an undefined tensor");
  check_cpu(t0, op);
  TIDE_CHECK(t0.dim() == 1 || t0.dim() == 2, op, ": expected a 1-D or 2-D tensor, got ", t0.dim(), "-D (shape ",
             t0.sizes().str(), ")");
  const int64_t rows = t0.size(0), cols = t0.dim() == 2 ? t0.size(1) : 1;
  const int64_t rs = t0.stride(0), cs = t0.dim() == 2 ? t0.stride(1) : 0;
  Format f = parse_format(opt.fmt, op);
  const bool per_column = f.specs.size() > 1;
  TIDE_CHECK(!per_column || int64_t(f.specs.size()) == cols, op, ": format '", quote_user(opt.fmt), "' has ", f.specs.size(),
             " conversions for ", cols, " columns");
  auto escape = [](const std::string& s) {  // literal text goes through snprintf
    std::string r;
    for (char c : s) {
      r += c;
      if (c == '%') r += '%';
    }
    return r;
  };
  std::string delim = escape(opt.delimiter);
  std::string out;
  auto commented = [&](const std::string& text) {
    std::string s = opt.comments;
    for (char c : text) {
      s += c;
      if (c == '\n') s += opt.comments;
    }
    out += s + opt.newline;
  };
  if (!opt.header.empty()) commented(opt.header);
  // The snprintf format of each column: NumPy joins a single format with the delimiter, and
  // uses a multi-conversion format as the whole row.
  std::vector<std::string> col_fmt(static_cast<size_t>(cols));
  for (int64_t c = 0; c < cols; ++c) {
    if (per_column) {
      col_fmt[size_t(c)] = f.specs[size_t(c)].literal + f.specs[size_t(c)].spec + (c == cols - 1 ? f.tail : "");
    } else {
      col_fmt[size_t(c)] = (c > 0 ? delim : "") + f.specs[0].literal + f.specs[0].spec + f.tail;
    }
  }
  char buf[512];
  TIDE_DISPATCH_ALL(t0.dtype(), op, [&] {
    const scalar_t* base = t0.data<scalar_t>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const FmtSpec& s = f.specs[per_column ? size_t(c) : 0];
        const std::string& spec = col_fmt[size_t(c)];
        out += format_value(buf, spec, s.integer, base[r * rs + c * cs], opt.fmt, op);
      }
      out += opt.newline;
    }
  });
  if (!opt.footer.empty()) commented(opt.footer);
  return out;
}

}  // namespace

namespace {

void feed_string(TextParser& p, std::string_view text) {
  const char* b = text.data();
  const char* e = b + text.size();
  const char* rest = feed_lines(p, b, e);
  if (rest < e && !p.done()) p.line(rest, e);
}

// Feeds the lines of a plain or gzip-compressed file to p.
void feed_file(TextParser& p, const std::string& path, const std::string& where) {
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) TIDE_FAIL(where, ": cannot open file: ", errno ? std::strerror(errno) : "out of memory");
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  gzbuffer(f, 1 << 17);
  std::vector<char> buf(kBlock);
  size_t have = 0;  // bytes of an unfinished line kept at the start of buf
  for (;;) {
    if (have == buf.size()) buf.resize(buf.size() * 2);  // a line longer than the buffer
    int got = gzread(f, buf.data() + have, unsigned(std::min<size_t>(buf.size() - have, size_t(1) << 30)));
    if (got < 0) {
      int err;
      const char* msg = gzerror(f, &err);
      TIDE_FAIL(where, ": ", err == Z_ERRNO ? std::strerror(errno) : msg,
                err == Z_DATA_ERROR ? " (corrupt gzip data)" : "");
    }
    if (got == 0) {
      int err;
      const char* msg = gzerror(f, &err);
      if (err != Z_OK && err != Z_STREAM_END)
        TIDE_FAIL(where, ": ", msg, " (truncated or corrupt gzip data)");
      break;
    }
    const char* b = buf.data();
    const char* e = b + have + size_t(got);
    const char* rest = feed_lines(p, b, e);
    if (p.done()) return;
    have = size_t(e - rest);
    std::memmove(buf.data(), rest, have);
  }
  if (have > 0 && !p.done()) p.line(buf.data(), buf.data() + have);
}

}  // namespace

Tensor loadtxt_string(std::string_view text, const LoadtxtOptions& opt, const std::string& name, const char* op) {
  TextParser p(opt, where_of(op, name));
  feed_string(p, text);
  return p.result().table;
}

Tensor loadtxt(const std::string& path, const LoadtxtOptions& opt, const char* op) {
  std::string where = where_of(op, path);
  TextParser p(opt, where);
  feed_file(p, path, where);
  return p.result().table;
}

Genfromtxt genfromtxt_string(std::string_view text, const GenfromtxtOptions& opt, const std::string& name,
                             const char* op) {
  TextParser p(opt, where_of(op, name), &opt);
  feed_string(p, text);
  return p.result();
}

Genfromtxt genfromtxt(const std::string& path, const GenfromtxtOptions& opt, const char* op) {
  std::string where = where_of(op, path);
  TextParser p(opt, where, &opt);
  feed_file(p, path, where);
  return p.result();
}

std::string savetxt_string(const Tensor& t, const SavetxtOptions& opt, const char* op) {
  return savetxt_impl(t, opt, op);
}

void savetxt(const std::string& path, const Tensor& t, const SavetxtOptions& opt, const char* op) {
  std::string where = where_of(op, path);
  std::string text = savetxt_impl(t, opt, op);
  const bool gz = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (!f) TIDE_FAIL(where, ": cannot open file for writing: ", errno ? std::strerror(errno) : "zlib error");
    size_t off = 0;
    bool ok = true;
    while (ok && off < text.size()) {
      unsigned n = unsigned(std::min<size_t>(text.size() - off, size_t(1) << 30));
      ok = gzwrite(f, text.data() + off, n) == int(n);
      off += n;
    }
    ok = gzclose(f) == Z_OK && ok;
    TIDE_CHECK(ok, where, ": write error");
    return;
  }
  write_plain(path, where, text);
}

namespace {

// Python's str() of a float: the shortest digits that read back, in fixed notation for
// exponents -4..15 (with at least one decimal: "2.0") and scientific otherwise ("1e-05").
std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const size_t epos = sci.find('e');
  const int exp = std::atoi(sci.c_str() + epos + 1);
  if (exp < -4 || exp >= 16) return sci;
  std::string sign = sci[0] == '-' ? "-" : "";
  std::string digits;
  for (size_t k = sign.size(); k < epos; ++k)
    if (sci[k] != '.') digits += sci[k];
  std::string ip, fp;
  if (exp >= 0) {
    if (digits.size() <= size_t(exp) + 1) digits.resize(size_t(exp) + 1, '0');
    ip = digits.substr(0, size_t(exp) + 1);
    fp = digits.substr(size_t(exp) + 1);
  } else {
    ip = "0";
    fp = std::string(size_t(-exp - 1), '0') + digits;
  }
  return sign + ip + "." + (fp.empty() ? "0" : fp);
}

// The whole of a regular file.
std::string read_all(const std::string& path, const std::string& where) {
  FileSource in(path, where);
  TIDE_CHECK(in.size() < (uint64_t(1) << 40), where, ": file too large (", in.size(), " bytes)");
  std::string data(size_t(in.size()), '\0');
  in.read_at(0, data.data(), data.size());
  return data;
}

// Text fromfile: numbers separated by sep, whitespace around it ignored.
Tensor fromfile_text(const std::string& text, const FromfileOptions& o, const std::string& where) {
  const bool floating = is_floating(o.dtype);
  int64_t lo, hi;
  int_range(o.dtype, lo, hi);
  std::string sep = o.sep;  // whitespace in sep matches any run of whitespace, which is skipped anyway
  sep.erase(std::remove_if(sep.begin(), sep.end(), [](char c) { return is_space(c) || c == '\n'; }), sep.end());
  auto ws = [](char c) { return is_space(c) || c == '\n'; };
  std::vector<double> fv;
  std::vector<int64_t> iv;
  const char* p = text.data();
  const char* e = p + text.size();
  int64_t n = 0;
  while (o.count < 0 || n < o.count) {
    while (p < e && ws(*p)) ++p;
    if (p == e) break;
    const char* b = p;
    while (p < e && !ws(*p) && (sep.empty() || std::string_view(p, size_t(e - p)).substr(0, sep.size()) != sep)) ++p;
    bool ok;
    if (floating) {
      double v;
      ok = parse_double(b, p, v);
      fv.push_back(v);
    } else {
      int64_t v;
      ok = parse_int(b, p, v) && v >= lo && v <= hi;
      iv.push_back(v);
    }
    if (!ok)
      TIDE_FAIL(where, ": could not convert '", quote_user(std::string_view(b, size_t(p - b))), "' (item ", n + 1,
                ") to ", dtype_name(o.dtype));
    ++n;
    while (p < e && ws(*p)) ++p;
    if (p == e) break;
    if (!sep.empty()) {
      TIDE_CHECK(std::string_view(p, size_t(e - p)).substr(0, sep.size()) == sep, where, ": expected the separator '",
                 quote_user(o.sep), "' after item ", n, ", found '", quote_user(std::string_view(p, std::min<size_t>(size_t(e - p), 20))), "'");
      p += sep.size();
    }
  }
  TIDE_CHECK(o.count < 0 || n == o.count, where, ": count asks for ", o.count, " items, but the file has only ", n);
  Tensor t = Tensor::empty(Dims{n}, o.dtype, Device{}, where.c_str());
  if (floating) {
    TIDE_DISPATCH_FLOAT(o.dtype, "np.fromfile", [&] {
      scalar_t* q = t.data<scalar_t>();
      for (double v : fv) *q++ = scalar_t(compute_t<scalar_t>(v));
    });
  } else {
    TIDE_DISPATCH_INTEGRAL(o.dtype, "np.fromfile", [&] {
      scalar_t* q = t.data<scalar_t>();
      for (int64_t v : iv) {
        if constexpr (std::is_same_v<scalar_t, bool>) *q++ = v != 0;
        else *q++ = scalar_t(v);
      }
    });
  }
  return t;
}

}  // namespace

void tofile(const std::string& path, const Tensor& t0, const TofileOptions& opt, const char* op) {
  const std::string where = where_of(op, path);
  TIDE_CHECK(t0.defined(), op, ": got an undefined tensor");
  TIDE_CHECK(opt.format.empty() || !opt.sep.empty(), op, ": format applies to text output; give sep too");
  const Tensor t = to_host(t0).contiguous();
  std::string out;
  if (opt.sep.empty()) {
    out.assign(static_cast<const char*>(t.data_ptr()), t.nbytes());
    write_plain(path, where, out);
    return;
  }
  FmtSpec spec;
  if (!opt.format.empty()) {
    Format f = parse_format(opt.format, op);
    TIDE_CHECK(f.specs.size() == 1, op, ": format '", quote_user(opt.format), "' must have one conversion, it has ",
               f.specs.size());
    spec = f.specs[0];
    spec.spec = spec.literal + spec.spec + f.tail;
  }
  char buf[512];
  TIDE_DISPATCH_ALL(t.dtype(), op, [&] {
    const scalar_t* p = t.data<scalar_t>();
    const int64_t n = t.numel();
    for (int64_t k = 0; k < n; ++k) {
      if (k) out += opt.sep;
      if (!opt.format.empty()) out += format_value(buf, spec.spec, spec.integer, p[k], opt.format, op);
      else if constexpr (std::is_same_v<scalar_t, bool>) out += p[k] ? "True" : "False";
      else if constexpr (std::is_integral_v<scalar_t>) out += std::to_string(p[k]);
      else out += python_float(double(compute_t<scalar_t>(p[k])));
    }
  });
  write_plain(path, where, out);
}

Tensor fromfile(const std::string& path, const FromfileOptions& o, const char* op) {
  const std::string where = where_of(op, path);
  TIDE_CHECK(o.count >= -1, op, ": count must be -1 (all) or >= 0, got ", o.count);
  TIDE_CHECK(o.offset >= 0, op, ": offset must be >= 0, got ", o.offset);
  if (!o.sep.empty()) {
    TIDE_CHECK(o.offset == 0, op, ": offset is only for binary files (sep=\"\")");
    return fromfile_text(read_all(path, where), o, where);
  }
  FileSource in(path, where);
  const uint64_t item = dtype_size(o.dtype);
  TIDE_CHECK(uint64_t(o.offset) <= in.size(), where, ": offset ", o.offset, " is past the end of the file (",
             in.size(), " bytes)");
  const uint64_t avail = in.size() - uint64_t(o.offset);
  uint64_t n;
  if (o.count < 0) {
    TIDE_CHECK(avail % item == 0, where, ": the ", avail, " bytes after offset ", o.offset, " are not a whole number of ",
               dtype_name(o.dtype), " items (", item, " bytes each)");
    n = avail / item;
  } else {
    n = uint64_t(o.count);
    TIDE_CHECK(n <= avail / item, where, ": count asks for ", o.count, " items of ", dtype_name(o.dtype),
               ", but the file has ", avail / item, " after offset ", o.offset);
  }
  Tensor t = Tensor::empty(Dims{int64_t(n)}, o.dtype, Device{}, op);
  if (n) in.read_at(uint64_t(o.offset), t.data_ptr(), size_t(n * item));
  if (o.dtype == DType::Bool) {  // any nonzero byte is true; a C++ bool must hold exactly 0 or 1
    unsigned char* p = static_cast<unsigned char*>(t.data_ptr());
    for (uint64_t k = 0; k < n; ++k) p[k] = p[k] != 0;
  }
  return t;
}

}  // namespace tide::io
