// np.loadtxt / np.savetxt (see text.hpp).
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
  TextParser(const LoadtxtOptions& o, std::string where) : o_(o), where_(std::move(where)) {
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
  }

  // One physical line, without its '\n'.
  void line(const char* b, const char* e) {
    ++line_no_;
    if (done_ || line_no_ <= o_.skiprows) return;
    for (const std::string& c : o_.comments) {
      const char* hit = c.size() == 1 ? static_cast<const char*>(std::memchr(b, c[0], size_t(e - b)))
                                      : std::search(b, e, c.begin(), c.end());
      if (hit && hit < e) e = hit;
    }
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
    if (fields_.empty()) return;
    const int64_t nf = int64_t(fields_.size());
    if (o_.usecols.empty()) {
      if (ncols_ < 0) ncols_ = nf;
      else if (nf != ncols_)
        TIDE_FAIL(where_, " line ", line_no_, ": found ", nf, " columns, but the rows before have ", ncols_,
                  " (use usecols to read a subset)");
      for (int64_t c = 0; c < nf; ++c) value(c);
    } else {
      for (int64_t c : o_.usecols) {
        int64_t k = c < 0 ? c + nf : c;
        if (k < 0 || k >= nf)  // 1-based in the message; unsigned, so that c = INT64_MAX says 2^63
          TIDE_FAIL(where_, " line ", line_no_, ": usecols asks for column ",
                    c >= 0 ? std::to_string(uint64_t(c) + 1) : std::to_string(c), ", but the line has ", nf,
                    " columns");
        value(k);
      }
    }
    ++rows_;
    if (o_.max_rows >= 0 && rows_ >= o_.max_rows) done_ = true;
  }

  bool done() const { return done_; }

  Tensor result() {
    const int64_t cols = !o_.usecols.empty() ? int64_t(o_.usecols.size()) : ncols_ < 0 ? 1 : ncols_;
    Dims shape{rows_, cols};
    Tensor t = Tensor::empty(shape, o_.dtype, Device{}, where_.c_str());
    const int64_t n = rows_ * cols;
    if (floating_) {
      TIDE_ASSERT(fvals_.size() == size_t(n));
      TIDE_DISPATCH_FLOAT(o_.dtype, "np.loadtxt", [&] {
        scalar_t* p = t.data<scalar_t>();
        fvals_.for_each([&](double v) { *p++ = scalar_t(compute_t<scalar_t>(v)); });
      });
    } else {
      TIDE_ASSERT(ivals_.size() == size_t(n));
      TIDE_DISPATCH_INTEGRAL(o_.dtype, "np.loadtxt", [&] {
        scalar_t* p = t.data<scalar_t>();
        ivals_.for_each([&](int64_t v) {
          if constexpr (std::is_same_v<scalar_t, bool>) *p++ = v != 0;
          else *p++ = scalar_t(v);
        });
      });
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
    return Tensor::make_view(t.storage(), s, contiguous_strides(s), 0, t.dtype());
  }

 private:
  void value(int64_t col) {
    const auto [b, e] = fields_[size_t(col)];
    if (floating_) {
      double v;
      if (!parse_double(b, e, v)) bad(b, e, col);
      fvals_.push_back(v);
    } else {
      int64_t v;
      if (!parse_int(b, e, v)) bad(b, e, col);
      if (v < lo_ || v > hi_)
        TIDE_FAIL(where_, " line ", line_no_, " column ", col + 1, ": ", v, " is out of range for ",
                  dtype_name(o_.dtype));
      ivals_.push_back(v);
    }
  }
  [[noreturn]] void bad(const char* b, const char* e, int64_t col) {
    TIDE_FAIL(where_, " line ", line_no_, " column ", col + 1, ": could not convert '",
              quote_user(std::string_view(b, size_t(e - b))), "' to ",
              dtype_name(o_.dtype));
  }

  const LoadtxtOptions& o_;
  std::string where_;
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
        scalar_t raw = base[r * rs + c * cs];
        int n;
        if (s.integer) {
          long long v;
          if constexpr (std::is_integral_v<scalar_t>) {
            v = (long long)raw;
          } else {
            double d = double(compute_t<scalar_t>(raw));
            TIDE_CHECK(std::isfinite(d) && std::fabs(d) < 9.2e18, op, ": cannot format ", d, " with '", quote_user(opt.fmt),
                       "' (an integer conversion)");
            v = (long long)d;
          }
          n = std::snprintf(buf, sizeof buf, spec.c_str(), v);
        } else {
          double d;
          if constexpr (std::is_integral_v<scalar_t>) d = double(raw);
          else d = double(compute_t<scalar_t>(raw));
          n = std::snprintf(buf, sizeof buf, spec.c_str(), d);
        }
        TIDE_CHECK(n >= 0 && size_t(n) < sizeof buf, op, ": formatted value is too long (format '", quote_user(opt.fmt), "')");
        out.append(buf, size_t(n));
      }
      out += opt.newline;
    }
  });
  if (!opt.footer.empty()) commented(opt.footer);
  return out;
}

}  // namespace

Tensor loadtxt_string(std::string_view text, const LoadtxtOptions& opt, const std::string& name, const char* op) {
  std::string where = where_of(op, name);
  TextParser p(opt, where);
  const char* b = text.data();
  const char* e = b + text.size();
  const char* rest = feed_lines(p, b, e);
  if (rest < e && !p.done()) p.line(rest, e);
  return p.result();
}

Tensor loadtxt(const std::string& path, const LoadtxtOptions& opt, const char* op) {
  std::string where = where_of(op, path);
  TextParser p(opt, where);
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
    if (p.done()) return p.result();
    have = size_t(e - rest);
    std::memmove(buf.data(), rest, have);
  }
  if (have > 0 && !p.done()) p.line(buf.data(), buf.data() + have);
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
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) TIDE_FAIL(where, ": cannot open file for writing: ", std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  TIDE_CHECK(ok, where, ": write error: ", std::strerror(errno));
}

}  // namespace tide::io
