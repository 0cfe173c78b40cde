// tide::Interpreter: a Lua 5.4 state with the torch and numpy modules, for host applications
// that embed tide (API.md, "Embedding"). This header sees neither Lua nor the bindings.
//
// Values cross the boundary as tide::Value: nil, booleans, integers, floats, strings,
// tensors (shared, never copied) and tables of them (arrays and string-keyed maps).
// get<T>/set convert Values to and from numbers, bool, std::string, Tensor, std::vector<T>,
// std::map<std::string, T> and std::optional<T> (nil). Every failure of a script -- an
// error, an exceeded limit, a failed conversion -- throws tide::ScriptError and leaves the
// interpreter usable. One interpreter is used by one thread at a time (calls from several
// threads are serialised); several interpreters run on several threads at once, each with
// its own random generator, default dtype and memory budget.
#pragma once
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../tensor/tensor.hpp"

struct lua_State;

namespace tide {

// A script failed: the error message and the Lua traceback where it was raised (empty for
// errors outside Lua code, such as running out of the memory limit). what() gives both.
class ScriptError : public Error {
 public:
  ScriptError(std::string message, std::string traceback);
  const std::string& message() const { return message_; }
  const std::string& traceback() const { return traceback_; }

 private:
  std::string message_, traceback_;
};

// A Lua value as the host sees it.
class Value {
 public:
  using Array = std::vector<Value>;
  using Map = std::map<std::string, Value>;
  using Variant = std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, Array, Map>;

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v(b) {}
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Value(I i) : v(int64_t(i)) {}
  template <std::floating_point F>
  Value(F f) : v(double(f)) {}
  Value(std::string s) : v(std::move(s)) {}
  Value(const char* s) : v(std::string(s)) {}
  Value(std::string_view s) : v(std::string(s)) {}
  Value(Tensor t) : v(std::move(t)) {}
  Value(Array a) : v(std::move(a)) {}
  Value(Map m) : v(std::move(m)) {}
  template <typename T>
  Value(const std::vector<T>& xs) : v(Array(xs.begin(), xs.end())) {}
  template <typename T>
  Value(const std::map<std::string, T>& m) : v(Map(m.begin(), m.end())) {}
  template <typename T>
  Value(const std::optional<T>& x) {
    if (x) *this = Value(*x);
  }

  bool is_nil() const { return std::holds_alternative<std::monostate>(v); }
  // "nil", "boolean", "number", "string", "tensor" or "table", for error messages.
  const char* type_name() const;
  // Converts to T; throws tide::Error "<what>: expected <type>, got <type>" when it cannot.
  template <typename T>
  T as(const std::string& what) const;

  Variant v;

 private:
  [[noreturn]] void mismatch(const std::string& what, const char* expected) const;
};

struct InterpreterOptions {
  bool sandbox = false;              // no io, os.execute, package, debug, file ops, bytecode
  size_t memory_limit_bytes = 0;     // Lua heap + the interpreter's tensors; 0: no limit
  uint64_t instruction_limit = 0;    // Lua VM instructions per call into the interpreter; 0: none
  double time_limit_seconds = 0;     // wall-clock seconds per call into the interpreter; 0: none
  bool globals = false;              // also set the globals torch, np, nn, optim (as `tide` does)
};

class Interpreter {
 public:
  using Options = InterpreterOptions;
  using HostFunction = std::function<Value(const std::vector<Value>& args)>;

  explicit Interpreter(const Options& options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Runs Lua source; `chunkname` names it in error messages ("=name" as Lua spells it).
  void run_string(std::string_view code, const std::string& chunkname = "=(string)");
  // Runs a script file with `arg` set as the lua program sets it (arg[0] the path) and the
  // arguments also passed as `...`.
  void run_file(const std::string& path, const std::vector<std::string>& args = {});
  // Calls the function at `name` (a global or a dotted path such as "model.forward") and
  // returns its first result.
  Value call(const std::string& name, const std::vector<Value>& args = {});

  // Reads or writes a global, or a field through a dotted path ("model.fc.weight";
  // all-digit parts are integer keys: "layers.1").
  Value get_value(const std::string& name);
  void set_value(const std::string& name, const Value& value);
  template <typename T>
  T get(const std::string& name) {
    Value value = get_value(name);
    try {
      return value.as<T>(name);
    } catch (const ScriptError&) {
      throw;
    } catch (const Error& e) {
      throw ScriptError(e.what(), "");
    }
  }
  template <typename T>
  void set(const std::string& name, const T& value) {
    set_value(name, Value(value));
  }

  // Exposes a host function to scripts under `name`. Arguments are converted to the
  // parameter types and the result (if not void) back to Lua; an exception thrown by the
  // function becomes a Lua error "<name>: <what()>" that scripts may catch with pcall.
  template <typename F>
  void def(const std::string& name, F&& fn);
  void def_function(const std::string& name, HostFunction fn);

  // Bytes charged to the memory limit now (Lua heap + tensors); without a limit, the Lua heap.
  size_t memory_used() const;
  // The Lua state, for hosts that want the raw Lua C API (include <lua.hpp> to use it).
  lua_State* lua() const;

  struct State;

 private:
  std::unique_ptr<State> s_;
};

// ---- implementation of the templates ---------------------------------------------------

namespace detail {
template <typename T> struct is_vector : std::false_type {};
template <typename T> struct is_vector<std::vector<T>> : std::true_type {};
template <typename T> struct is_string_map : std::false_type {};
template <typename T> struct is_string_map<std::map<std::string, T>> : std::true_type {};
template <typename T> struct is_optional : std::false_type {};
template <typename T> struct is_optional<std::optional<T>> : std::true_type {};

template <typename R, typename... A>
Interpreter::HostFunction wrap_host(const std::string& name, std::function<R(A...)> fn) {
  return [name, fn = std::move(fn)](const std::vector<Value>& args) -> Value {
    if (args.size() > sizeof...(A))
      throw Error(name + ": expected at most " + std::to_string(sizeof...(A)) + " arguments, got " +
                  std::to_string(args.size()));
    auto invoke = [&]<size_t... I>(std::index_sequence<I...>) -> R {
      return fn((I < args.size() ? args[I] : Value())
                    .template as<std::decay_t<A>>(name + ": argument " + std::to_string(I + 1))...);
    };
    if constexpr (std::is_void_v<R>) {
      invoke(std::index_sequence_for<A...>{});
      return Value();
    } else {
      return Value(invoke(std::index_sequence_for<A...>{}));
    }
  };
}
}  // namespace detail

template <typename F>
void Interpreter::def(const std::string& name, F&& fn) {
  def_function(name, detail::wrap_host(name, std::function(std::forward<F>(fn))));
}

template <typename T>
T Value::as(const std::string& what) const {
  if constexpr (std::is_same_v<T, Value>) {
    return *this;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (auto* b = std::get_if<bool>(&v)) return *b;
    mismatch(what, "a boolean");
  } else if constexpr (std::is_integral_v<T>) {
    if (auto* i = std::get_if<int64_t>(&v)) return T(*i);
    if (auto* d = std::get_if<double>(&v); d && std::fabs(*d) < 9.2e18 && *d == std::trunc(*d))
      return T(int64_t(*d));
    mismatch(what, "an integer");
  } else if constexpr (std::is_floating_point_v<T>) {
    if (auto* i = std::get_if<int64_t>(&v)) return T(*i);
    if (auto* d = std::get_if<double>(&v)) return T(*d);
    mismatch(what, "a number");
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (auto* s = std::get_if<std::string>(&v)) return *s;
    mismatch(what, "a string");
  } else if constexpr (std::is_same_v<T, Tensor>) {
    if (auto* t = std::get_if<Tensor>(&v)) return *t;
    mismatch(what, "a tensor");
  } else if constexpr (detail::is_optional<T>::value) {
    if (is_nil()) return std::nullopt;
    return as<typename T::value_type>(what);
  } else if constexpr (detail::is_vector<T>::value) {
    auto* a = std::get_if<Array>(&v);
    if (!a) mismatch(what, "an array table");
    T out;
    out.reserve(a->size());
    for (size_t i = 0; i < a->size(); ++i)
      out.push_back((*a)[i].template as<typename T::value_type>(what + "[" + std::to_string(i + 1) + "]"));
    return out;
  } else if constexpr (detail::is_string_map<T>::value) {
    T out;
    if (auto* a = std::get_if<Array>(&v); a && a->empty()) return out;
    auto* m = std::get_if<Map>(&v);
    if (!m) mismatch(what, "a table with string keys");
    for (const auto& [key, value] : *m)
      out.emplace(key, value.template as<typename T::mapped_type>(what + "." + key));
    return out;
  } else {
    static_assert(sizeof(T) == 0, "tide::Value converts to numbers, bool, std::string, tide::Tensor, "
                                  "std::vector, std::map<std::string, T> and std::optional only");
  }
}

}  // namespace tide
