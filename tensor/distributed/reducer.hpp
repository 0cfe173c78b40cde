// The gradient reducer of nn.parallel.DistributedDataParallel (PyTorch's Reducer, in small).
//
// Parameters are grouped into buckets of about bucket_bytes, in the reverse order of the
// model's parameters (roughly the order backward produces their gradients), one dtype and
// device per bucket. A hook on every parameter (autograd::add_post_accumulate_hook) notes its
// gradient as ready; when all gradients of a bucket are ready, and the buckets before it have
// started, the bucket's gradients are copied into one flat tensor and its all-reduce starts,
// while backward goes on computing the others'. When the backward walk ends
// (autograd::queue_callback), the reducer waits for the all-reduces, divides by the group's
// size and copies the averages back into each parameter's grad.
//
// Unused parameters: with find_unused_parameters, a parameter that got no gradient in this
// backward counts as zero (its bucket then starts at the end), and one that no rank used keeps
// no grad, as in PyTorch; without it, a parameter without a gradient is an error naming it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "process_group.hpp"

namespace tide::dist {

struct ReducerStats {
  int buckets = 0;
  int64_t iterations = 0;
  double wait_seconds = 0;  // in the end-of-backward wait for the all-reduces, summed
  int64_t launched_in_backward = 0;  // all-reduces started by the gradient hooks, while backward ran
};

class Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  // Call install() right after construction (the hooks need the reducer's shared_ptr).
  Reducer(std::shared_ptr<ProcessGroup> group, std::vector<Tensor> params, std::vector<std::string> names,
          size_t bucket_bytes, bool find_unused);
  void install();
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // The next backward synchronizes the gradients (the module's forward under grad mode).
  void prepare_for_backward();
  const ReducerStats& stats() const { return stats_; }
  // The buckets as lists of parameter indices (0-based), in launch order.
  std::vector<std::vector<size_t>> bucket_indices() const;

 private:
  struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // of each parameter in flat
    Tensor flat;
    size_t pending = 0;            // gradients not ready yet
    std::shared_ptr<Work> work;
  };
  void on_ready(size_t param);
  void launch_ready();
  void launch(Bucket& b);
  void finish();
  void abandon();

  std::shared_ptr<ProcessGroup> group_;
  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  bool find_unused_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;      // param -> bucket
  std::vector<int> hooks_;
  std::vector<bool> ready_;
  bool expecting_ = false;             // prepared: the next backward synchronizes
  bool queued_ = false;                // the end-of-backward callback is queued
  size_t next_launch_ = 0;
  ReducerStats stats_;
};

}  // namespace tide::dist
