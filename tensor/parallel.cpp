// A small fixed thread pool. parallel_for hands out chunks through an atomic counter; the
// caller works too and waits for the rest. Nested calls and tiny ranges run inline.
#include "parallel.hpp"
#include "cpu/blas.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <cblas.h>

#include "interrupt.hpp"

namespace tide {

namespace {

thread_local bool t_in_parallel = false;
// Workers asleep on the pool's condition variable (the rest spin or work).
std::atomic<int> g_sleeping_workers{0};

// About 50 microseconds of polling (a pause is ~10-40 cycles).
constexpr int kSpinIterations = 1 << 13;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Workers sleep on a condition variable; a parallel region publishes a job, wakes them and
// works on it too. The caller waits for the chunks to be done, and then only for workers
// already inside the region: it never waits for a worker that has not been scheduled yet
// (on a busy machine, or next to OpenBLAS's spinning threads, that wait cost milliseconds
// per region). A worker that wakes after its region closed skips it.
class ThreadPool {
 public:
  explicit ThreadPool(int n) { resize(n); }
  ~ThreadPool() { stop_all(); }

  int size() const { return int(workers_.size()) + 1; }

  // Starts workers until the pool has n threads, the caller included. When the system
  // refuses a thread (address-space, process or thread limits), the pool keeps those it has,
  // down to the caller alone: every region still runs, on fewer threads.
  void resize(int n) {
    std::lock_guard<std::mutex> region(run_mu_);
    stop_all();
    stopping_ = false;
    for (int i = 0; i + 1 < n; ++i) {
      try {
        workers_.emplace_back([this] { worker_loop(); });
      } catch (const std::exception&) {  // std::system_error, or no memory for the thread's state
        break;
      }
    }
  }

  // Runs job(chunk) for chunk in [0, nchunks), on the pool and the caller.
  void run(int64_t nchunks, const std::function<void(int64_t)>& job) {
    std::lock_guard<std::mutex> region(run_mu_);  // one parallel region at a time
    {
      std::lock_guard<std::mutex> g(mu_);
      job_ = &job;
      nchunks_ = nchunks;
      next_.store(0);
      done_.store(0);
      error_ = nullptr;
      open_ = true;
      ++generation_;
    }
    cv_.notify_all();
    work();
    // The other threads' chunks are usually a few microseconds from done: spin for them
    // first, as the workers spin for regions, since sleeping on done_cv_ costs a futex
    // wait and wake-up of the caller (tens of microseconds on a virtual machine).
    for (int i = 0; i < kSpinIterations; ++i) {
      if (done_.load(std::memory_order_acquire) == nchunks && active_.load(std::memory_order_acquire) == 0) break;
      cpu_relax();
    }
    std::unique_lock<std::mutex> g(mu_);
    done_cv_.wait(g, [&] { return done_.load() == nchunks; });
    open_ = false;
    done_cv_.wait(g, [&] { return active_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work() {
    t_in_parallel = true;
    for (;;) {
      int64_t c = next_.fetch_add(1);
      if (c >= nchunks_) break;
      try {
        (*job_)(c);
      } catch (...) {
        std::lock_guard<std::mutex> g(mu_);
        if (!error_) error_ = std::current_exception();
      }
      if (done_.fetch_add(1) + 1 == nchunks_) {
        std::lock_guard<std::mutex> g(mu_);
        done_cv_.notify_all();
      }
    }
    t_in_parallel = false;
  }

  // After a region a worker spins briefly before sleeping: regions come in bursts, and
  // waking a sleeping thread costs tens of microseconds on a virtual machine, longer than a
  // whole region of a mid-sized op.
  void worker_loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      g.unlock();
      for (int i = 0; i < kSpinIterations && generation_.load(std::memory_order_acquire) == seen &&
                      !stopping_.load(std::memory_order_relaxed);
           ++i)
        cpu_relax();
      g.lock();
      g_sleeping_workers.fetch_add(1, std::memory_order_relaxed);
      cv_.wait(g, [&] { return stopping_ || generation_ != seen; });
      g_sleeping_workers.fetch_sub(1, std::memory_order_relaxed);
      if (stopping_) return;
      seen = generation_;
      if (!open_) continue;  // woke too late: that region is over
      ++active_;
      g.unlock();
      work();
      g.lock();
      if (--active_ == 0) done_cv_.notify_all();
    }
  }

  void stop_all() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t)>* job_ = nullptr;
  int64_t nchunks_ = 0;  // written under mu_ before the region opens, read inside it
  std::atomic<int64_t> next_{0}, done_{0};
  std::atomic<int> active_{0};  // workers inside a region; changed under mu_
  bool open_ = false;
  std::atomic<uint64_t> generation_{0};  // written under mu_, also read while spinning
  std::atomic<bool> stopping_{false};
  std::exception_ptr error_;
};

// The machine's cores, read once (hardware_concurrency costs microseconds per call).
int default_threads() {
  static const int n = [] {
    unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : int(hw);
  }();
  return n;
}

std::mutex g_pool_mu;
ThreadPool* g_pool = nullptr;
std::atomic<int> g_num_threads{0};  // the pool's size once it exists, 0 before

// The pool, made on first use with the requested or default size (or as many threads as
// the system gives). Call with g_pool_mu held.
ThreadPool& pool_locked(int n) {
  if (!g_pool) {
    g_pool = new ThreadPool(n);  // lives for the process; workers are joined at resize only
    g_num_threads = g_pool->size();
  }
  return *g_pool;
}

ThreadPool& pool() {
  std::lock_guard<std::mutex> g(g_pool_mu);
  return pool_locked(default_threads());
}

// The most threads OpenBLAS may be given: those it started when it was loaded (one per core
// by default, or OPENBLAS_NUM_THREADS), read before tide first changes its count. OpenBLAS
// is never asked for more: it starts extra threads without checking that they started, and
// when one did not (a process or address-space limit), it hands work to it and waits for
// it forever. 1 after blas_threads_failed_to_start. Read and written with g_pool_mu held.
int g_blas_thread_limit = 0;

int blas_thread_limit() {
  if (g_blas_thread_limit == 0) g_blas_thread_limit = std::max(1, openblas_get_num_threads());
  return g_blas_thread_limit;
}

}  // namespace

int get_num_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : pool().size();
}

void set_num_threads(int n) {
  if (n < 1) n = 1;
  std::lock_guard<std::mutex> g(g_pool_mu);
  ThreadPool& p = pool_locked(n);
  if (p.size() != n) p.resize(n);
  g_num_threads = p.size();
  openblas_set_num_threads(std::min(n, blas_thread_limit()));
}

void blas_threads_failed_to_start() {
  std::lock_guard<std::mutex> g(g_pool_mu);
  g_blas_thread_limit = 1;
  openblas_set_num_threads(1);
}

bool in_parallel_region() { return t_in_parallel; }

int64_t pointwise_grain(int64_t numel) {
  if (numel >= kParallelGrain || numel < kAwakeParallelMin) return kParallelGrain;
  const int workers = g_num_threads.load(std::memory_order_relaxed) - 1;
  const bool awake = workers > 0 && g_sleeping_workers.load(std::memory_order_relaxed) < workers;
  return awake ? kAwakeParallelGrain : kParallelGrain;
}

BlasOnCallingThread::BlasOnCallingThread() : prev_(openblas_get_num_threads()) {
  if (prev_ > 1) openblas_set_num_threads(1);
}

BlasOnCallingThread::~BlasOnCallingThread() {
  if (prev_ > 1) openblas_set_num_threads(prev_);
}

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f) {
  if (end <= begin) return;
  check_interrupt();  // Ctrl-C stops long work between regions and between chunks
  if (grain < 1) grain = 1;
  int64_t n = end - begin;
  if (n <= grain || t_in_parallel || get_num_threads() == 1) {
    f(begin, end);
    return;
  }
  // Chunks of `grain` or more, as many as gives each thread a few to balance the load,
  // but their boundaries never depend on the thread count: the chunk size is fixed from n.
  int64_t nchunks = std::min<int64_t>((n + grain - 1) / grain, 64);
  int64_t chunk = (n + nchunks - 1) / nchunks;
  nchunks = (n + chunk - 1) / chunk;
  pool().run(nchunks, [&](int64_t c) {
    int64_t b = begin + c * chunk;
    check_interrupt();
    f(b, std::min(end, b + chunk));
  });
}

}  // namespace tide
