// The global Philox generator (the scheme is documented in random.hpp).
#include "random.hpp"

#include "error.hpp"

namespace tide {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> g(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> g(mu_);
  return seed_;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> g(mu_);
  return offset_;
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> g(mu_);
  seed_ = seed;
  offset_ = offset;
}

Generator::Draw Generator::reserve(int64_t n, int words) {
  TIDE_ASSERT(n >= 0 && (words == 1 || words == 2 || words == 4));
  // ceil(n * words / 4) without overflowing for any int64 n.
  uint64_t blocks = words == 4 ? uint64_t(n) : (uint64_t(n) / (4 / words)) + (uint64_t(n) % (4 / words) != 0);
  std::lock_guard<std::mutex> g(mu_);
  Draw d{seed_, offset_};
  offset_ += blocks;
  return d;
}

static thread_local Generator* t_generator = nullptr;

Generator* set_thread_generator(Generator* g) {
  Generator* previous = t_generator;
  t_generator = g;
  return previous;
}

Generator& default_generator() {
  if (t_generator) return *t_generator;
  static Generator* gen = new Generator();  // never destroyed: usable during static teardown
  return *gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace tide
