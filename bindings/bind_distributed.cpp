// torch.distributed's bindings: process groups, the collectives, work handles and the DDP
// reducer (the engine half is tensor/distributed/; DistributedDataParallel, DistributedSampler
// and ReduceOp are Lua, in bindings/lua/torch_distributed.lua).
//
// Ranks are 0-based, as in MPI and PyTorch; src, dst and the rank get_rank returns are ranks
// in the world even when a group is given (PyTorch's convention); a list indexed by rank is a
// Lua list with rank r at index r + 1.
#include <algorithm>
#include <mutex>

#include "../tensor/distributed/process_group.hpp"
#include "../tensor/distributed/reducer.hpp"
#include "../tensor/interrupt.hpp"
#include "../tensor/ops/creation.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

using dist::Collective;
using dist::OpKind;
using dist::ProcessGroup;
using dist::ReduceOp;
using dist::Work;

constexpr const char* kGroupMeta = "tide.distributed.ProcessGroup";
constexpr const char* kWorkMeta = "tide.distributed.Work";
constexpr const char* kReducerMeta = "tide.distributed.Reducer";

// ---- userdata: a shared_ptr in a box, with methods from torch.distributed.<methods>

template <typename T>
struct Box {
  std::shared_ptr<T> p;
  std::shared_ptr<ProcessGroup> group;  // Work: its group (to name the sender of a recv)
};

template <typename T>
int box_gc(lua_State* L) {
  if (void* ud = lua_touserdata(L, 1)) {
    if (lua_getmetatable(L, 1)) {
      lua_pop(L, 1);
      static_cast<Box<T>*>(ud)->~Box<T>();
      lua_pushnil(L);
      lua_setmetatable(L, 1);  // collected once
    }
  }
  return 0;
}

// Pushes a box of p with the metatable `meta`, whose __index is torch.distributed[methods].
template <typename T>
void push_box(lua_State* L, std::shared_ptr<T> p, const char* meta, const char* methods,
              std::shared_ptr<ProcessGroup> group = nullptr) {
  void* ud = lua_newuserdatauv(L, sizeof(Box<T>), 0);
  new (ud) Box<T>{std::move(p), std::move(group)};
  if (luaL_newmetatable(L, meta)) {
    lua_pushcfunction(L, box_gc<T>);
    lua_setfield(L, -2, "__gc");
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "torch");
    lua_getfield(L, -1, "distributed");
    lua_getfield(L, -1, methods);
    lua_setfield(L, -5, "__index");
    lua_pop(L, 3);
  }
  lua_setmetatable(L, -2);
}

template <typename T>
Box<T>* box_at(Args& a, int i, const char* meta, const char* what) {
  a.consumed(i);
  auto* b = static_cast<Box<T>*>(luaL_testudata(a.L, i, meta));
  if (!b) a.error(std::string("argument ") + std::to_string(i) + " is not a " + what);
  return b;
}

// ---- arguments

std::shared_ptr<ProcessGroup> default_group(const char* op) {
  auto g = dist::world();
  TIDE_CHECK(g, op, ": the default process group is not initialized (call torch.distributed.init_process_group first)");
  return g;
}

// The group keyword (or positional i when given), else the default group.
std::shared_ptr<ProcessGroup> group_kw(Args& a, int positional = 0) {
  lua_State* L = a.L;
  int idx = 0;
  if (positional && a.has(positional)) {
    a.consumed(positional);
    idx = positional;
  } else if (a.push_kw("group") != LUA_TNIL) {
    idx = lua_gettop(L);
  } else {
    lua_pop(L, 1);
    return default_group(a.op);
  }
  auto* b = static_cast<Box<ProcessGroup>*>(luaL_testudata(L, idx, kGroupMeta));
  if (!b) a.error("group must be a process group from torch.distributed.new_group");
  auto g = b->p;
  if (idx != positional) lua_pop(L, 1);
  TIDE_CHECK(!g->destroyed(), a.op, ": the process group was destroyed");
  return g;
}

ReduceOp reduce_op(Args& a, int i) {
  std::string s;
  if (a.has(i)) s = a.string(i);
  else if (auto k = a.kw_string("op")) s = *k;
  else return ReduceOp::Sum;
  static const struct {
    const char* name;
    ReduceOp op;
  } ops[] = {{"sum", ReduceOp::Sum}, {"avg", ReduceOp::Avg}, {"product", ReduceOp::Product},
             {"min", ReduceOp::Min}, {"max", ReduceOp::Max}};
  for (auto& o : ops)
    if (s == o.name) return o.op;
  a.error("unknown reduction '" + s + "' (expected ReduceOp.SUM, AVG, PRODUCT, MIN or MAX)");
}

// A world rank given at positional i or keyword `name` (else `fallback`), as a rank of group g.
int group_rank_of(Args& a, const ProcessGroup& g, int i, const char* name, std::optional<int> fallback) {
  std::optional<int64_t> r;
  if (a.has(i)) r = a.integer(i);
  else if (auto k = a.kw_integer(name)) r = *k;
  if (!r) {
    if (!fallback) a.error(std::string("missing argument ") + name);
    r = *fallback;
  }
  const auto& ranks = g.world_ranks();
  for (size_t k = 0; k < ranks.size(); ++k)
    if (ranks[k] == *r) return int(k);
  std::string list;
  for (size_t k = 0; k < ranks.size() && k < 16; ++k) list += (k ? "," : "") + std::to_string(ranks[k]);
  a.error(std::string(name) + " " + std::to_string(*r) + " is not a rank of the group (its ranks: {" + list +
          (ranks.size() > 16 ? ",...}" : "}") + ")");
}

// A Lua list of tensors at the stack index idx.
std::vector<Tensor> tensor_list_at(Args& a, int idx, const char* what) {
  lua_State* L = a.L;
  if (!lua_istable(L, idx) || to_tensor(L, idx)) a.error(std::string(what) + " must be a list of tensors");
  std::vector<Tensor> out;
  int n = int(lua_rawlen(L, idx));
  for (int k = 1; k <= n; ++k) {
    lua_rawgeti(L, idx, k);
    Tensor* t = to_tensor(L, -1);
    lua_pop(L, 1);
    if (!t) a.error(std::string(what) + "[" + std::to_string(k) + "] is not a tensor");
    out.push_back(*t);
  }
  return out;
}

// A list at positional i or keyword `name` (absent: empty).
std::vector<Tensor> list_arg(Args& a, int i, const char* name) {
  if (a.has(i)) {
    a.consumed(i);
    return tensor_list_at(a, i, name);
  }
  if (a.push_kw(name) == LUA_TNIL) {
    lua_pop(a.L, 1);
    return {};
  }
  auto out = tensor_list_at(a, lua_gettop(a.L), name);
  lua_pop(a.L, 1);
  return out;
}

// Submits c: with async_op, pushes the work handle; else waits (pushing the sender's world
// rank for a recv).
int run(Args& a, const std::shared_ptr<ProcessGroup>& g, Collective c) {
  bool async = a.kw_bool("async_op").value_or(false);
  OpKind kind = c.kind;
  auto work = g->submit(std::move(c));
  if (async) {
    push_box<Work>(a.L, work, kWorkMeta, "_Work", g);
    return 1;
  }
  int source = work->wait();
  if (kind == OpKind::Recv) {
    lua_pushinteger(a.L, g->world_ranks()[size_t(source)]);
    return 1;
  }
  return 0;
}

// ---- the Lua state interrupted when another rank fails

std::mutex g_failure_mu;
std::string g_failure;

void peer_failure_hook(lua_State* L, lua_Debug*) {
  lua_sethook(L, nullptr, 0, 0);
  std::string msg;
  {
    std::lock_guard<std::mutex> lock(g_failure_mu);
    msg = g_failure;
  }
  luaL_error(L, "distributed: %s", msg.c_str());
}

// ---- bindings

int is_available_fn(lua_State* L, Args&) {
  lua_pushboolean(L, dist::mpi_available());
  return 1;
}

int is_nccl_available_fn(lua_State* L, Args&) {
  lua_pushboolean(L, dist::nccl_available());
  return 1;
}

int unavailable_reason_fn(lua_State* L, Args& a) {
  std::string backend = a.has(1) ? a.string(1) : "mpi";
  if (backend == "mpi") lua_pushstring(L, dist::mpi_unavailable_reason().c_str());
  else if (backend == "nccl") lua_pushstring(L, dist::nccl_unavailable_reason().c_str());
  else a.error("unknown backend '" + backend + "' (expected \"mpi\" or \"nccl\")");
  return 1;
}

int init_process_group_fn(lua_State* L, Args& a) {
  dist::InitOptions o;
  if (a.has(1)) o.backend = a.string(1);
  else if (auto b = a.kw_string("backend")) o.backend = *b;
  if (auto t = a.kw_number("timeout")) o.timeout_seconds = *t;
  auto rank = a.kw_integer("rank");
  auto world_size = a.kw_integer("world_size");
  lua_State* main_state = L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  main_state = lua_tothread(L, -1);
  lua_pop(L, 1);
  lua_State* caller = L;
  auto g = dist::init(o, [main_state, caller](const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(g_failure_mu);
      g_failure = why;
    }
    request_interrupt();  // a long engine op stops
    lua_sethook(main_state, peer_failure_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
    if (caller != main_state) lua_sethook(caller, peer_failure_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
  });
  if ((rank && *rank != g->rank()) || (world_size && *world_size != g->size()))
    a.error("MPI started this process as rank " + std::to_string(g->rank()) + " of " + std::to_string(g->size()) +
            ", not as given (rank and world_size come from mpirun)");
  return 0;
}

int is_initialized_fn(lua_State* L, Args&) {
  lua_pushboolean(L, dist::world() != nullptr);
  return 1;
}

int destroy_process_group_fn(lua_State*, Args& a) {
  if (a.has(1) || a.has_kw("group")) {
    auto g = group_kw(a, 1);
    if (g != dist::world()) {
      g->destroy();
      return 0;
    }
  }
  dist::destroy();
  return 0;
}

int get_rank_fn(lua_State* L, Args& a) {
  auto g = group_kw(a, 1);
  lua_pushinteger(L, g->rank() < 0 ? -1 : g->world_ranks()[size_t(g->rank())]);
  return 1;
}

int get_world_size_fn(lua_State* L, Args& a) {
  auto g = group_kw(a, 1);
  if (g->rank() < 0) a.error("this process is not a member of the group");
  lua_pushinteger(L, g->size());
  return 1;
}

int get_backend_fn(lua_State* L, Args& a) {
  lua_pushstring(L, group_kw(a, 1)->backend());
  return 1;
}

// new_group([ranks][, {ranks=, timeout=, backend=}]): every rank of the world calls it.
int new_group_fn(lua_State* L, Args& a) {
  auto world = default_group(a.op);
  std::vector<int64_t> ranks;
  if (a.has(1)) {
    ranks = a.int_list_from(1);
  } else if (a.push_kw("ranks") != LUA_TNIL) {
    lua_State* S = a.L;
    int idx = lua_gettop(S);
    if (!lua_istable(S, idx)) a.error("ranks must be a list of ranks");
    for (int k = 1; k <= int(lua_rawlen(S, idx)); ++k) {
      lua_rawgeti(S, idx, k);
      if (!lua_isinteger(S, -1)) a.error("ranks[" + std::to_string(k) + "] is not an integer");
      ranks.push_back(lua_tointeger(S, -1));
      lua_pop(S, 1);
    }
    lua_pop(S, 1);
  } else {
    lua_pop(a.L, 1);
    for (int r = 0; r < world->size(); ++r) ranks.push_back(r);
  }
  if (auto b = a.kw_string("backend"); b && *b != world->backend())
    a.error("backend '" + *b + "' differs from the default group's '" + world->backend() +
            "' (one backend per process)");
  std::sort(ranks.begin(), ranks.end());
  std::vector<int> rs(ranks.begin(), ranks.end());
  double timeout = a.kw_number("timeout").value_or(1800);
  TIDE_CHECK(timeout > 0, a.op, ": timeout must be > 0 seconds, got ", timeout);
  push_box<ProcessGroup>(L, world->new_group(rs, timeout), kGroupMeta, "_ProcessGroup");
  return 1;
}

int all_reduce_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::AllReduce;
  c.tensor = a.tensor(1);
  c.op = reduce_op(a, 2);
  return run(a, g, std::move(c));
}

int broadcast_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::Broadcast;
  c.tensor = a.tensor(1);
  c.root = group_rank_of(a, *g, 2, "src", std::nullopt);
  return run(a, g, std::move(c));
}

int reduce_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::Reduce;
  c.tensor = a.tensor(1);
  c.root = group_rank_of(a, *g, 2, "dst", std::nullopt);
  c.op = reduce_op(a, 3);
  return run(a, g, std::move(c));
}

int all_gather_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::AllGather;
  a.consumed(1);
  c.outputs = tensor_list_at(a, 1, "tensor_list");
  c.input = a.tensor(2);
  return run(a, g, std::move(c));
}

int all_gather_into_tensor_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::AllGatherIntoTensor;
  c.output = a.tensor(1);
  c.input = a.tensor(2);
  return run(a, g, std::move(c));
}

int gather_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::Gather;
  c.input = a.tensor(1);
  c.outputs = list_arg(a, 2, "gather_list");
  c.root = group_rank_of(a, *g, 3, "dst", 0);
  return run(a, g, std::move(c));
}

int scatter_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::Scatter;
  c.output = a.tensor(1);
  c.inputs = list_arg(a, 2, "scatter_list");
  c.root = group_rank_of(a, *g, 3, "src", 0);
  return run(a, g, std::move(c));
}

int reduce_scatter_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::ReduceScatter;
  c.output = a.tensor(1);
  a.consumed(2);
  c.inputs = tensor_list_at(a, 2, "input_list");
  c.op = reduce_op(a, 3);
  return run(a, g, std::move(c));
}

int all_to_all_fn(lua_State*, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::AllToAll;
  a.consumed(1);
  a.consumed(2);
  c.outputs = tensor_list_at(a, 1, "output_tensor_list");
  c.inputs = tensor_list_at(a, 2, "input_tensor_list");
  return run(a, g, std::move(c));
}

int barrier_fn(lua_State*, Args& a) {
  auto g = group_kw(a, 1);
  Collective c;
  c.kind = OpKind::Barrier;
  return run(a, g, std::move(c));
}

// send / isend (async) and recv / irecv: point-to-point with a tag.
template <bool Async>
int send_fn(lua_State* L, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::Send;
  c.tensor = a.tensor(1);
  c.peer = group_rank_of(a, *g, 2, "dst", std::nullopt);
  c.tag = int(a.kw_integer("tag").value_or(0));
  auto work = g->submit(std::move(c));
  if (Async) {
    push_box<Work>(L, work, kWorkMeta, "_Work", g);
    return 1;
  }
  work->wait();
  return 0;
}

template <bool Async>
int recv_fn(lua_State* L, Args& a) {
  auto g = group_kw(a);
  Collective c;
  c.kind = OpKind::Recv;
  c.tensor = a.tensor(1);
  c.peer = a.has(2) || a.has_kw("src") ? group_rank_of(a, *g, 2, "src", std::nullopt) : -1;
  c.tag = int(a.kw_integer("tag").value_or(0));
  auto work = g->submit(std::move(c));
  if (Async) {
    push_box<Work>(L, work, kWorkMeta, "_Work", g);
    return 1;
  }
  lua_pushinteger(L, g->world_ranks()[size_t(work->wait())]);
  return 1;
}

// Work:wait() -> true (for an irecv: the sender's world rank); Work:is_completed().
int work_wait_fn(lua_State* L, Args& a) {
  auto* b = box_at<Work>(a, 1, kWorkMeta, "work handle");
  int source = b->p->wait();
  if (source >= 0) lua_pushinteger(L, b->group->world_ranks()[size_t(source)]);
  else lua_pushboolean(L, 1);
  return 1;
}

int work_is_completed_fn(lua_State* L, Args& a) {
  lua_pushboolean(L, box_at<Work>(a, 1, kWorkMeta, "work handle")->p->is_completed());
  return 1;
}

int group_rank_fn(lua_State* L, Args& a) {
  lua_pushinteger(L, box_at<ProcessGroup>(a, 1, kGroupMeta, "process group")->p->rank());
  return 1;
}

int group_ranks_fn(lua_State* L, Args& a) {
  const auto& ranks = box_at<ProcessGroup>(a, 1, kGroupMeta, "process group")->p->world_ranks();
  lua_createtable(L, int(ranks.size()), 0);
  for (size_t k = 0; k < ranks.size(); ++k) {
    lua_pushinteger(L, ranks[k]);
    lua_rawseti(L, -2, lua_Integer(k + 1));
  }
  return 1;
}

int group_size_fn(lua_State* L, Args& a) {
  lua_pushinteger(L, box_at<ProcessGroup>(a, 1, kGroupMeta, "process group")->p->size());
  return 1;
}

// _Reducer(params, names[, {group=, bucket_cap_mb=, find_unused_parameters=}])
int reducer_fn(lua_State* L, Args& a) {
  auto g = group_kw(a);
  a.consumed(1);
  a.consumed(2);
  std::vector<Tensor> params = tensor_list_at(a, 1, "params");
  std::vector<std::string> names;
  if (!lua_istable(L, 2)) a.error("names must be a list of strings");
  for (int k = 1; k <= int(lua_rawlen(L, 2)); ++k) {
    lua_rawgeti(L, 2, k);
    const char* s = lua_tostring(L, -1);
    names.emplace_back(s ? s : "?");
    lua_pop(L, 1);
  }
  double mb = a.kw_number("bucket_cap_mb").value_or(25.0);
  TIDE_CHECK(mb > 0, "DistributedDataParallel: bucket_cap_mb must be > 0, got ", mb);
  bool find_unused = a.kw_bool("find_unused_parameters").value_or(false);
  auto r = std::make_shared<dist::Reducer>(g, std::move(params), std::move(names), size_t(mb * 1024 * 1024), find_unused);
  r->install();
  push_box<dist::Reducer>(L, r, kReducerMeta, "_ReducerMethods");
  return 1;
}

int reducer_prepare_fn(lua_State*, Args& a) {
  box_at<dist::Reducer>(a, 1, kReducerMeta, "reducer")->p->prepare_for_backward();
  return 0;
}

// reducer:stats() -> {buckets=, iterations=, wait_seconds=, bucket_params={{...}, ...}}
int reducer_stats_fn(lua_State* L, Args& a) {
  auto& r = *box_at<dist::Reducer>(a, 1, kReducerMeta, "reducer")->p;
  const auto& s = r.stats();
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, s.buckets);
  lua_setfield(L, -2, "buckets");
  lua_pushinteger(L, s.iterations);
  lua_setfield(L, -2, "iterations");
  lua_pushnumber(L, s.wait_seconds);
  lua_setfield(L, -2, "wait_seconds");
  lua_pushinteger(L, s.launched_in_backward);
  lua_setfield(L, -2, "launched_in_backward");
  lua_newtable(L);
  int k = 0;
  for (const auto& b : r.bucket_indices()) {
    lua_createtable(L, int(b.size()), 0);
    for (size_t j = 0; j < b.size(); ++j) {
      lua_pushinteger(L, lua_Integer(b[j] + 1));
      lua_rawseti(L, -2, lua_Integer(j + 1));
    }
    lua_rawseti(L, -2, ++k);
  }
  lua_setfield(L, -2, "bucket_params");
  return 1;
}

#define DIST "distributed."
const Binding kDistributedBindings[] = {
    {DIST "is_available", is_available_fn, TORCH,
     "distributed.is_available() -> boolean: whether MPI can be used (the module is built and loads, and mpirun "
     "started this process); distributed.unavailable_reason() says why not."},
    {DIST "is_mpi_available", is_available_fn, TORCH, "distributed.is_mpi_available() -> boolean: as is_available()."},
    {DIST "is_nccl_available", is_nccl_available_fn, TORCH,
     "distributed.is_nccl_available() -> boolean: whether the nccl backend can be used (NCCL module, a CUDA device, MPI)."},
    {DIST "unavailable_reason", unavailable_reason_fn, TORCH,
     "distributed.unavailable_reason([backend]) -> string: why the backend (\"mpi\" or \"nccl\") cannot be used, "
     "\"\" when it can."},
    {DIST "init_process_group", init_process_group_fn, TORCH,
     "distributed.init_process_group([backend][, {backend=, timeout=, rank=, world_size=}]): joins the ranks that "
     "mpirun started; rank and world size come from MPI (rank=, world_size= are checked against them); backend "
     "\"mpi\" (CPU tensors, the default) or \"nccl\" (CUDA tensors); timeout in seconds (1800 by default) bounds "
     "every wait for the other ranks."},
    {DIST "is_initialized", is_initialized_fn, TORCH, "distributed.is_initialized() -> boolean."},
    {DIST "destroy_process_group", destroy_process_group_fn, TORCH,
     "distributed.destroy_process_group([group][, {group=}]): without a group, waits for every rank and ends MPI "
     "(a rank that failed meanwhile is an error naming it); with one, ends that group's use."},
    {DIST "get_rank", get_rank_fn, TORCH,
     "distributed.get_rank([group][, {group=}]) -> integer: this process's rank in the world (0-based; -1 when "
     "not a member of the group)."},
    {DIST "get_world_size", get_world_size_fn, TORCH,
     "distributed.get_world_size([group][, {group=}]) -> integer: the number of ranks of the group."},
    {DIST "get_backend", get_backend_fn, TORCH, "distributed.get_backend([group][, {group=}]) -> string."},
    {DIST "new_group", new_group_fn, TORCH,
     "distributed.new_group([ranks][, {ranks=, timeout=, backend=}]) -> group: a group of these world ranks (all by "
     "default); every rank of the world calls it, members or not."},
    {DIST "all_reduce", all_reduce_fn, TORCH,
     "distributed.all_reduce(tensor[, op][, {op=, group=, async_op=}]) -> nil | Work: reduces the tensor of every "
     "rank (ReduceOp.SUM by default) into each, in place."},
    {DIST "broadcast", broadcast_fn, TORCH,
     "distributed.broadcast(tensor, src[, {src=, group=, async_op=}]) -> nil | Work: rank src's tensor into every rank's."},
    {DIST "reduce", reduce_fn, TORCH,
     "distributed.reduce(tensor, dst[, op][, {dst=, op=, group=, async_op=}]) -> nil | Work: reduces into rank dst's "
     "tensor (the others' are left as they were)."},
    {DIST "all_gather", all_gather_fn, TORCH,
     "distributed.all_gather(tensor_list, tensor[, {group=, async_op=}]) -> nil | Work: every rank's tensor into "
     "tensor_list (rank r at index r + 1)."},
    {DIST "all_gather_into_tensor", all_gather_into_tensor_fn, TORCH,
     "distributed.all_gather_into_tensor(output_tensor, input_tensor[, {group=, async_op=}]) -> nil | Work: every "
     "rank's input_tensor into output_tensor, one after another in rank order."},
    {DIST "gather", gather_fn, TORCH,
     "distributed.gather(tensor[, gather_list][, dst][, {gather_list=, dst=, group=, async_op=}]) -> nil | Work: every "
     "rank's tensor into gather_list on rank dst (0 by default; the others pass no list)."},
    {DIST "scatter", scatter_fn, TORCH,
     "distributed.scatter(tensor[, scatter_list][, src][, {scatter_list=, src=, group=, async_op=}]) -> nil | Work: "
     "scatter_list[r + 1] of rank src (0 by default) into rank r's tensor."},
    {DIST "reduce_scatter", reduce_scatter_fn, TORCH,
     "distributed.reduce_scatter(output, input_list[, op][, {op=, group=, async_op=}]) -> nil | Work: rank r gets "
     "the reduction of input_list[r + 1] over the ranks."},
    {DIST "all_to_all", all_to_all_fn, TORCH,
     "distributed.all_to_all(output_tensor_list, input_tensor_list[, {group=, async_op=}]) -> nil | Work: "
     "input_tensor_list[j + 1] goes to rank j, output_tensor_list[j + 1] comes from rank j."},
    {DIST "barrier", barrier_fn, TORCH,
     "distributed.barrier([group][, {group=, async_op=}]) -> nil | Work: waits until every rank of the group gets here."},
    {DIST "send", send_fn<false>, TORCH,
     "distributed.send(tensor, dst[, {dst=, group=, tag=}]): sends the tensor to rank dst (which must recv a tensor "
     "of the same dtype and shape)."},
    {DIST "isend", send_fn<true>, TORCH,
     "distributed.isend(tensor, dst[, {dst=, group=, tag=}]) -> Work: send without waiting."},
    {DIST "recv", recv_fn<false>, TORCH,
     "distributed.recv(tensor[, src][, {src=, group=, tag=}]) -> integer: receives into the tensor from rank src "
     "(any rank when absent); returns the sender's rank."},
    {DIST "irecv", recv_fn<true>, TORCH,
     "distributed.irecv(tensor[, src][, {src=, group=, tag=}]) -> Work: recv without waiting (wait() returns the "
     "sender's rank)."},
    {DIST "_Work.wait", work_wait_fn, TORCH,
     "Work:wait() -> true | integer: waits for the operation (an error when it failed); an irecv's gives the sender's rank."},
    {DIST "_Work.is_completed", work_is_completed_fn, TORCH, "Work:is_completed() -> boolean: whether it has finished."},
    {DIST "_ProcessGroup.rank", group_rank_fn, TORCH, "ProcessGroup:rank() -> integer: this process's rank in the group (-1: not a member)."},
    {DIST "_ProcessGroup.size", group_size_fn, TORCH, "ProcessGroup:size() -> integer: the number of ranks."},
    {DIST "_ProcessGroup.ranks", group_ranks_fn, TORCH,
     "ProcessGroup:ranks() -> list: the world ranks of the members, in group-rank order."},
    {DIST "_Reducer", reducer_fn, TORCH,
     "distributed._Reducer(params, names[, {group=, bucket_cap_mb=, find_unused_parameters=}]) -> reducer: "
     "DistributedDataParallel's gradient reducer (tensor/distributed/reducer.hpp)."},
    {DIST "_ReducerMethods.prepare", reducer_prepare_fn, TORCH,
     "reducer:prepare(): the next backward averages the gradients over the group."},
    {DIST "_ReducerMethods.stats", reducer_stats_fn, TORCH,
     "reducer:stats() -> table (fields buckets, iterations, wait_seconds, launched_in_backward, bucket_params): the "
     "buckets (parameter indices, in launch order), the time backward waited for the all-reduces, and how many "
     "all-reduces started while backward still ran."},
};
#undef DIST

}  // namespace

void register_distributed_bindings() { register_bindings(kDistributedBindings, std::size(kDistributedBindings)); }

}  // namespace tide::lua
