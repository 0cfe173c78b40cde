// Memory budgets: the charged blocks are remembered in one map (block -> budget, bytes), so
// that a block freed after its interpreter is gone, or on another thread, still refunds the
// right budget. The map is consulted only while some block is charged.
#include "memory_budget.hpp"

#include <mutex>
#include <string>
#include <unordered_map>

#include "error.hpp"

namespace tide {

namespace {

thread_local MemoryBudget* t_budget = nullptr;

struct ChargedBlock {
  std::shared_ptr<MemoryBudget> budget;
  size_t bytes;
};

struct ChargedBlocks {
  std::mutex mu;
  std::unordered_map<void*, ChargedBlock> blocks;
  std::atomic<size_t> count{0};
};

ChargedBlocks& charged() {
  static ChargedBlocks* c = new ChargedBlocks();  // never destroyed: blocks may die at exit
  return *c;
}

}  // namespace

bool MemoryBudget::try_charge(size_t n, size_t overdraft) {
  size_t ceiling = limit_ + overdraft;
  size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (n > ceiling || used > ceiling - n) return false;
  } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
  return true;
}

void MemoryBudget::charge_tensor(size_t n) {
  if (try_charge(n)) return;
  if (reclaim && !reclaiming_) {
    reclaiming_ = true;
    try {
      reclaim();
    } catch (...) {
    }
    reclaiming_ = false;
    if (try_charge(n)) return;
  }
  throw OutOfMemory("out of memory: a tensor of " + std::to_string(n) + " bytes would exceed the memory limit of " +
                    std::to_string(limit_) + " bytes (" + std::to_string(used()) + " bytes in use)");
}

void check_host_memory(const char* op, size_t bytes) {
  MemoryBudget* budget = t_budget;
  if (!budget || budget->try_charge(bytes)) {
    if (budget) budget->refund(bytes);
    return;
  }
  throw OutOfMemory(std::string(op) + ": out of memory: " + std::to_string(bytes) +
                    " bytes would exceed the memory limit of " + std::to_string(budget->limit()) + " bytes (" +
                    std::to_string(budget->used()) + " bytes in use)");
}

MemoryBudgetScope::MemoryBudgetScope(MemoryBudget* budget) : saved_(t_budget) { t_budget = budget; }
MemoryBudgetScope::~MemoryBudgetScope() { t_budget = saved_; }

void* budget_charged_allocation(size_t bytes, const std::function<void*()>& allocate) {
  MemoryBudget* budget = t_budget;
  if (!budget) return allocate();
  budget->charge_tensor(bytes);
  void* block = nullptr;
  try {
    block = allocate();
    ChargedBlocks& c = charged();
    std::lock_guard<std::mutex> lock(c.mu);
    c.blocks[block] = ChargedBlock{budget->shared_from_this(), bytes};
    c.count.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
    budget->refund(bytes);
    throw;
  }
  return block;
}

void budget_release(void* block) {
  ChargedBlocks& c = charged();
  if (c.count.load(std::memory_order_relaxed) == 0) return;
  std::shared_ptr<MemoryBudget> budget;  // released after the lock
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.blocks.find(block);
    if (it == c.blocks.end()) return;
    budget = std::move(it->second.budget);
    bytes = it->second.bytes;
    c.blocks.erase(it);
    c.count.fetch_sub(1, std::memory_order_relaxed);
  }
  budget->refund(bytes);
}

}  // namespace tide
