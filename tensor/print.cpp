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

enum class Kind { Float, Int, Bool };

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

// Reads only the elements it shows (get_summarized_data's), so that printing a view of
// 2^40 elements costs no more than printing a small one; from a device, only those elements
// cross to the host.
class Printer {
 public:
  explicit Printer(const Tensor& t) : t_(t) {
    DType d = t.dtype();
    kind_ = is_floating(d) ? Kind::Float : is_bool(d) ? Kind::Bool : Kind::Int;
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

  // Element values, by offset in elements from the tensor's data pointer.
  double get_double(int64_t off) const {
    off = at(off);
    double v = 0;
    TIDE_DISPATCH_ALL(t_.dtype(), "print", [&] {
      v = double(compute_t<scalar_t>(reinterpret_cast<const scalar_t*>(base_)[off]));
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

  void init_formatter(const std::vector<int64_t>& offs) {
    if (kind_ != Kind::Float) {
      for (int64_t o : offs) width_ = std::max(width_, plain(o).size());
      return;
    }
    std::vector<double> vals;
    for (int64_t o : offs) {
      double v = get_double(o);
      if (std::isfinite(v) && v != 0) vals.push_back(v);
    }
    if (vals.empty()) return;
    double mn = std::abs(vals[0]), mx = mn;
    for (double v : vals) {
      mn = std::min(mn, std::abs(v));
      mx = std::max(mx, std::abs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    if (int_mode_) {
      if (mx / mn > 1000.0 || mx > 1e8) {
        sci_mode_ = true;
        for (double v : vals) width_ = std::max(width_, py_float(v, 'e', kPrecision).size());
      } else {
        for (double v : vals) width_ = std::max(width_, py_float(v, 'f', 0).size() + 1);
      }
    } else {
      if (mx / mn > 1000.0 || mx > 1e8 || mn < 1e-4) {
        sci_mode_ = true;
        for (double v : vals) width_ = std::max(width_, py_float(v, 'e', kPrecision).size());
      } else {
        for (double v : vals) width_ = std::max(width_, py_float(v, 'f', kPrecision).size());
      }
    }
  }

  std::string format(int64_t off) const {
    std::string s;
    if (kind_ == Kind::Float) {
      double v = get_double(off);
      if (sci_mode_) {
        s = pad_left(py_float(v, 'e', kPrecision), width_);
      } else if (int_mode_) {
        s = py_float(v, 'f', 0);
        if (std::isfinite(v)) s += '.';
      } else {
        s = py_float(v, 'f', kPrecision);
      }
    } else {
      s = plain(off);
    }
    return pad_left(std::move(s), width_);
  }

  std::string vector_str(int64_t off, int indent) const {
    const int d = t_.dim() - 1;
    const int64_t n = t_.size(d), st = t_.stride(d);
    const int64_t element_length = int64_t(width_) + 2;
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
  bool int_mode_ = true;
  bool sci_mode_ = false;
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
    bool has_default = d == default_float || d == DType::Int64 || d == DType::Bool;
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
