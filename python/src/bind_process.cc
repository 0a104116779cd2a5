// The process around the runtime: Ctrl-C reaching kernels and waits (Note
// [Interrupts] in src/core/interrupt.h), and waits that release the GIL.
#include <signal.h>

#include "bindings.h"
#include "core/interrupt.h"
#include "runtime/eager.h"

namespace msrt::python {
namespace {

struct sigaction g_previous_sigint {};

// Chained in front of Python's SIGINT handler: counts the interrupt for
// msrt's kernels and waits, then lets Python raise KeyboardInterrupt.
void OnSigint(int sig, siginfo_t* info, void* context) {
  RequestInterrupt();
  if (g_previous_sigint.sa_flags & SA_SIGINFO) {
    g_previous_sigint.sa_sigaction(sig, info, context);
  } else if (g_previous_sigint.sa_handler != SIG_DFL && g_previous_sigint.sa_handler != SIG_IGN) {
    g_previous_sigint.sa_handler(sig);
  }
}

// Installed when Python's own handler is in place (not when SIGINT is
// ignored or left to the default action). A later signal.signal(SIGINT, ...)
// replaces it; waits and kernels then no longer see Ctrl-C.
bool InstallSigintHandler() {
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0) return false;
  bool is_function = (current.sa_flags & SA_SIGINFO) != 0 ||
                     (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
  if (!is_function || current.sa_sigaction == &OnSigint) return false;
  g_previous_sigint = current;
  struct sigaction ours = current;
  ours.sa_flags = (current.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
  ours.sa_sigaction = &OnSigint;
  return sigaction(SIGINT, &ours, nullptr) == 0;
}

void* ReleaseGil() { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; }

void RetakeGil(void* state) {
  if (state != nullptr) PyEval_RestoreThread(static_cast<PyThreadState*>(state));
}

}  // namespace

void BindProcess(py::module_& m) {
  SetBlockingHook(BlockingHook{&ReleaseGil, &RetakeGil});
  m.def("_install_interrupt_handler", &InstallSigintHandler,
        "Chains msrt's Ctrl-C handling in front of Python's SIGINT handler; False when SIGINT is not Python's.");
  m.def("_request_interrupt", &RequestInterrupt, "What Ctrl-C does to msrt's kernels and waits (for tests).");
  m.def("_interrupt_count", &InterruptCount);
  m.def(
      "_drain_before_fork",
      [] {
        py::gil_scoped_release release;
        runtime::DrainForFork();
      },
      "Waits for queued PYNATIVE operators before os.fork (Note [Fork] in src/runtime/fork.cc).");
}

}  // namespace msrt::python
