// Embedding tests (issue 7), built by tests/lua/test_embed.sh against the INSTALLED headers
// and library through pkg-config: zero copy both ways, values and host functions, script
// errors, every limit, sandbox escapes, two interpreters on two threads, Lua autograd callbacks
// that outlive their interpreter, DLPack, the C API.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <tide/tide.h>
#include <tide/tide.hpp>

#include <chrono>
#include <cstring>
#include <thread>

using tide::DType;
using tide::Interpreter;
using tide::ScriptError;
using tide::Tensor;

namespace {

// The message of the ScriptError that running `code` raises ("" and a failed check if none).
std::string script_error(Interpreter& vm, const std::string& code) {
  try {
    vm.run_string(code);
  } catch (const ScriptError& e) {
    return e.message();
  }
  FAIL_CHECK("expected a ScriptError from: " << code);
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Trains a small model from a fixed seed and returns the final loss and a weight.
const char* kTraining = R"lua(
  local torch = require "torch"
  torch.manual_seed(7)
  local x, y = torch.randn(64, 8), torch.randn(64, 1)
  local model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
  local opt = torch.optim.Adam(model:parameters(), {lr = 0.01})
  for _ = 1, 60 do
    opt:zero_grad()
    local loss = torch.nn.MSELoss()(model(x), y)
    loss:backward()
    opt:step()
    final_loss = loss:item()
  end
  w = model:parameters()[1]:detach():sum():item()
)lua";

}  // namespace

TEST_CASE("host memory goes into a script without a copy") {
  float host[6] = {1, 2, 3, 4, 5, 6};
  Interpreter vm({.globals = true});
  vm.set("x", Tensor::from_blob(host, {2, 3}, DType::Float32));
  vm.run_string("x:mul_(2); s = x:sum(1)");
  CHECK(host[0] == 2);
  CHECK(host[5] == 12);
  Tensor s = vm.get<Tensor>("s");
  CHECK(s.shape() == tide::Dims{3});
  CHECK(s.dtype() == DType::Float32);
  CHECK(s.data<float>()[0] == 10);  // 2 + 8
  CHECK(s.data<float>()[2] == 18);  // 6 + 12
  CHECK(vm.get<Tensor>("x").data_ptr() == static_cast<void*>(host));
}

TEST_CASE("script tensors come out without a copy") {
  Interpreter vm({.globals = true});
  vm.run_string("y = torch.zeros(2, 4, {dtype = 'float64'})");
  Tensor y = vm.get<Tensor>("y");
  CHECK(y.shape() == tide::Dims{2, 4});
  CHECK(y.strides() == tide::Dims{4, 1});
  CHECK(y.numel() == 8);
  CHECK(y.device().is_cpu());
  y.data<double>()[6] = 7.5;
  vm.run_string("v = y[2][3]:item()");
  CHECK(vm.get<double>("v") == 7.5);
}

TEST_CASE("from_blob with strides, a deleter, and bad arguments") {
  double host[6] = {1, 2, 3, 4, 5, 6};
  int deleted = 0;
  {
    Interpreter vm({.globals = true});
    vm.set("t", Tensor::from_blob(host, {3, 2}, DType::Float64, {1, 3}, [&](void* p) {
      CHECK(p == static_cast<void*>(host));
      ++deleted;
    }));
    vm.run_string("r = t:contiguous():tolist()");
    CHECK(vm.get<std::vector<std::vector<double>>>("r") == std::vector<std::vector<double>>{{1, 4}, {2, 5}, {3, 6}});
    CHECK(deleted == 0);
  }
  CHECK(deleted == 1);
  {
    // Negative strides walk backwards from the pointer given (the last row first); the
    // deleter still receives that pointer.
    Interpreter vm({.globals = true});
    vm.set("t", Tensor::from_blob(host + 4, {3, 2}, DType::Float64, {-2, 1}, [&](void* p) {
      CHECK(p == static_cast<void*>(host + 4));
      ++deleted;
    }));
    vm.run_string("r = t:tolist(); s = t:stride(); t[{3, 1}] = 10");
    CHECK(vm.get<std::vector<std::vector<double>>>("r") == std::vector<std::vector<double>>{{5, 6}, {3, 4}, {1, 2}});
    CHECK(vm.get<std::vector<int64_t>>("s") == std::vector<int64_t>{-2, 1});
    CHECK(host[0] == 10);
    host[0] = 1;
  }
  CHECK(deleted == 2);
  CHECK_THROWS_WITH_AS(Tensor::from_blob(host, {2, 3}, DType::Float64, {1}),
                       doctest::Contains("from_blob: 2 sizes {2,3} but 1 strides"), tide::Error);
  CHECK_THROWS_WITH_AS(Tensor::from_blob(nullptr, {2}, DType::Float64), doctest::Contains("from_blob: null data"),
                       tide::Error);
}

TEST_CASE("numbers, booleans, strings, tensors and tables cross both ways") {
  Interpreter vm({.globals = true});
  vm.set("n", 42);
  vm.set("f", 2.5);
  vm.set("b", true);
  vm.set("s", std::string("hi"));
  vm.set("list", std::vector<double>{1.5, 2.5});
  vm.set("cfg", std::map<std::string, int>{{"epochs", 3}, {"batch", 16}});
  vm.set("grid", std::vector<std::vector<int>>{{1, 2}, {3, 4}});
  vm.run_string(R"(
    out_n = n + 1; out_f = f * 2; out_b = not b; out_s = s .. "!"
    out_list = {list[1] + list[2]}; out_cfg = {total = cfg.epochs * cfg.batch}
    out_grid = grid[2][1]; is_int = math.type(n)
    nested = {a = {1, 2}, b = {3}}
    model = {fc = {weight = torch.ones(2)}}
  )");
  CHECK(vm.get<int>("out_n") == 43);
  CHECK(vm.get<double>("out_f") == 5.0);
  CHECK(vm.get<bool>("out_b") == false);
  CHECK(vm.get<std::string>("out_s") == "hi!");
  CHECK(vm.get<std::vector<double>>("out_list") == std::vector<double>{4.0});
  CHECK(vm.get<std::map<std::string, int>>("out_cfg").at("total") == 48);
  CHECK(vm.get<int>("out_grid") == 3);
  CHECK(vm.get<std::string>("is_int") == "integer");
  auto nested = vm.get<std::map<std::string, std::vector<int>>>("nested");
  CHECK(nested["a"] == std::vector<int>{1, 2});
  CHECK(vm.get<Tensor>("model.fc.weight").numel() == 2);
  CHECK(vm.get<std::optional<int>>("missing") == std::nullopt);
  vm.set("model.fc.bias", 0.25);
  vm.run_string("bias = model.fc.bias");
  CHECK(vm.get<double>("bias") == 0.25);
  CHECK_THROWS_WITH_AS(vm.get<double>("s"), "s: expected a number, got string", ScriptError);
  CHECK_THROWS_WITH_AS(vm.get<int>("f"), "f: expected an integer, got number", ScriptError);
  CHECK_THROWS_WITH_AS(vm.get<double>("print"), "print: a function has no host value", ScriptError);
  CHECK_THROWS_WITH_AS(vm.get<double>("n.x"), doctest::Contains("'n.x': 'n' is a number value, not a table"),
                       ScriptError);
  vm.run_string("holes = {1, nil, 3}; mixed = {1, x = 2}");
  CHECK_THROWS_WITH_AS(vm.get<std::vector<int>>("holes"), doctest::Contains("holes: key 3 is not part of an array 1..2"),
                       ScriptError);
  CHECK_THROWS_WITH_AS(vm.get<tide::Value>("mixed"), doctest::Contains("both integer and string keys"), ScriptError);
  vm.run_string("cycle = {}; cycle.self = cycle");
  CHECK_THROWS_WITH_AS(vm.get<tide::Value>("cycle"), doctest::Contains("nested deeper than 64"), ScriptError);
}

TEST_CASE("host functions: arguments, results and errors") {
  Interpreter vm({.globals = true});
  std::vector<std::pair<std::string, double>> metrics;
  vm.def("log_metric", [&](std::string name, double v) { metrics.emplace_back(name, v); });
  vm.def("add", [](double a, double b) { return a + b; });
  vm.def("total", [](std::vector<double> xs) {
    double t = 0;
    for (double x : xs) t += x;
    return t;
  });
  vm.def("scaled", [](Tensor t, double k) {
    Tensor out = t.clone();
    for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] *= float(k);
    return out;
  });
  vm.def("fail", [](int code) -> int { throw std::runtime_error("boom " + std::to_string(code)); });
  vm.run_string(R"(
    log_metric("loss", 0.5)
    r = add(2, 3.5)
    t = total({1, 2, 3})
    sc = scaled(torch.tensor({1, 2}, {dtype = "float32"}), 3):tolist()
    ok, err = pcall(fail, 7)
    ok2, err2 = pcall(add, 1, "x")
    ok3, err3 = pcall(add, 1, 2, 3)
  )");
  REQUIRE(metrics.size() == 1);
  CHECK(metrics[0].first == "loss");
  CHECK(metrics[0].second == 0.5);
  CHECK(vm.get<double>("r") == 5.5);
  CHECK(vm.get<double>("t") == 6);
  CHECK(vm.get<std::vector<double>>("sc") == std::vector<double>{3, 6});
  CHECK(vm.get<bool>("ok") == false);
  CHECK(vm.get<std::string>("err") == "fail: boom 7");
  CHECK(vm.get<std::string>("err2") == "add: argument 2: expected a number, got string");
  CHECK(vm.get<std::string>("err3") == "add: expected at most 2 arguments, got 3");
  CHECK(contains(script_error(vm, "fail(1)"), "fail: boom 1"));
}

TEST_CASE("script errors carry a traceback and leave the interpreter usable") {
  Interpreter vm({.globals = true});
  try {
    vm.run_string("local function inner() error('bad thing') end\ninner()", "=demo");
    FAIL("no error");
  } catch (const ScriptError& e) {
    CHECK(e.message() == "demo:1: bad thing");
    CHECK(contains(e.traceback(), "stack traceback:"));
    CHECK(contains(e.traceback(), "inner"));
    CHECK(contains(e.what(), "bad thing"));
  }
  CHECK(contains(script_error(vm, "x = = 1"), "unexpected symbol"));
  CHECK(contains(script_error(vm, "torch.ones(2, 3):mm(torch.ones(2, 3))"), "mm: shapes {2,3} and {2,3} cannot be multiplied"));
  CHECK(contains(script_error(vm, "error(setmetatable({}, {__tostring = function() return 'custom' end}))"), "custom"));
  CHECK(contains(script_error(vm, "error({})"), "(error object is a table value)"));
  CHECK_THROWS_WITH_AS(vm.run_file("/nonexistent/train.lua"), doctest::Contains("cannot open /nonexistent/train.lua"),
                       ScriptError);
  CHECK_THROWS_WITH_AS(vm.call("nothing"), doctest::Contains("attempt to call a nil value"), ScriptError);
  vm.run_string("function twice(x) return 2 * x end");
  CHECK(vm.call("twice", {21}).as<int>("r") == 42);
  vm.run_string("ok = 1");
  CHECK(vm.get<int>("ok") == 1);
}

TEST_CASE("run_file sets arg and passes the arguments") {
  const char* path = "/tmp/tide_test_embed_args.lua";
  FILE* f = std::fopen(path, "w");
  REQUIRE(f);
  std::fputs("local a, b = ...\nfirst, second, script, count = a, b, arg[0], #arg\n", f);
  std::fclose(f);
  Interpreter vm;
  vm.run_file(path, {"--epochs", "3"});
  CHECK(vm.get<std::string>("first") == "--epochs");
  CHECK(vm.get<std::string>("second") == "3");
  CHECK(vm.get<std::string>("script") == path);
  CHECK(vm.get<int>("count") == 2);
  std::remove(path);
}

TEST_CASE("memory limit: tensors and the Lua heap, then usable and nothing leaked") {
  Interpreter vm({.memory_limit_bytes = 64 << 20, .globals = true});
  vm.run_string("collectgarbage()");
  size_t baseline = vm.memory_used();
  CHECK(baseline > 0);
  CHECK(baseline < (8u << 20));
  CHECK(contains(script_error(vm, "x = torch.zeros(1e12)"), "memory limit of 67108864 bytes"));
  CHECK(contains(script_error(vm, "keep = {} for i = 1, 100 do keep[i] = torch.zeros(1024 * 1024) end"),
                 "memory limit"));
  CHECK(contains(script_error(vm, "s = string.rep('x', 200 * 1024 * 1024)"), "memory limit of 67108864 bytes exceeded"));
  CHECK(contains(script_error(vm, "local t = {} for i = 1, 1e8 do t[i] = i end"), "memory limit"));
  vm.run_string("keep = nil; collectgarbage(); collectgarbage()");
  CHECK(vm.memory_used() < baseline + (1u << 20));
  // Temporaries far beyond the limit in total are fine: the collector frees them.
  vm.run_string("for i = 1, 100 do local a = torch.ones(1024 * 1024) + 1 end");
  vm.run_string("collectgarbage(); collectgarbage()");
  CHECK(vm.memory_used() < baseline + (1u << 20));
  vm.run_string(kTraining);
  CHECK(vm.get<double>("final_loss") > 0);
  CHECK_THROWS_WITH_AS(Interpreter({.memory_limit_bytes = 100'000}), doctest::Contains("memory limit of 100000 bytes"),
                       ScriptError);
}

TEST_CASE("huge allocations without a limit leave the host running") {
  Interpreter vm({.globals = true});
  CHECK(contains(script_error(vm, "x = torch.zeros(1e13)"), "out of memory: cannot allocate 40000000000000 bytes"));
  CHECK(contains(script_error(vm, "x = torch.zeros(2^40, 2^40)"),
                 "zeros: shape {1099511627776,1099511627776} of float32 is too large"));
  vm.run_string("y = torch.ones(3):sum():item()");
  CHECK(vm.get<double>("y") == 3);
}

TEST_CASE("instruction and time limits stop runaway scripts") {
  Interpreter vm({.instruction_limit = 1'000'000, .globals = true});
  CHECK(contains(script_error(vm, "while true do end"), "instruction limit of 1000000 instructions exceeded"));
  CHECK(contains(script_error(vm, "while true do pcall(function() while true do end end) end"), "instruction limit"));
  CHECK(contains(script_error(vm, "coroutine.wrap(function() while true do end end)()"), "instruction limit"));
  vm.run_string("x = 0 for i = 1, 1000 do x = x + i end");  // each call starts afresh
  CHECK(vm.get<int>("x") == 500500);

  Interpreter timed({.time_limit_seconds = 0.2});
  auto start = std::chrono::steady_clock::now();
  CHECK(contains(script_error(timed, "while true do end"), "time limit of 0.2 seconds exceeded"));
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(elapsed >= 0.2);
  CHECK(elapsed < 2.0);
  timed.run_string("y = 1");
  CHECK(timed.get<int>("y") == 1);
}

TEST_CASE("the sandbox holds against escapes") {
  Interpreter vm;
  vm.run_string("bytecode = string.dump(function() return 1 end)");
  std::string bytecode = vm.get<std::string>("bytecode");
  REQUIRE(bytecode.rfind("\x1bLua", 0) == 0);

  Interpreter box({.sandbox = true, .globals = true});
  box.set("bytecode", bytecode);
  box.run_string(R"(
    absent = {}
    for _, name in ipairs{"io", "debug", "package", "dofile", "loadfile", "ffi"} do
      if _G[name] ~= nil then absent[#absent + 1] = name end
    end
    for _, name in ipairs{"execute", "exit", "getenv", "remove", "rename", "tmpname"} do
      if os[name] ~= nil then absent[#absent + 1] = "os." .. name end
    end
    if string.dump ~= nil then absent[#absent + 1] = "string.dump" end
    f1, e1 = load(bytecode)
    f2, e2 = load(bytecode, "chunk", "b")
    ok3, e3 = pcall(require, "socket.core")
    ok4, e4 = pcall(require, "io")
    string_mt = getmetatable("")
    ok5 = pcall(function() getmetatable("").__index = {} end)
    upper = ("x"):upper()
    tensor_mt = getmetatable(torch.zeros(1))
    file_ops = (torch.save == nil) and (torch.load == nil) and (np.load == nil) and (np.savetxt == nil)
    text = load("return 1 + 1")()
    clock = type(os.clock())
  )");
  CHECK(box.get<std::vector<std::string>>("absent").empty());
  CHECK(box.get<std::optional<int>>("f1") == std::nullopt);
  CHECK(contains(box.get<std::string>("e1"), "attempt to load a binary chunk"));
  CHECK(contains(box.get<std::string>("e2"), "attempt to load a binary chunk"));
  CHECK(box.get<bool>("ok3") == false);
  CHECK(contains(box.get<std::string>("e3"), "module 'socket.core' not found"));
  CHECK(box.get<bool>("ok4") == false);
  CHECK(box.get<bool>("string_mt") == false);
  CHECK(box.get<bool>("ok5") == false);
  CHECK(box.get<std::string>("upper") == "X");
  CHECK(box.get<bool>("tensor_mt") == false);
  CHECK(box.get<bool>("file_ops") == true);
  CHECK(box.get<int>("text") == 2);
  CHECK(box.get<std::string>("clock") == "number");
  box.run_string(kTraining);  // the sandbox still trains
  CHECK(box.get<double>("final_loss") > 0);
}

TEST_CASE("two interpreters train on two threads with identical results") {
  auto train = [](double& loss, double& w) {
    Interpreter vm;
    vm.run_string(kTraining);
    loss = vm.get<double>("final_loss");
    w = vm.get<double>("w");
  };
  double ref_loss = 0, ref_w = 0, loss1 = 0, w1 = 0, loss2 = 0, w2 = 0;
  train(ref_loss, ref_w);
  std::thread a([&] { train(loss1, w1); });
  std::thread b([&] { train(loss2, w2); });
  a.join();
  b.join();
  CHECK(loss1 == ref_loss);
  CHECK(loss2 == ref_loss);
  CHECK(w1 == ref_w);
  CHECK(w2 == ref_w);
  // Each interpreter keeps its own default dtype.
  Interpreter one, two;
  one.run_string("local torch = require 'torch'; torch.set_default_dtype('float64'); d = torch.get_default_dtype()");
  two.run_string("local torch = require 'torch'; d = torch.get_default_dtype()");
  CHECK(one.get<std::string>("d") == "float64");
  CHECK(two.get<std::string>("d") == "float32");
}

TEST_CASE("a graph with a Lua backward outlives its interpreter and is refused elsewhere") {
  // A custom Function and a tensor hook: their Lua functions belong to interpreter `a`.
  const char* make = R"lua(
    local Twice = torch.autograd.Function:extend("Twice")
    function Twice.forward(ctx, x) return x * 2 end
    function Twice.backward(ctx, g) return g * 2 end
    x = torch.ones(2, {requires_grad = true})
    y = Twice.apply(x):sum()
    h = x * 3
    h:register_hook(function(g) return g * 10 end)
    z = h:sum()
  )lua";
  Interpreter b({.globals = true});
  Tensor y, z;
  {
    Interpreter a({.globals = true});
    a.run_string(make);
    y = a.get<Tensor>("y");
    z = a.get<Tensor>("z");
    b.set("y", y);
    b.set("z", z);
    CHECK(contains(script_error(b, "y:backward({retain_graph = true})"),
                   "TwiceBackward: its Lua function can only run in a backward started by a script of the interpreter "
                   "that made it"));
    CHECK(contains(script_error(b, "z:backward({retain_graph = true})"), "register_hook: its Lua function"));
    a.run_string("y:backward({retain_graph = true}); z:backward(); g = x.grad[1]:item()");
    CHECK(a.get<double>("g") == 32);  // 2 * 2 from Twice, 3 * 10 through the hook
  }
  // `a` is closed; its graphs live on in the host and in `b`.
  CHECK(contains(script_error(b, "y:backward()"), "TwiceBackward: its Lua function belongs to an interpreter that was closed"));
  b.run_string("y = nil; z = nil; collectgarbage()");
  y = Tensor();
  z = Tensor();  // the last references: the graphs go without touching the closed interpreter
  b.run_string("t = (torch.ones(1) + 1):item()");
  CHECK(b.get<double>("t") == 2);
}

TEST_CASE("DLPack export and import share memory") {
  Interpreter vm({.globals = true});
  vm.run_string("a = torch.arange(6, {dtype = 'float64'}):view(2, 3):t()");
  Tensor a = vm.get<Tensor>("a");
  DLManagedTensor* m = a.to_dlpack();
  CHECK(m->dl_tensor.data == a.data_ptr());
  CHECK(m->dl_tensor.ndim == 2);
  CHECK(m->dl_tensor.shape[0] == 3);
  CHECK(m->dl_tensor.strides[0] == 1);
  CHECK(m->dl_tensor.strides[1] == 3);
  CHECK(m->dl_tensor.dtype.code == kDLFloat);
  CHECK(m->dl_tensor.dtype.bits == 64);
  CHECK(m->dl_tensor.device.device_type == kDLCPU);
  Tensor b = Tensor::from_dlpack(m);
  CHECK(b.data_ptr() == a.data_ptr());
  CHECK(b.shape() == a.shape());
  CHECK(b.strides() == a.strides());
  CHECK(b.dtype() == DType::Float64);
  vm.set("b", b);
  vm.run_string("b[1][2] = 100; v = a[1][2]:item()");  // b and a are one memory
  CHECK(vm.get<double>("v") == 100);

  // A tensor made by another framework: a column of a 2x3 int32 buffer, with its deleter.
  static int32_t buffer[6] = {1, 2, 3, 4, 5, 6};
  static int64_t shape[1] = {2};
  static int64_t strides[1] = {3};
  static int deleted = 0;
  DLManagedTensor foreign{};
  foreign.dl_tensor = DLTensor{buffer, DLDevice{kDLCPU, 0}, 1, DLDataType{kDLInt, 32, 1}, shape, strides, 4};
  foreign.deleter = [](DLManagedTensor*) { ++deleted; };
  {
    Tensor c = Tensor::from_dlpack(&foreign);
    vm.set("c", c);
    vm.run_string("cs = c:sum():item(); c = nil; collectgarbage()");
    CHECK(vm.get<int>("cs") == 2 + 5);
    CHECK(deleted == 0);
  }
  CHECK(deleted == 1);

  DLManagedTensor half_complex = foreign;  // complex64/128 import; complex32 (two halves) has no dtype
  half_complex.dl_tensor.dtype = DLDataType{kDLComplex, 32, 1};
  CHECK_THROWS_WITH_AS(Tensor::from_dlpack(&half_complex), doctest::Contains("from_dlpack: unsupported DLPack data type (code 5, 32"),
                       tide::Error);
  CHECK(deleted == 1);  // left to the caller

  vm.run_string("mask = torch.tensor{true, false}");
  DLManagedTensor* mask = vm.get<Tensor>("mask").to_dlpack();
  CHECK(mask->dl_tensor.dtype.code == tide::kDLBoolCode);
  CHECK(Tensor::from_dlpack(mask).dtype() == DType::Bool);

  // A CUDA pointer is wrapped as it is, never dereferenced on the host.
  auto* fake_device_ptr = reinterpret_cast<void*>(uintptr_t(0x1000));
  Tensor on_gpu = Tensor::from_blob(fake_device_ptr, {4}, DType::Float32, {}, nullptr, {tide::DeviceType::CUDA, 0});
  CHECK(on_gpu.device().is_cuda());
  DLManagedTensor* gm = on_gpu.to_dlpack();
  CHECK(gm->dl_tensor.device.device_type == kDLCUDA);
  CHECK(gm->dl_tensor.data == fake_device_ptr);
  gm->deleter(gm);
}

namespace {
int c_scale(tide_call* call, void* ctx) {
  double x = 0;
  if (tide_call_arg_number(call, 1, &x) != 0) return tide_call_error(call, tide_last_error());
  if (x < 0) return tide_call_error(call, "negative input");
  tide_call_return_number(call, x * *static_cast<double*>(ctx));
  return 0;
}
}  // namespace

TEST_CASE("the C API") {
  tide_options options{};
  options.globals = 1;
  options.memory_limit_bytes = 64 << 20;
  tide_interpreter* vm = tide_new(&options);
  REQUIRE(vm);
  float host[4] = {1, 2, 3, 4};
  int64_t shape[2] = {2, 2};
  tide_tensor* x = tide_tensor_from_blob(host, 2, shape, nullptr, TIDE_FLOAT32, DLDevice{kDLCPU, 0}, nullptr, nullptr);
  REQUIRE(x);
  CHECK(tide_set_tensor(vm, "x", x) == 0);
  double factor = 10;
  CHECK(tide_def(vm, "scale", c_scale, &factor) == 0);
  CHECK(tide_set_number(vm, "k", 0.5) == 0);
  CHECK(tide_run_string(vm, "x:add_(1); total = scale(x:sum():item()) * k; name = 'tide'; xs = {1, 2, 3}") == 0);
  CHECK(host[3] == 5);
  double total = 0;
  CHECK(tide_get_number(vm, "total", &total) == 0);
  CHECK(total == 70);
  CHECK(std::string(tide_get_string(vm, "name")) == "tide");
  double xs[2];
  size_t count = 0;
  CHECK(tide_get_numbers(vm, "xs", xs, 2, &count) == 0);
  CHECK(count == 3);
  CHECK(xs[1] == 2);
  tide_tensor* y = tide_get_tensor(vm, "x");
  REQUIRE(y);
  CHECK(tide_tensor_data(y) == static_cast<void*>(host));
  CHECK(tide_tensor_ndim(y) == 2);
  CHECK(tide_tensor_shape(y)[1] == 2);
  CHECK(tide_tensor_strides(y)[0] == 2);
  CHECK(tide_tensor_dtype(y) == TIDE_FLOAT32);
  CHECK(tide_tensor_numel(y) == 4);
  DLManagedTensor* m = tide_tensor_to_dlpack(y);
  tide_tensor* z = tide_tensor_from_dlpack(m);
  CHECK(tide_tensor_data(z) == static_cast<void*>(host));
  CHECK(tide_run_string(vm, "scale(-1)") == -1);
  CHECK(contains(tide_last_error(), "scale: negative input"));
  CHECK(tide_run_string(vm, "scale('a')") == -1);
  CHECK(contains(tide_last_error(), "scale: argument 1: expected a number, got string"));
  CHECK(tide_run_string(vm, "big = torch.zeros(1e12)") == -1);
  CHECK(contains(tide_last_error(), "memory limit"));
  int64_t n = 0;
  CHECK(tide_get_integer(vm, "name", &n) == -1);
  CHECK(contains(tide_last_error(), "name: expected an integer, got string"));
  CHECK(tide_tensor_from_blob(host, 1, shape, nullptr, tide_dtype(15), DLDevice{kDLCPU, 0}, nullptr, nullptr) == nullptr);
  CHECK(contains(tide_last_error(), "from_blob: unknown dtype 15"));
  CHECK(tide_run_string(vm, "ok = true") == 0);
  tide_tensor_free(x);
  tide_tensor_free(y);
  tide_tensor_free(z);
  tide_free(vm);
}
