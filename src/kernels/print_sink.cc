#include "kernels/print_sink.h"

#include <atomic>

#include "msrt/core/errors.h"

namespace msrt::kernels {
namespace {

std::atomic<PrintSinkFn> g_sink{nullptr};

}  // namespace

void SetPrintSink(PrintSinkFn sink) { g_sink.store(sink, std::memory_order_release); }

void EmitPrint(const std::vector<PrintItem>& items) {
  PrintSinkFn sink = g_sink.load(std::memory_order_acquire);
  if (sink == nullptr) throw RuntimeError("[print] no print sink is installed in this process.");
  sink(items);
}

}  // namespace msrt::kernels
