// Note [Thread pool settings]
// The kernel pool lives in core, which reads no context: the runtime reads
// runtime_num_threads, inter_op_parallel_num and deterministic when the
// library loads and pushes them in (ConfigureThreadPool,
// SetDeterministicKernels), then again after every change of one of them.
// A plan that asks for more threads than the hardware has warns on change.
#include "context/options.h"
#include "core/thread_pool.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"

namespace msrt::runtime {
namespace {

namespace opts = context::runtime_options;

constexpr std::string_view kPoolConsumer = "CPU thread pool";
constexpr std::string_view kDeterministicConsumer = "CPU kernels (fixed reduction order)";

ThreadPlan PushPlan() { return ConfigureThreadPool(opts::RuntimeNumThreads().Get(), opts::InterOpParallelNum().Get()); }

void PushDeterministic() { SetDeterministicKernels(opts::Deterministic().Get() == "ON"); }

struct ThreadSettings {
  ThreadSettings() {
    PushPlan();
    PushDeterministic();
    context::Store& ctx = context::Global();
    plan = ctx.Subscribe({opts::RuntimeNumThreads(), opts::InterOpParallelNum()}, std::string(kPoolConsumer),
                         [](const context::Change&) {
                           ThreadPlan p = PushPlan();
                           if (p.oversubscribed) {
                             Warn(WarningKind::kGeneral,
                                  StrCat("runtime_num_threads=", p.runtime_threads,
                                         " and inter_op_parallel_num=", p.inter_op, " ask for ", p.total, " threads (",
                                         p.scheduler, " scheduler, ", p.kernel, " kernel) on ", p.hardware,
                                         " hardware threads; they will compete for the cores."));
                           }
                         });
    deterministic = ctx.Subscribe({opts::Deterministic()}, std::string(kDeterministicConsumer),
                                  [](const context::Change&) { PushDeterministic(); });
  }
  context::Subscription plan;
  context::Subscription deterministic;
};

// Pushed at load: the pool is sized before any kernel runs.
// Never destroyed (its subscriptions follow the context to exit); the pointer
// keeps it reachable, so leak checkers do not report it.
ThreadSettings* const kThreadSettings = new ThreadSettings();

}  // namespace
}  // namespace msrt::runtime
