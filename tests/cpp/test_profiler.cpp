// The profiler's recording core (tensor/profiler/): ranges nest as a stack, a range closed
// out of order closes those opened inside it, tokens of another session or thread are
// ignored, and profile_memory counts the CPU allocator's bytes.
#include <doctest/doctest.h>

#include <thread>

#include "../../tensor/allocator.hpp"
#include "../../tensor/error.hpp"
#include "../../tensor/profiler/profiler.hpp"

using namespace tide;

TEST_CASE("profiler: nothing records without a session") {
  CHECK(profiler::current_session() == 0);
  CHECK(profiler::begin("x") == -1);
  profiler::end(-1);
  CHECK_THROWS_AS(profiler::stop(), Error);
}

TEST_CASE("profiler: ranges nest, and their times lie inside their parents'") {
  uint32_t id = profiler::start({});
  CHECK(profiler::current_session() == id);
  CHECK_THROWS_AS(profiler::start({}), Error);
  int64_t a = profiler::begin("a");
  int64_t b = profiler::begin("b", profiler::Kind::Backward);
  profiler::end(b);
  int64_t c = profiler::begin("c", profiler::Kind::User);
  profiler::end(c);
  profiler::end(a);
  profiler::end(a);  // closed already: ignored
  std::vector<profiler::Event> ev = profiler::stop();
  CHECK(profiler::current_session() == 0);
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].name == "a");
  CHECK(ev[0].parent == -1);
  CHECK(ev[1].parent == 0);
  CHECK(ev[1].kind == profiler::Kind::Backward);
  CHECK(ev[2].parent == 0);
  CHECK(ev[2].kind == profiler::Kind::User);
  for (const auto& e : ev) CHECK(e.start_ns <= e.end_ns);
  CHECK(ev[1].start_ns >= ev[0].start_ns);
  CHECK(ev[1].end_ns <= ev[2].start_ns);
  CHECK(ev[2].end_ns <= ev[0].end_ns);
}

TEST_CASE("profiler: closing an outer range closes the inner ones; stop closes the rest") {
  profiler::start({});
  int64_t a = profiler::begin("a");
  int64_t b = profiler::begin("b");
  profiler::end(a);
  profiler::end(b);  // closed by a's end: ignored
  int64_t c = profiler::begin("c");
  profiler::begin("d");
  std::vector<profiler::Event> ev = profiler::stop();
  profiler::end(c);  // a token of a stopped session: ignored
  REQUIRE(ev.size() == 4);
  CHECK(ev[1].end_ns == ev[0].end_ns);
  CHECK(ev[2].parent == -1);
  CHECK(ev[3].parent == 2);
  CHECK(ev[3].end_ns == ev[2].end_ns);
}

TEST_CASE("profiler: a token of an earlier session and another thread's ranges are ignored") {
  profiler::start({});
  int64_t old = profiler::begin("old");
  profiler::stop();
  profiler::start({});
  int64_t a = profiler::begin("a");
  profiler::end(old);  // same index, earlier session
  int64_t other = 0;
  std::thread([&] { other = profiler::begin("elsewhere"); }).join();
  CHECK(other == -1);
  profiler::end(a);
  std::vector<profiler::Event> ev = profiler::stop();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].name == "a");
}

TEST_CASE("profiler: shapes, stacks and the allocator's bytes net, children included") {
  profiler::Options o;
  o.record_shapes = o.profile_memory = o.with_stack = true;
  profiler::start(o);
  int64_t outer = profiler::begin("outer");
  int64_t inner = profiler::begin("inner");
  profiler::set_shapes(inner, {{2, 3}, {}});
  profiler::set_stack(inner, {"a.lua:1"});
  void* p = cpu_allocate(4096);
  profiler::end(inner);
  void* q = cpu_allocate(1000);  // a 1024-byte class
  cpu_free(p, 4096);
  profiler::end(outer);
  cpu_free(q, 1000);
  std::vector<profiler::Event> ev = profiler::stop();
  REQUIRE(ev.size() == 2);
  CHECK(ev[1].memory == 4096);
  CHECK(ev[0].memory == 1024);  // 4096 + 1024 allocated, 4096 freed
  CHECK(ev[1].shapes == std::vector<std::vector<int64_t>>{{2, 3}, {}});
  CHECK(ev[1].stack == std::vector<std::string>{"a.lua:1"});
  CHECK(ev[0].shapes.empty());
}
