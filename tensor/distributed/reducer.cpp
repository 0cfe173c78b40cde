// The DDP reducer (see reducer.hpp).
#include "reducer.hpp"

#include <chrono>

#include "../autograd/autograd.hpp"
#include "../ops/creation.hpp"
#include "../ops/elementwise.hpp"

namespace tide::dist {

Reducer::Reducer(std::shared_ptr<ProcessGroup> group, std::vector<Tensor> params, std::vector<std::string> names,
                 size_t bucket_bytes, bool find_unused)
    : group_(std::move(group)), params_(std::move(params)), names_(std::move(names)), find_unused_(find_unused) {
  const char* op = "DistributedDataParallel";
  TIDE_CHECK(names_.size() == params_.size(), op, ": ", params_.size(), " parameters but ", names_.size(), " names");
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    TIDE_CHECK(p.defined() && autograd::is_leaf(p) && autograd::requires_grad(p), op, ": parameter '", names_[i],
               "' is not a leaf tensor that requires grad");
  }
  // Buckets in reverse parameter order, one dtype and device each, up to bucket_bytes.
  bucket_of_.assign(params_.size(), 0);
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& p = params_[k];
    Bucket* b = buckets_.empty() ? nullptr : &buckets_.back();
    bool fits = b && params_[b->params[0]].dtype() == p.dtype() && params_[b->params[0]].device() == p.device() &&
                size_t(b->offsets.back() + params_[b->params.back()].numel() + p.numel()) * p.itemsize() <= bucket_bytes;
    if (!fits) {
      buckets_.emplace_back();
      b = &buckets_.back();
    }
    int64_t off = b->params.empty() ? 0 : b->offsets.back() + params_[b->params.back()].numel();
    b->params.push_back(k);
    b->offsets.push_back(off);
    bucket_of_[k] = buckets_.size() - 1;
  }
  for (Bucket& b : buckets_) {
    const Tensor& last = params_[b.params.back()];
    b.flat = Tensor::empty({b.offsets.back() + last.numel()}, last.dtype(), last.device());
  }
  ready_.assign(params_.size(), false);
  stats_.buckets = int(buckets_.size());
}

void Reducer::install() {
  std::weak_ptr<Reducer> self = weak_from_this();
  for (size_t i = 0; i < params_.size(); ++i)
    hooks_.push_back(autograd::add_post_accumulate_hook(params_[i], [self, i](const Tensor&) {
      if (auto r = self.lock()) r->on_ready(i);
    }));
}

Reducer::~Reducer() {
  for (size_t i = 0; i < hooks_.size(); ++i) autograd::remove_post_accumulate_hook(params_[i], hooks_[i]);
  abandon();
}

// Waits for whatever is still in flight (a backward that failed half-way), ignoring errors:
// the buffers must outlive the all-reduces.
void Reducer::abandon() {
  for (Bucket& b : buckets_) {
    if (b.work) {
      try {
        b.work->wait();
      } catch (const std::exception&) {
      }
      b.work.reset();
    }
  }
}

void Reducer::prepare_for_backward() {
  abandon();
  for (Bucket& b : buckets_) b.pending = b.params.size();
  ready_.assign(params_.size(), false);
  next_launch_ = 0;
  expecting_ = true;
  queued_ = false;
}

std::vector<std::vector<size_t>> Reducer::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.params);
  return out;
}

void Reducer::on_ready(size_t param) {
  if (!expecting_ || ready_[param]) return;
  if (!queued_) {
    queued_ = true;
    std::weak_ptr<Reducer> self = weak_from_this();
    autograd::queue_callback([self] {
      if (auto r = self.lock()) r->finish();
    });
  }
  ready_[param] = true;
  --buckets_[bucket_of_[param]].pending;
  launch_ready();
}

// Starts the buckets whose gradients are all ready, in order.
void Reducer::launch_ready() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) launch(buckets_[next_launch_++]);
}

void Reducer::launch(Bucket& b) {
  autograd::GradModeGuard off(false);
  for (size_t j = 0; j < b.params.size(); ++j) {
    const Tensor& p = params_[b.params[j]];
    Tensor slot = Tensor::make_view(b.flat.storage(), p.sizes(), contiguous_strides(p.sizes()), b.offsets[j], p.dtype());
    Tensor g = autograd::grad(p);
    if (g.defined()) ops::copy_(slot, g);
    else ops::fill_(slot, Scalar(0.0));
  }
  Collective c;
  c.kind = OpKind::AllReduce;
  c.op = ReduceOp::Sum;
  c.tensor = b.flat;
  c.check = false;  // every rank built the same buckets (checked when DDP broadcast the parameters)
  b.work = group_->submit(std::move(c));
}

void Reducer::finish() {
  const char* op = "DistributedDataParallel";
  expecting_ = false;
  ++stats_.iterations;
  stats_.launched_in_backward += int64_t(next_launch_);  // the rest start here, after the walk
  std::vector<bool> used = ready_;
  if (next_launch_ < buckets_.size()) {
    if (!find_unused_) {
      size_t missing = 0;
      while (ready_[missing]) ++missing;
      abandon();
      TIDE_FAIL(op, ": parameter '", names_[missing], "' received no gradient in this backward pass; pass "
                "{find_unused_parameters=true} when some parameters do not take part in the loss");
    }
    for (size_t i = 0; i < params_.size(); ++i)
      if (!ready_[i]) {
        ready_[i] = true;
        --buckets_[bucket_of_[i]].pending;
      }
    launch_ready();
  }
  // Which parameters any rank used (only needed when some were unused here or elsewhere).
  Tensor used_anywhere;
  std::shared_ptr<Work> used_work;
  if (find_unused_) {
    Tensor flags = Tensor::empty({int64_t(params_.size())}, DType::UInt8);
    for (size_t i = 0; i < params_.size(); ++i) flags.data<uint8_t>()[i] = used[i] ? 1 : 0;
    used_anywhere = flags.to_device(params_[0].device());  // where the group's collectives run
    Collective c;
    c.kind = OpKind::AllReduce;
    c.op = ReduceOp::Max;
    c.tensor = used_anywhere;
    c.check = false;
    used_work = group_->submit(std::move(c));
  }
  auto t0 = std::chrono::steady_clock::now();
  for (Bucket& b : buckets_) {
    auto w = std::move(b.work);
    w->wait();
  }
  if (used_work) {
    used_work->wait();
    used_anywhere = used_anywhere.to_device(Device{});
  }
  stats_.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  autograd::GradModeGuard off(false);
  double n = double(group_->size());
  for (Bucket& b : buckets_) {
    ops::binary(BinaryOp::Div, b.flat, Scalar(n), &b.flat);
    for (size_t j = 0; j < b.params.size(); ++j) {
      size_t i = b.params[j];
      Tensor& p = params_[i];
      if (used_anywhere.defined() && used_anywhere.data<uint8_t>()[i] == 0) continue;
      Tensor avg = Tensor::make_view(b.flat.storage(), p.sizes(), contiguous_strides(p.sizes()), b.offsets[j], p.dtype());
      Tensor g = autograd::grad(p);
      if (g.defined()) ops::copy_(g, avg);
      else autograd::set_grad(p, avg.clone());
    }
  }
}

}  // namespace tide::dist
