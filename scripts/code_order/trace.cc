// Records, in first-call order, every instrumented function that a run calls.
//
// Preloaded (LD_PRELOAD) into a Python process whose libmsrt was compiled with
// -finstrument-functions: the compiler calls __cyg_profile_func_enter on entry
// to every function, and this library notes each function the first time. At
// exit it writes one line per function, "<offset in its library> <library>",
// to the file named by MSRT_CODE_TRACE. scripts/code_order/order.py turns the offsets
// into the section ordering file that links libmsrt (src/code_order.txt).
//
// Called from every thread on every call, so the fast path is one lock-free
// probe of an open-addressed table of function addresses.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr std::size_t kSlots = std::size_t{1} << 20;  // a power of two, far above libmsrt's function count
std::atomic<std::uintptr_t> g_seen[kSlots];
std::atomic<std::uintptr_t> g_order[kSlots];
std::atomic<std::size_t> g_count{0};

__attribute__((no_instrument_function)) std::size_t Slot(std::uintptr_t fn) {
  return (fn * 0x9E3779B97F4A7C15ull) >> 44;  // 64 - 20 bits
}

__attribute__((no_instrument_function)) void Note(std::uintptr_t fn) {
  for (std::size_t i = Slot(fn);; i = (i + 1) & (kSlots - 1)) {
    std::uintptr_t cur = g_seen[i].load(std::memory_order_relaxed);
    if (cur == fn) return;
    if (cur == 0) {
      std::uintptr_t expected = 0;
      if (g_seen[i].compare_exchange_strong(expected, fn)) {
        g_order[g_count.fetch_add(1)].store(fn, std::memory_order_relaxed);
        return;
      }
      if (expected == fn) return;
    }
  }
}

struct Dump {
  __attribute__((no_instrument_function)) ~Dump() {
    const char* path = std::getenv("MSRT_CODE_TRACE");
    if (path == nullptr) return;
    std::FILE* out = std::fopen(path, "w");
    if (out == nullptr) {
      std::perror(path);
      return;
    }
    std::size_t n = g_count.load();
    for (std::size_t k = 0; k < n; ++k) {
      std::uintptr_t fn = g_order[k].load();
      Dl_info info;
      if (fn == 0 || dladdr(reinterpret_cast<void*>(fn), &info) == 0 || info.dli_fname == nullptr) continue;
      std::fprintf(out, "%lx %s\n", static_cast<unsigned long>(fn - reinterpret_cast<std::uintptr_t>(info.dli_fbase)),
                   info.dli_fname);
    }
    std::fclose(out);
  }
} g_dump;

}  // namespace

extern "C" {
__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void* fn, void*) {
  Note(reinterpret_cast<std::uintptr_t>(fn));
}
__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void*, void*) {}
}
