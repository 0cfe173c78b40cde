// dtype names, sizes and PyTorch's promotion lattice.
#include "dtype.hpp"

#include <atomic>

namespace tide {

size_t dtype_size(DType t) {
  static constexpr size_t sizes[kNumDTypes] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 2, 4, 8};
  return sizes[int(t)];
}

std::string_view dtype_name(DType t) {
  static constexpr std::string_view names[kNumDTypes] = {
      "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
      "uint16", "uint32", "uint64"};
  return names[int(t)];
}

bool parse_dtype(std::string_view name, DType& out) {
  struct Alias {
    std::string_view name;
    DType dtype;
  };
  static constexpr Alias aliases[] = {
      {"bool", DType::Bool},        {"uint8", DType::UInt8},       {"byte", DType::UInt8},
      {"int8", DType::Int8},        {"int16", DType::Int16},       {"short", DType::Int16},
      {"int32", DType::Int32},      {"int", DType::Int32},         {"int64", DType::Int64},
      {"long", DType::Int64},       {"float16", DType::Float16},   {"half", DType::Float16},
      {"bfloat16", DType::BFloat16}, {"float32", DType::Float32},  {"float", DType::Float32},
      {"float64", DType::Float64},  {"double", DType::Float64},   {"uint16", DType::UInt16},
      {"uint32", DType::UInt32},    {"uint64", DType::UInt64}};
  for (const Alias& a : aliases)
    if (a.name == name) {
      out = a.dtype;
      return true;
    }
  return false;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  constexpr DType b1 = DType::Bool, u1 = DType::UInt8, i1 = DType::Int8, i2 = DType::Int16,
                  i4 = DType::Int32, i8 = DType::Int64, f2 = DType::Float16, bf = DType::BFloat16,
                  f4 = DType::Float32, f8 = DType::Float64, u2 = DType::UInt16, u4 = DType::UInt32,
                  u8 = DType::UInt64;
  // Row/column order follows the enum. The first ten columns are c10's table. PyTorch 1.13
  // has no uint16/32/64, so their rows follow NumPy's promote_types (uint64 with any signed
  // integer gives float64; uint32 with float16/float32 gives float64); bfloat16 acts there
  // as float16 does in NumPy.
  static constexpr DType table[kNumDTypes][kNumDTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, u2, u4, u8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, u2, u4, u8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, i4, i8, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, i4, i8, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, i4, i8, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, i8, i8, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, f4, f8, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, f4, f8, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, f4, f8, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
      /* u2 */ {u2, u2, i4, i4, i4, i8, f4, f4, f4, f8, u2, u4, u8},
      /* u4 */ {u4, u4, i8, i8, i8, i8, f8, f8, f8, f8, u4, u4, u8},
      /* u8 */ {u8, u8, f8, f8, f8, f8, f8, f8, f8, f8, u8, u8, u8},
  };
  return table[int(a)][int(b)];
}

static std::atomic<DType> g_default_float{DType::Float32};
static thread_local int t_default_override = -1;
static thread_local DType* t_default_slot = nullptr;

DType default_float_dtype() {
  if (t_default_override >= 0) return DType(t_default_override);
  return t_default_slot ? *t_default_slot : g_default_float.load(std::memory_order_relaxed);
}

DType* set_thread_default_dtype_slot(DType* slot) {
  DType* previous = t_default_slot;
  t_default_slot = slot;
  return previous;
}

DefaultFloatScope::DefaultFloatScope(DType t) : saved_(t_default_override) { t_default_override = int(t); }
DefaultFloatScope::~DefaultFloatScope() { t_default_override = saved_; }
void set_default_float_dtype(DType t) {
  if (t_default_slot) *t_default_slot = t;
  else g_default_float.store(t, std::memory_order_relaxed);
}

DType Scalar::natural_dtype() const {
  switch (kind) {
    case Bool: return DType::Bool;
    case Int: return DType::Int64;
    default: return default_float_dtype();
  }
}

// A scalar raises a tensor's dtype only when it is of a higher category
// (bool < integer < float): then it takes the default dtype of its category.
DType promote_with_scalar(DType t, const Scalar& s) {
  if (s.kind == Scalar::Float && !is_floating(t)) return default_float_dtype();
  if (s.kind == Scalar::Int && is_bool(t)) return DType::Int64;
  return t;
}

}  // namespace tide
