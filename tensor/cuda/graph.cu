// CUDA graphs for torch.compile's replays (DeviceBackend::graph_begin and the rest): the
// stream's work between graph_begin and graph_end is captured (relaxed mode, so that the
// caching allocator may still call cudaMalloc for a scratch block) and instantiated once;
// graph_launch queues the whole recording with one call instead of one launch per kernel.
#include <memory>
#include <vector>

#include "runtime.cuh"

namespace tide::cuda {

namespace {

struct ScratchBlock {
  void* ptr;
  size_t nbytes;
  int device;
};

struct Graph {
  cudaGraphExec_t exec = nullptr;
  std::vector<ScratchBlock> scratch;  // the captured kernels' scratch memory
};

// The scratch blocks given back while this thread captures (null when it does not), and
// whether one could not be kept (then the graph is not used: the block went back to the cache).
thread_local std::vector<ScratchBlock>* t_capture_scratch = nullptr;
thread_local bool t_scratch_lost = false;

void free_scratch(const std::vector<ScratchBlock>& blocks) {
  for (const ScratchBlock& b : blocks) free_block(b.ptr, b.nbytes, b.device);
}

}  // namespace

bool keep_for_graph(void* ptr, size_t nbytes, int device) noexcept {
  if (!t_capture_scratch) return false;
  try {
    t_capture_scratch->push_back({ptr, nbytes, device});
    return true;
  } catch (...) {
    t_scratch_lost = true;
    return false;
  }
}

void graph_begin(int device) {
  TIDE_ASSERT(!t_capture_scratch);
  auto scratch = std::make_unique<std::vector<ScratchBlock>>();  // (before the capture: may throw)
  cudaStream_t s = stream_for(device);
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
  t_capture_scratch = scratch.release();
  t_scratch_lost = false;
}

void* graph_end(int device) {
  std::unique_ptr<std::vector<ScratchBlock>> scratch(t_capture_scratch);
  t_capture_scratch = nullptr;
  cudaGraph_t g = nullptr;
  cudaError_t err = cudaStreamEndCapture(stream_for(device), &g);
  auto graph = std::make_unique<Graph>();
  if (err == cudaSuccess && g) err = cudaGraphInstantiate(&graph->exec, g, 0);
  if (g) cudaGraphDestroy(g);
  if (err != cudaSuccess || !graph->exec || t_scratch_lost) {
    cudaGetLastError();  // the capture's error is the answer (null), not a later op's
    if (graph->exec) cudaGraphExecDestroy(graph->exec);
    if (scratch) free_scratch(*scratch);
    return nullptr;
  }
  if (scratch) graph->scratch = std::move(*scratch);
  return graph.release();
}

void graph_launch(void* graph, int device) {
  check(cudaGraphLaunch(static_cast<Graph*>(graph)->exec, stream_for(device)), "cudaGraphLaunch");
}

void graph_free(void* graph) {
  auto* g = static_cast<Graph*>(graph);
  if (g->exec) cudaGraphExecDestroy(g->exec);
  free_scratch(g->scratch);
  delete g;
}

}  // namespace tide::cuda
