// Errors of the engine. TIDE_CHECK reports a user error (bad shapes, dtypes, indices): the
// message starts with the op name and becomes a Lua error at the binding boundary.
// TIDE_ASSERT guards internal invariants; a failure there is a bug in tide.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace tide {

// A user-facing error: the message is shown to the script as is.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Raised when an allocation cannot be satisfied; names the size asked for.
struct OutOfMemory : Error {
  using Error::Error;
};

namespace detail {
template <typename... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw Error(os.str());
}
}  // namespace detail

}  // namespace tide

#define TIDE_CHECK(cond, ...)                  \
  do {                                         \
    if (!(cond)) ::tide::detail::fail(__VA_ARGS__); \
  } while (0)

#define TIDE_FAIL(...) ::tide::detail::fail(__VA_ARGS__)

#define TIDE_ASSERT(cond)                                                              \
  do {                                                                                 \
    if (!(cond))                                                                       \
      ::tide::detail::fail("internal error (a bug in tide): ", #cond, " at ", __FILE__, \
                           ":", __LINE__);                                             \
  } while (0)
