// PyTorch-style tensor printing: a transcription of torch/_tensor_str.py (1.13) — the
// _Formatter (int mode, scientific mode, one width for all elements), _vector_str,
// _tensor_str_with_formatter, get_summarized_data and _add_suffixes.
#include "print.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <unordered_map>

#include "ops/index.hpp"

namespace tide {

namespace {

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

enum class Kind { Float, Int, Bool, Complex };

// Python's '{:.Nf}' / '{:.Ne}' of a float: like printf, but nan is always "nan".
std::string py_float(double v, char conv, int prec) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[512];
  std::snprintf(buf, sizeof buf, conv == 'e' ? "%.*e" : "%.*f", prec, v);
  return buf;
}

std::string pad_left(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

template <typename T>
double part_of(T x, int which) {
  if constexpr (is_complex_v<T>) return double(which ? x.imag() : x.real());
  else return double(compute_t<T>(x));
}

// _Formatter of a floating tensor: int mode (every shown value an integer), scientific mode
// when the magnitudes call for it, one width for all.
struct FloatFormatter {
  bool int_mode = true;
  bool sci_mode = false;
  size_t width = 1;

  void init(const std::vector<double>& all) {
    std::vector<double> vals;
    for (double v : all)
      if (std::isfinite(v) && v != 0) vals.push_back(v);
    if (vals.empty()) return;
    double mn = std::abs(vals[0]), mx = mn;
    for (double v : vals) {
      mn = std::min(mn, std::abs(v));
      mx = std::max(mx, std::abs(v));
      if (v != std::ceil(v)) int_mode = false;
    }
    if (int_mode) {
      if (mx / mn > 1000.0 || mx > 1e8) {
        sci_mode = true;
        for (double v : vals) width = std::max(width, py_float(v, 'e', kPrecision).size());
      } else {
        for (double v : vals) width = std::max(width, py_float(v, 'f', 0).size() + 1);
      }
    } else {
      if (mx / mn > 1000.0 || mx > 1e8 || mn < 1e-4) {
        sci_mode = true;
        for (double v : vals) width = std::max(width, py_float(v, 'e', kPrecision).size());
      } else {
        for (double v : vals) width = std::max(width, py_float(v, 'f', kPrecision).size());
      }
    }
  }

  std::string format(double v) const {
    std::string s;
    if (sci_mode) {
      s = py_float(v, 'e', kPrecision);
    } else if (int_mode) {
      s = py_float(v, 'f', 0);
      if (std::isfinite(v)) s += '.';
    } else {
      s = py_float(v, 'f', kPrecision);
    }
    return pad_left(std::move(s), width);
  }
};

// Reads only the elements it shows (get_summarized_data's), so that printing a view of
// 2^40 elements costs no more than printing a small one; from a device, only those elements
// cross to the host.
class Printer {
 public:
  explicit Printer(const Tensor& t) : t_(t) {
    DType d = t.dtype();
    kind_ = is_complex(d) ? Kind::Complex : is_floating(d) ? Kind::Float : is_bool(d) ? Kind::Bool : Kind::Int;
    summarize_ = t.numel() > kThreshold;
    std::vector<int64_t> offs;
    collect(0, 0, offs);
    if (t.device().is_cpu()) {
      base_ = static_cast<const char*>(t.data_ptr());
    } else {
      fetch_shown(offs);
    }
    init_formatter(offs);
  }

  std::string str(int indent) { return tensor_str(0, 0, indent); }

 private:
  // A device tensor's shown elements, gathered into a host copy; off_to_host_ maps an element
  // offset (from the data pointer) to its position there.
  void fetch_shown(const std::vector<int64_t>& offs) {
    Tensor pos = Tensor::empty({int64_t(offs.size())}, DType::Int64);
    int64_t* p = pos.data<int64_t>();
    for (size_t i = 0; i < offs.size(); ++i) {
      p[i] = t_.offset() + offs[i];
      off_to_host_.emplace(offs[i], int64_t(i));
    }
    shown_ = ops::take_on_device("print", t_, pos).to_device({});
    base_ = static_cast<const char*>(shown_.data_ptr());
  }
  int64_t at(int64_t off) const { return off_to_host_.empty() ? off : off_to_host_.at(off); }

  // Element values, by offset in elements from the tensor's data pointer: a float, or part
  // `which` (0 real, 1 imaginary) of a complex element.
  double get_double(int64_t off, int which = 0) const {
    off = at(off);
    double v = 0;
    TIDE_DISPATCH_ALL_AND_COMPLEX(t_.dtype(), "print", [&] {
      v = part_of(reinterpret_cast<const scalar_t*>(base_)[off], which);
    });
    return v;
  }
  std::string plain(int64_t off) const {  // '{}'.format(value) for ints and bools
    off = at(off);
    std::string out;
    TIDE_DISPATCH_ALL(t_.dtype(), "print", [&] {
      scalar_t v = reinterpret_cast<const scalar_t*>(base_)[off];
      if constexpr (std::is_same_v<scalar_t, bool>) out = v ? "True" : "False";
      else if constexpr (std::is_integral_v<scalar_t>) out = std::to_string(v);
    });
    return out;
  }

  // The offsets of the elements that will be shown (get_summarized_data).
  void collect(int d, int64_t off, std::vector<int64_t>& out) const {
    if (d == t_.dim()) {
      out.push_back(off);
      return;
    }
    int64_t n = t_.size(d), st = t_.stride(d);
    if (summarize_ && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) collect(d + 1, off + i * st, out);
      for (int64_t i = n - kEdgeItems; i < n; ++i) collect(d + 1, off + i * st, out);
    } else {
      for (int64_t i = 0; i < n; ++i) collect(d + 1, off + i * st, out);
    }
  }

  // A complex tensor has a formatter for the real parts and one for the imaginary parts.
  void init_formatter(const std::vector<int64_t>& offs) {
    if (kind_ == Kind::Int || kind_ == Kind::Bool) {
      for (int64_t o : offs) width_ = std::max(width_, plain(o).size());
      return;
    }
    for (int part = 0; part < (kind_ == Kind::Complex ? 2 : 1); ++part) {
      std::vector<double> vals;
      for (int64_t o : offs) vals.push_back(get_double(o, part));
      formatter_[part].init(vals);
    }
    width_ = formatter_[0].width;
  }

  // A complex element as PyTorch writes it: "1.5000+2.0000j", the imaginary part with its
  // padding stripped and a sign always.
  std::string format(int64_t off) const {
    if (kind_ == Kind::Int || kind_ == Kind::Bool) return pad_left(plain(off), width_);
    std::string s = formatter_[0].format(get_double(off));
    if (kind_ == Kind::Float) return s;
    std::string im = formatter_[1].format(get_double(off, 1)) + "j";
    im.erase(0, im.find_first_not_of(' '));
    return s + (im[0] == '+' || im[0] == '-' ? "" : "+") + im;
  }

  std::string vector_str(int64_t off, int indent) const {
    const int d = t_.dim() - 1;
    const int64_t n = t_.size(d), st = t_.stride(d);
    int64_t element_length = int64_t(width_) + 2;
    if (kind_ == Kind::Complex) element_length += int64_t(formatter_[1].width) + 1;
    const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / element_length);
    std::vector<std::string> data;
    if (summarize_ && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) data.push_back(format(off + i * st));
      data.push_back(" ...");
      for (int64_t i = n - kEdgeItems; i < n; ++i) data.push_back(format(off + i * st));
    } else {
      for (int64_t i = 0; i < n; ++i) data.push_back(format(off + i * st));
    }
    std::string out = "[";
    const std::string line_sep = ",\n" + std::string(size_t(indent + 1), ' ');
    for (size_t i = 0; i < data.size(); ++i) {
      if (i > 0) out += (int64_t(i) % per_line == 0) ? line_sep : ", ";
      out += data[i];
    }
    return out + "]";
  }

  std::string tensor_str(int d, int64_t off, int indent) const {
    const int ndim = t_.dim() - d;
    if (ndim == 0) return format(off);
    if (ndim == 1) return vector_str(off, indent);
    const int64_t n = t_.size(d), st = t_.stride(d);
    std::vector<std::string> slices;
    if (summarize_ && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) slices.push_back(tensor_str(d + 1, off + i * st, indent + 1));
      slices.push_back("...");
      for (int64_t i = n - kEdgeItems; i < n; ++i) slices.push_back(tensor_str(d + 1, off + i * st, indent + 1));
    } else {
      for (int64_t i = 0; i < n; ++i) slices.push_back(tensor_str(d + 1, off + i * st, indent + 1));
    }
    const std::string sep = "," + std::string(size_t(ndim - 1), '\n') + std::string(size_t(indent + 1), ' ');
    std::string out = "[";
    for (size_t i = 0; i < slices.size(); ++i) {
      if (i > 0) out += sep;
      out += slices[i];
    }
    return out + "]";
  }

  const Tensor& t_;
  const char* base_ = nullptr;
  Tensor shown_;
  std::unordered_map<int64_t, int64_t> off_to_host_;
  Kind kind_;
  bool summarize_ = false;
  FloatFormatter formatter_[2];  // floats: [0]; complex: the real and the imaginary parts
  size_t width_ = 1;
};

std::string add_suffixes(const std::string& tensor_str, const std::vector<std::string>& suffixes,
                         int indent) {
  std::string out = tensor_str;
  size_t nl = tensor_str.rfind('\n');
  int64_t last_line_len = int64_t(tensor_str.size()) - (nl == std::string::npos ? -1 : int64_t(nl)) + 1;
  for (const std::string& s : suffixes) {
    int64_t len = int64_t(s.size());
    if (last_line_len + len + 2 > kLineWidth) {
      out += ",\n" + std::string(size_t(indent), ' ') + s;
      last_line_len = indent + len;
    } else {
      out += ", " + s;
      last_line_len += len + 2;
    }
  }
  return out + ")";
}

std::string torch_dtype(DType d) { return "torch." + std::string(dtype_name(d)); }

}  // namespace

std::string format_tensor_data(const Tensor& t, int indent) {
  if (t.numel() == 0) return "[]";
  return Printer(t).str(indent);
}

std::string format_tensor(const Tensor& t, DType default_float,
                          const std::vector<std::string>& extra_suffixes) {
  if (!t.defined()) return "tensor(<undefined>)";
  const std::string prefix = "tensor(";
  const int indent = int(prefix.size());
  std::vector<std::string> suffixes;
  if (!t.device().is_cpu()) suffixes.push_back("device='" + t.device().str() + "'");
  std::string body;
  if (t.numel() == 0) {
    if (t.dim() != 1) {
      std::string size = "size=(";
      for (int d = 0; d < t.dim(); ++d) {
        if (d > 0) size += ", ";
        size += std::to_string(t.size(d));
      }
      suffixes.push_back(size + ")");
    }
    if (t.dtype() != default_float) suffixes.push_back("dtype=" + torch_dtype(t.dtype()));
    body = "[]";
  } else {
    DType d = t.dtype();
    // PyTorch's default complex dtype is complex128 under a float64 default, else complex64.
    const DType default_complex = default_float == DType::Float64 ? DType::Complex128 : DType::Complex64;
    bool has_default = d == default_float || d == default_complex || d == DType::Int64 || d == DType::Bool;
    if (!has_default) suffixes.push_back("dtype=" + torch_dtype(d));
    body = format_tensor_data(t, indent);
  }
  for (const std::string& s : extra_suffixes) suffixes.push_back(s);
  return add_suffixes(prefix + body, suffixes, indent);
}

std::string format_tensor(const Tensor& t, DType default_float) {
  return format_tensor(t, default_float, {});
}

}  // namespace tide
