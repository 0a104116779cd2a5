// The eager (PYNATIVE_MODE) executor: runs each op as it is called, on a
// dispatcher thread, so Python can go on while kernels run.
//
// Note [Async errors]
// An op's outputs are allocated when it is called (shapes come from
// inference), and carry the op's Completion as their pending write. The
// dispatcher thread runs queued ops in call order. A failing kernel fails
// its Completion with the error re-raised in the same Python type, its
// message extended by the op's name, input shapes and the Python line that
// launched it; ops that read a failed output fail the same way without
// running. The error surfaces when Python reads a value (asnumpy, item,
// printing). With pynative_synchronize=True each op runs on the calling
// thread and raises at once, at the Python line of the failing op.
#include "runtime/eager.h"

#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "context/options.h"
#include "core/interrupt.h"
#include "core/random.h"
#include "core/views.h"
#include "kernels/kernel.h"
#include "memory/allocator.h"
#include "msrt/context/context.h"
#include "ops/call.h"
#include "runtime/launch.h"
#include "runtime/step.h"

namespace msrt::runtime {
namespace {

namespace opts = context::runtime_options;

// Note [Parsed device target]
// Every op acts on device_target as a DeviceTarget. It is parsed when the
// key changes (the subscription is made before the first read, so no change
// slips between), not per call; a thread with scoped overrides may see
// another value and parses its own.
class DeviceSetting {
 public:
  DeviceSetting() {
    subscription_ = context::Global().Subscribe({opts::DeviceTarget()}, std::string(kDeviceConsumer),
                                                [this](const context::Change&) { Refresh(); });
    Refresh();
  }
  DeviceTarget device() const {
    if (context::Global().ThreadHasOverrides()) return Parse(opts::DeviceTarget().Get());
    return device_.load(std::memory_order_relaxed);
  }
  static constexpr std::string_view kDeviceConsumer = "eager dispatcher (backend check)";

 private:
  static DeviceTarget Parse(const std::string& name) { return ParseDeviceTarget(name).value_or(DeviceTarget::kCPU); }
  void Refresh() { device_.store(Parse(opts::DeviceTarget().Get()), std::memory_order_relaxed); }
  std::atomic<DeviceTarget> device_{DeviceTarget::kCPU};
  context::Subscription subscription_;
};

DeviceSetting& Device() {
  static auto* setting = new DeviceSetting();  // never destroyed: ops may run during exit
  return *setting;
}

OriginFn g_origin_hook = nullptr;
OriginFn g_stack_hook = nullptr;
thread_local bool t_on_dispatcher = false;

struct WorkItem {
  const kernels::KernelDef* kernel;
  const ops::OpDef* op;
  std::vector<Tensor> inputs;
  std::vector<std::shared_ptr<Completion>> input_writes;
  std::vector<Tensor> outputs;
  Dict attrs;
  std::shared_ptr<Completion> completion;
  std::string origin;
  uint64_t step = 0;        // the training step the op was called in (Note [Eager iterations])
  uint64_t interrupts = 0;  // InterruptCount() at the call: an interrupt since drops the op
  uint64_t cost_key = 0;    // Note [Kernel cost estimates]: 0 when its time is not kept
};

std::string DescribeInputs(const std::vector<Tensor>& inputs) {
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += StrCat(i ? ", " : "", DTypeName(inputs[i].dtype()), ShapeRepr(inputs[i].shape()));
  }
  return out;
}

bool TouchesHostSharedMemory(const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs) {
    if (t.defined() && t.impl()->storage->shared_with_host()) return true;
  }
  return false;
}

std::string Where(const std::string& origin) { return origin.empty() ? "" : StrCat(" (launched at ", origin, ")"); }

void RunKernel(const kernels::KernelDef& kernel, const ops::OpDef& op, const std::vector<Tensor>& inputs,
               std::vector<Tensor>& outputs, const Dict& attrs, uint64_t step) {
  const LaunchSite site{.graph = {}, .node = {}, .iteration = step};
  LaunchKernel(kernel, op, inputs, outputs, attrs, site);
}

// Note [Kernel cost estimates]
// Whether an op above the inline size (Note [Inline small ops]) is worth
// running at the call depends on its kernel's time, which its sizes alone
// do not tell (a convolution does hundreds of multiply-adds per output, an
// addition one). The runtime keeps what each kernel took, last time, on the
// same input and output shapes: a table of 64-bit words (hash of kernel and
// shapes, time in units of 128 ns) written after each such run, wherever it
// ran, and read without a lock. A collision or a race only misjudges one
// op's placement, never its result.
class KernelCosts {
 public:
  static uint64_t Key(const kernels::KernelDef& kernel, const std::vector<Tensor>& inputs,
                      const std::vector<Tensor>& outputs) {
    uint64_t h = Mix(0x9e3779b97f4a7c15ULL, reinterpret_cast<uintptr_t>(&kernel));
    const auto add = [&h](const Tensor& t) {
      if (!t.defined()) {
        h = Mix(h, 0xabcdefULL);
        return;
      }
      h = Mix(h, static_cast<uint64_t>(t.dtype()) + (static_cast<uint64_t>(t.ndim()) << 8));
      for (int64_t d : t.shape()) h = Mix(h, static_cast<uint64_t>(d));
    };
    for (const Tensor& t : inputs) add(t);
    h = Mix(h, 0x5bd1e995ULL);
    for (const Tensor& t : outputs) add(t);
    return h | 1;  // never 0 (no key)
  }
  /// The kernel's last time on these shapes in ns, or -1 when unknown.
  int64_t EstimateNs(uint64_t key) const {
    const uint64_t word = slots_[key % kSlots].load(std::memory_order_relaxed);
    if (word == 0 || (word & ~kTimeMask) != (key & ~kTimeMask)) return -1;
    return static_cast<int64_t>(word & kTimeMask) * kUnitNs;
  }
  void Record(uint64_t key, int64_t ns) {
    const uint64_t units = std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(ns, 0)) / kUnitNs, kTimeMask);
    slots_[key % kSlots].store((key & ~kTimeMask) | units, std::memory_order_relaxed);
  }

 private:
  static uint64_t Mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
  }
  static constexpr size_t kSlots = 4093;          // a prime: the index uses every bit of the key
  static constexpr uint64_t kTimeMask = 0xFFFFF;  // 20 bits of 128 ns: up to 134 ms
  static constexpr int64_t kUnitNs = 128;
  std::array<std::atomic<uint64_t>, kSlots> slots_{};
};

KernelCosts& Costs() {
  static auto* costs = new KernelCosts();  // ops may run during exit
  return *costs;
}

int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// RunKernel, keeping its time under `cost_key` when that is not 0 (only a
// kernel that finished: a failed one's time says nothing).
void RunKernelTimed(const kernels::KernelDef& kernel, const ops::OpDef& op, const std::vector<Tensor>& inputs,
                    std::vector<Tensor>& outputs, const Dict& attrs, uint64_t step, uint64_t cost_key) {
  if (cost_key == 0) return RunKernel(kernel, op, inputs, outputs, attrs, step);
  const int64_t start = MonotonicNs();
  RunKernel(kernel, op, inputs, outputs, attrs, step);
  Costs().Record(cost_key, MonotonicNs() - start);
}

// Re-raises the current exception as the same Python type with context.
[[noreturn]] void RethrowWithContext(const ops::OpDef& op, const std::vector<Tensor>& inputs,
                                     const std::string& origin) {
  std::string context = StrCat(" [while running '", op.name, "' on inputs ", DescribeInputs(inputs), Where(origin),
                               "]");
  try {
    throw;
  } catch (const Error& e) {
    ThrowError(e.kind(), e.message() + context);
  } catch (const std::bad_alloc&) {
    throw MemoryError("Out of memory" + context);
  } catch (const std::exception& e) {
    throw RuntimeError(e.what() + context);
  }
}

// Note [Eager backpressure]
// The queue holds at most pynative_queue_depth ops, and at most
// kQueuedBytes of outputs of ops not yet taken (one op is always let in,
// however large): a caller launching more waits (interpreter lock released)
// until the dispatcher has taken enough, so the memory of a loop that never
// reads a value stays bounded. The byte bound matters for large tensors:
// a queued op holds its outputs, and its inputs, which Python may already
// have dropped, so 64 queued ops on 32 MiB activations would keep 2 GiB of
// intermediates alive that a synchronous runtime frees as it goes. A few
// MiB still hide Python's time behind the kernels of small ops. An
// interrupt (Note [Interrupts]) drops every op queued before it: each fails
// with a RuntimeError saying it was not run.
class Dispatcher {
 public:
  static constexpr size_t kQueuedBytes = size_t{4} << 20;

  void Enqueue(WorkItem item) {
    const size_t depth = static_cast<size_t>(std::max<int64_t>(opts::PynativeQueueDepth().Get(), 1));
    const size_t bytes = OutputBytes(item);
    const auto room = [&] {
      return queue_.empty() || (queue_.size() < depth && queued_bytes_ + bytes <= kQueuedBytes);
    };
    {
      std::unique_lock lock(mutex_);
      if (!started_) {
        worker_ = std::thread([this] { Loop(); });
        pthread_setname_np(worker_.native_handle(), "msrt-dispatch");
        worker_.detach();
        started_ = true;
      }
      if (!room()) {
        lock.unlock();
        BlockingRegion blocked;
        lock.lock();
        InterruptibleWait(taken_, lock, room, "waiting for queued PYNATIVE operators");
      }
      queue_.push_back(std::move(item));
      queued_bytes_ += bytes;
      ++queued_;
      queue_size_.store(queue_.size(), std::memory_order_release);
      if (!sleeping_) return;  // the worker is busy or spinning: it will see the item
    }
    wake_.notify_one();
  }

  void WaitAll() {
    std::unique_lock lock(mutex_);
    if (finished_ == queued_) return;
    lock.unlock();
    BlockingRegion blocked;
    lock.lock();
    InterruptibleWait(
        idle_, lock, [this] { return finished_ == queued_; }, "waiting for PYNATIVE operators");
  }

  /// Whether every queued op's kernel has run (a snapshot, without the
  /// lock: every small op's call asks). An op counts as run before its
  /// completion is set, so a caller that waited for an output and calls
  /// again finds the dispatcher idle, though it may still be freeing the
  /// op's tensors. Reading queued_ first, an op queued before this call
  /// counts as running until its count is visible.
  bool Idle() const {
    const uint64_t queued = queued_.load(std::memory_order_acquire);
    return ran_.load(std::memory_order_acquire) == queued;
  }

  /// Waits for the queue to drain, without giving way to interrupts (fork).
  void Drain() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return finished_ == queued_; });
  }

 private:
  void Loop() {
    t_on_dispatcher = true;
    for (;;) {
      // Python usually launches the next op within microseconds: spin a
      // little before sleeping, which saves a wake-up per op.
      for (int i = 0; i < kSpins && queue_size_.load(std::memory_order_acquire) == 0; ++i) {
        __builtin_ia32_pause();
      }
      WorkItem item;
      {
        std::unique_lock lock(mutex_);
        sleeping_ = true;
        wake_.wait(lock, [this] { return !queue_.empty(); });
        sleeping_ = false;
        item = std::move(queue_.front());
        queue_.pop_front();
        queued_bytes_ -= OutputBytes(item);
        queue_size_.store(queue_.size(), std::memory_order_release);
      }
      taken_.notify_one();
      Execute(item);
      item = WorkItem{};  // free its tensors before anyone waiting hears it finished
      {
        std::lock_guard lock(mutex_);
        ++finished_;
        if (finished_ == queued_) idle_.notify_all();
      }
    }
  }

  void Execute(WorkItem& item) {
    bool counted = false;  // ran_ counts each op once, before its completion is set
    const auto count = [&] {
      if (!counted) ran_.fetch_add(1, std::memory_order_release);
      counted = true;
    };
    try {
      if (InterruptCount() != item.interrupts) {
        throw RuntimeError(StrCat("'", item.op->name, "' was not run: the program was interrupted ",
                                  "(KeyboardInterrupt) after it was called", Where(item.origin), "."));
      }
      for (size_t i = 0; i < item.input_writes.size(); ++i) {
        const auto& write = item.input_writes[i];
        if (write && write->error()) {
          try {
            std::rethrow_exception(write->error());
          } catch (const Error& e) {
            ThrowError(e.kind() == ErrorKind::kInterrupted ? ErrorKind::kRuntime : e.kind(),
                       StrCat("'", item.op->name, "' was not run: its input ", i,
                              " came from an op that failed: ", e.message()));
          }
        }
      }
      try {
        RunKernelTimed(*item.kernel, *item.op, item.inputs, item.outputs, item.attrs, item.step, item.cost_key);
      } catch (const Interrupted& e) {
        // Readers of its outputs later see a RuntimeError, not a second KeyboardInterrupt.
        throw RuntimeError(StrCat("'", item.op->name, "' was stopped: the program was interrupted ",
                                  "(KeyboardInterrupt) while it ran", Where(item.origin), "."));
      } catch (...) {
        RethrowWithContext(*item.op, item.inputs, item.origin);
      }
      count();
      item.completion->Finish();
    } catch (...) {
      count();
      item.completion->Fail(std::current_exception());
    }
  }

  static size_t OutputBytes(const WorkItem& item) {
    size_t bytes = 0;
    for (const Tensor& t : item.outputs) bytes += t.nbytes();
    return bytes;
  }

  static constexpr int kSpins = 4000;  // roughly 20-50 us
  std::mutex mutex_;
  bool sleeping_ = false;  // guarded by mutex_
  std::atomic<size_t> queue_size_{0};
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::condition_variable taken_;  // the worker took an item: room in the queue
  std::deque<WorkItem> queue_;
  std::thread worker_;
  bool started_ = false;
  // queued_ and finished_ are written under mutex_; Idle() reads queued_
  // and ran_ (the ops whose kernels ran, or failed) without it.
  std::atomic<uint64_t> queued_{0};
  std::atomic<uint64_t> finished_{0};
  std::atomic<uint64_t> ran_{0};
  size_t queued_bytes_ = 0;  // outputs of the ops in queue_, under mutex_
};

// Replaced in a fork child (the old one's thread did not come along).
std::atomic<Dispatcher*> g_dispatcher{new Dispatcher()};

Dispatcher& GlobalDispatcher() { return *g_dispatcher.load(std::memory_order_acquire); }

class EagerExecutor final : public ops::Executor {
 public:
  std::vector<Tensor> Run(const ops::OpDef& op, const std::vector<Tensor>& given, const Dict& attrs,
                          const std::vector<ops::TensorMeta>& in_metas,
                          const std::vector<ops::TensorMeta>& metas) override {
    std::vector<Tensor> stand_ins;
    if (!op.props.meta_only_inputs.empty()) stand_ins = MetaStandIns(op, given);  // same shapes and dtypes
    const std::vector<Tensor>& inputs = op.props.meta_only_inputs.empty() ? given : stand_ins;
    DeviceTarget device = RequireBackend(CurrentDevice());
    for (const Tensor& t : inputs) {
      if (t.device() != device) {
        ops::OpError(ErrorKind::kRuntime, op.name,
                     StrCat("an input lives on ", DeviceTargetName(t.device()), " but the device target is ",
                            DeviceTargetName(device)));
      }
    }
    const kernels::KernelDef* kernel = kernels::SelectKernelOrConvert(op.name, device, in_metas, attrs);
    if (kernel == nullptr) {
      ops::OpError(ErrorKind::kType, op.name,
                   StrCat("has no ", DeviceTargetName(device), " kernel for inputs ", DescribeInputs(inputs)));
    }
    // Note [Views]: the reshape family shares its input's storage; its
    // output is ready when the input is.
    if (op.props.view && device == DeviceTarget::kCPU && !inputs[0].impl()->storage->shared_with_host() &&
        !inputs[0].symbolic()) {
      return {inputs[0].Reshaped(metas.at(0).shape)};
    }
    // A tensor written in place stops sharing its storage with views first,
    // once every queued op that may use that storage has run.
    const auto detach = [](const Tensor& written) {
      if (!SharesStorage(written)) return;
      GlobalDispatcher().WaitAll();
      written.Sync();
      DetachFromViews(written);
    };
    if (op.props.inplace) detach(inputs.at(0));
    for (int i : op.props.writes_inputs) detach(inputs.at(static_cast<size_t>(i)));

    std::vector<Tensor> outputs;
    outputs.reserve(metas.size());
    if (op.props.inplace) {
      outputs.push_back(inputs.at(0));
    } else {
      for (const ops::TensorMeta& m : metas) outputs.push_back(Tensor::Empty(m.shape, m.dtype, device));
    }

    // Random ops take their stream now, in call order (Note [Random streams]).
    Dict random_attrs;
    const Dict* run_attrs = &attrs;
    if (op.props.random) {
      random_attrs = attrs;
      random::ReserveStream(random_attrs);
      run_attrs = &random_attrs;
    }

    // Side effects (printing) happen at the call, after every earlier op, in
    // order with the caller's own output (one that waits_for_inputs_only:
    // after the ops that write its inputs, beside the other queued ones). Ops on memory Python may touch
    // between calls run at the call too (Note [Foreign and host-shared
    // memory] in src/core/tensor.cc); one that writes an input first lets
    // every queued op finish, as a queued op may still read that input.
    const bool host_shared = TouchesHostSharedMemory(inputs);
    if (opts::PynativeSynchronize().Get() || op.props.side_effect || op.props.data_dependent_shape || host_shared) {
      const bool writes = op.props.inplace || !op.props.writes_inputs.empty();
      if ((op.props.side_effect && !op.props.waits_for_inputs_only) || (host_shared && writes)) {
        GlobalDispatcher().WaitAll();
      }
      for (const Tensor& t : inputs) t.Sync();
      try {
        RunKernel(*kernel, op, inputs, outputs, *run_attrs, CurrentStep());
      } catch (...) {
        RethrowWithContext(op, inputs, "");
      }
      return outputs;
    }
    uint64_t cost_key = 0;
    if (RunsInline(*kernel, inputs, outputs, &cost_key)) {
      RunInline(*kernel, op, inputs, outputs, *run_attrs, cost_key);
      return outputs;
    }
    WorkItem item{kernel,
                  &op,
                  inputs,
                  {},
                  outputs,
                  *run_attrs,
                  std::make_shared<Completion>(),
                  g_origin_hook ? g_origin_hook() : std::string(),
                  CurrentStep(),
                  InterruptCount(),
                  cost_key};
    item.input_writes.reserve(inputs.size());
    for (const Tensor& t : inputs) item.input_writes.push_back(t.pending());
    for (const Tensor& t : outputs) t.set_pending(item.completion);
    for (int i : op.props.writes_inputs) inputs.at(static_cast<size_t>(i)).set_pending(item.completion);
    GlobalDispatcher().Enqueue(std::move(item));
    return outputs;
  }

 private:
  // Note [Inline small ops]
  // Handing an op to the dispatcher costs more than a kernel on a few
  // thousand elements. When nothing is queued and every input is written, a
  // small op runs at the call instead, with the same result as if the
  // dispatcher had run it at once: a kernel error does not raise here but
  // fails the outputs' completion, raised at the next read, naming the same
  // launching line (the hook is read now, at the call).
  // A larger op is handled the same way when its kernel took less than
  // kInlineCostNs last time on the same shapes (Note [Kernel cost
  // estimates]): the hand-off, and waking the dispatcher, cost a real
  // share of such a kernel. For every larger op *cost_key is set, so that
  // its time is kept wherever it runs.
  static constexpr int64_t kInlineElements = 4096;
  static constexpr int64_t kInlineCostNs = 100'000;

  static bool RunsInline(const kernels::KernelDef& kernel, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& outputs, uint64_t* cost_key) {
    int64_t elements = 0;
    for (const Tensor& t : outputs) elements += t.numel();
    for (const Tensor& t : inputs) {
      if (t.defined()) elements += t.numel();
    }
    bool small = elements <= kInlineElements;
    if (!small) {
      *cost_key = KernelCosts::Key(kernel, inputs, outputs);
      const int64_t estimate = Costs().EstimateNs(*cost_key);
      if (estimate < 0 || estimate >= kInlineCostNs) return false;
    }
    for (const Tensor& t : inputs) {
      if (!t.defined()) continue;
      const std::shared_ptr<Completion> write = t.pending();
      if (write && (!write->done() || write->error())) return false;
    }
    return GlobalDispatcher().Idle();
  }

  static void RunInline(const kernels::KernelDef& kernel, const ops::OpDef& op, const std::vector<Tensor>& inputs,
                        std::vector<Tensor>& outputs, const Dict& attrs, uint64_t cost_key) {
    try {
      try {
        RunKernelTimed(kernel, op, inputs, outputs, attrs, CurrentStep(), cost_key);
      } catch (const Interrupted& e) {
        throw RuntimeError(StrCat("'", op.name, "' was stopped: the program was interrupted ",
                                  "(KeyboardInterrupt) while it ran", Where(CallOrigin()), "."));
      } catch (...) {
        RethrowWithContext(op, inputs, CallOrigin());
      }
    } catch (...) {
      auto failed = std::make_shared<Completion>();
      failed->Fail(std::current_exception());
      for (const Tensor& t : outputs) t.set_pending(failed);
      for (int i : op.props.writes_inputs) inputs.at(static_cast<size_t>(i)).set_pending(failed);
    }
  }

  // Note [Meta-only inputs] in graph_executor.cc: a queued op keeps only the
  // shape and dtype of an input it never reads, not its bytes.
  static std::vector<Tensor> MetaStandIns(const ops::OpDef& op, const std::vector<Tensor>& inputs) {
    std::vector<Tensor> out = inputs;
    for (int k : op.props.meta_only_inputs) {
      Tensor& t = out.at(static_cast<size_t>(k));
      if (t.defined() && !t.symbolic()) t = Tensor::Symbolic(t.shape(), t.dtype(), t.device());
    }
    return out;
  }

  static DeviceTarget RequireBackend(DeviceTarget device) {
    if (device != DeviceTarget::kCPU) RequireDevice(device, opts::DeviceId().Get());
    return device;
  }
};

EagerExecutor g_eager;
const bool kConsumersDeclared = [] {
  Device();  // subscribes to device_target
  context::Global().DeclareConsumer(opts::DeviceId(), "eager dispatcher and graph compiler (device check)");
  context::Global().DeclareConsumer(opts::PynativeSynchronize(), "eager dispatcher");
  context::Global().DeclareConsumer(opts::PynativeQueueDepth(), "eager dispatcher (backpressure)");
  return true;
}();
const bool kInstalled = (ops::SetDefaultExecutor(&g_eager), true);

// A full memory pool waits for the queued kernels (whose tensors may then be
// freed) before refusing; never on the dispatcher, which runs them.
void WaitForQueuedKernels() {
  if (!t_on_dispatcher) GlobalDispatcher().WaitAll();
}
const bool kPressureHookInstalled = (memory::SetPressureHook(&WaitForQueuedKernels), true);

}  // namespace

void SetOriginHook(OriginFn hook) { g_origin_hook = hook; }
void SetStackHook(OriginFn hook) { g_stack_hook = hook; }

std::string CallOrigin(bool whole_stack) {
  OriginFn hook = whole_stack && g_stack_hook != nullptr ? g_stack_hook : g_origin_hook;
  return hook != nullptr ? hook() : std::string();
}

void Synchronize() { GlobalDispatcher().WaitAll(); }

void DrainForFork() { GlobalDispatcher().Drain(); }

void ResetDispatcherInForkChild() {
  // Drained before the fork: nothing queued is lost. The old one is leaked.
  g_dispatcher.store(new Dispatcher(), std::memory_order_release);
}

DeviceTarget CurrentDevice() { return Device().device(); }

bool HostShortcutAllowed(bool write) {
  return ops::CallsUnobserved() && CurrentDevice() == DeviceTarget::kCPU && (!write || GlobalDispatcher().Idle());
}

}  // namespace msrt::runtime
