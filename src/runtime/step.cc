#include "runtime/step.h"

#include <atomic>

namespace msrt::runtime {
namespace {

std::atomic<uint64_t> g_step{0};

}  // namespace

uint64_t CurrentStep() { return g_step.load(std::memory_order_acquire); }

uint64_t AdvanceStep() { return g_step.fetch_add(1, std::memory_order_acq_rel) + 1; }

}  // namespace msrt::runtime
