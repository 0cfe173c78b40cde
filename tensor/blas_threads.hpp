// Keeping OpenBLAS on the calling thread for a scope.
#pragma once

namespace tide {

// While alive, every BLAS call runs on the thread that makes it (OpenBLAS's own threads are
// idle); the previous count comes back at the end of the scope. For products too small for
// OpenBLAS's threads to pay (a recurrent layer's per-step products), and for batches of
// products that the engine's threads share out, one product per thread. Created on the
// thread that owns the engine (not inside a parallel_for).
class BlasOnCallingThread {
 public:
  BlasOnCallingThread();
  ~BlasOnCallingThread();
  BlasOnCallingThread(const BlasOnCallingThread&) = delete;
  BlasOnCallingThread& operator=(const BlasOnCallingThread&) = delete;

 private:
  int prev_;
};

}  // namespace tide
