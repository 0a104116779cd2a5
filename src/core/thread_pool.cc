#include "core/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "msrt/core/device.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"

namespace msrt {
namespace detail {
thread_local Cancellable* t_cancellable = nullptr;
}  // namespace detail

namespace {

thread_local bool t_inside_pool = false;

class Pool {
 public:
  Pool() = default;

  // The runtime pushes runtime_num_threads and inter_op_parallel_num here
  // (Note [Thread pool settings] in runtime/threads.cc).
  ThreadPlan Configure(int64_t runtime_num_threads, int64_t inter_op_parallel_num) {
    ThreadPlan plan = PlanThreads(runtime_num_threads, inter_op_parallel_num, HardwareConcurrency());
    {
      std::lock_guard lock(plan_mutex_);
      plan_ = plan;
    }
    kernel_threads_.store(plan.kernel, std::memory_order_relaxed);
    return plan;
  }
  void SetDeterministic(bool on) { deterministic_.store(on, std::memory_order_relaxed); }

  ThreadPlan plan() const {
    std::lock_guard lock(plan_mutex_);
    return plan_;
  }
  int threads() const { return kernel_threads_.load(std::memory_order_relaxed) + 1; }
  int workers() const { return started_workers_.load(); }
  bool deterministic() const { return deterministic_.load(std::memory_order_relaxed); }

  void Run(int64_t n, int64_t grain, detail::RangeFn fn, void* context) {
    std::unique_lock job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock() || t_inside_pool) {  // busy or nested: run here
      CancellationPoint();
      fn(context, 0, n);
      return;
    }
    Resize(kernel_threads_.load(std::memory_order_relaxed));
    Split split = SplitWork(n, grain, static_cast<int>(workers_.size()) + 1);
    if (split.chunks <= 1) {
      CancellationPoint();
      fn(context, 0, n);
      return;
    }
    {
      std::lock_guard lock(mutex_);
      fn_ = fn;
      context_ = context;
      cancellable_ = detail::t_cancellable;
      error_ = nullptr;
      n_ = n;
      chunk_size_ = split.chunk_size;
      chunks_ = split.chunks;
      next_.store(0);
      remaining_.store(split.chunks);
      ++generation_;
    }
    wake_.notify_all();
    t_inside_pool = true;
    Work();
    t_inside_pool = false;
    // Wait for the chunks and for every worker that joined this job to leave
    // it, so none can touch the next job's state.
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return remaining_.load() == 0 && active_ == 0; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  ~Pool() { Resize(0); }

  // The parent's workers are gone: their handles are kept, never joined, and
  // the locks and condition variables made anew (a vanished waiter may have
  // left them in any state).
  void ResetInForkChild() {
    new (&job_mutex_) std::mutex();
    new (&mutex_) std::mutex();
    new (&wake_) std::condition_variable();
    new (&done_) std::condition_variable();
    new std::vector<std::thread>(std::move(workers_));  // leaked on purpose
    workers_.clear();
    started_workers_.store(0);
    stop_index_ = 1 << 30;
    active_ = 0;
    error_ = nullptr;
    fn_ = nullptr;
    context_ = nullptr;
    cancellable_ = nullptr;
    next_.store(0);
    remaining_.store(0);
  }

 private:
  void Work() {
    Cancellable* saved = SetThreadCancellable(cancellable_);
    for (;;) {
      int64_t chunk = next_.fetch_add(1);
      if (chunk >= chunks_) break;
      int64_t begin = chunk * chunk_size_;
      int64_t end = std::min(n_, begin + chunk_size_);
      try {
        CancellationPoint();
        fn_(context_, begin, end);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        // Skip the chunks nobody has started; count them as done.
        int64_t taken = next_.exchange(chunks_);
        if (taken < chunks_) remaining_.fetch_sub(chunks_ - taken);
      }
      if (remaining_.fetch_sub(1) == 1) {
        std::lock_guard lock(mutex_);
        done_.notify_all();
      }
    }
    SetThreadCancellable(saved);
  }

  // `seen`: the job generation when the worker was created, so a worker
  // that starts running late still joins the job that follows its creation.
  void WorkerLoop(int index, uint64_t seen) {
    t_inside_pool = true;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen || stop_index_ <= index; });
        if (stop_index_ <= index) return;
        seen = generation_;
        ++active_;
      }
      Work();
      std::lock_guard lock(mutex_);
      if (--active_ == 0) done_.notify_all();
    }
  }

  // Called with job_mutex_ held (or at exit): no job is running.
  void Resize(int workers) {
    workers = std::max(workers, 0);
    if (static_cast<int>(workers_.size()) == workers) return;
    if (static_cast<int>(workers_.size()) > workers) {
      {
        std::lock_guard lock(mutex_);
        stop_index_ = workers;
      }
      wake_.notify_all();
      for (size_t i = workers; i < workers_.size(); ++i) workers_[i].join();
      workers_.resize(workers);
    }
    uint64_t generation;
    {
      std::lock_guard lock(mutex_);
      stop_index_ = 1 << 30;
      generation = generation_;
    }
    while (static_cast<int>(workers_.size()) < workers) {
      int index = static_cast<int>(workers_.size());
      workers_.emplace_back([this, index, generation] { WorkerLoop(index, generation); });
      pthread_setname_np(workers_.back().native_handle(), "msrt-kernel");  // shown by ps, top and /proc
    }
    started_workers_.store(workers);
    MSRT_LOG(Info) << "CPU thread pool: " << workers << " workers";
  }

  mutable std::mutex plan_mutex_;
  ThreadPlan plan_;
  std::atomic<int> kernel_threads_{1};
  std::atomic<bool> deterministic_{false};
  std::atomic<int> started_workers_{0};
  std::mutex job_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> workers_;
  int stop_index_ = 1 << 30;
  uint64_t generation_ = 0;
  int active_ = 0;  // workers inside the current job (guarded by mutex_)
  detail::RangeFn fn_ = nullptr;
  void* context_ = nullptr;
  Cancellable* cancellable_ = nullptr;
  std::exception_ptr error_;  // the first chunk's error (guarded by mutex_)
  int64_t n_ = 0;
  int64_t chunk_size_ = 0;
  int64_t chunks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> remaining_{0};
};

Pool& GlobalPool() {
  static Pool* pool = new Pool();  // never destroyed: workers may be parked at exit
  return *pool;
}

}  // namespace

ThreadPlan PlanThreads(int64_t runtime_num_threads, int64_t inter_op_parallel_num, int hardware) {
  ThreadPlan plan;
  plan.hardware = std::max(hardware, 1);
  plan.runtime_threads = runtime_num_threads <= 0
                             ? plan.hardware
                             : static_cast<int>(std::min<int64_t>(runtime_num_threads, plan.hardware));
  plan.inter_op = static_cast<int>(std::clamp<int64_t>(inter_op_parallel_num, 0, plan.hardware));
  if (plan.inter_op == 0) {
    plan.scheduler = std::max(static_cast<int>(std::floor(plan.runtime_threads * 0.18)), 1);
    plan.total = plan.runtime_threads > plan.scheduler ? plan.runtime_threads : plan.scheduler + 1;
  } else {
    plan.scheduler = plan.inter_op;
    plan.total = plan.runtime_threads + plan.inter_op;
  }
  plan.kernel = plan.total - plan.scheduler;
  plan.oversubscribed = plan.total > plan.hardware;
  return plan;
}

ThreadPlan CurrentThreadPlan() { return GlobalPool().plan(); }

ThreadPlan ConfigureThreadPool(int64_t runtime_num_threads, int64_t inter_op_parallel_num) {
  return GlobalPool().Configure(runtime_num_threads, inter_op_parallel_num);
}

void SetDeterministicKernels(bool on) { GlobalPool().SetDeterministic(on); }

void ResetThreadPoolInForkChild() { GlobalPool().ResetInForkChild(); }

Split SplitWork(int64_t n, int64_t grain, int threads) {
  grain = std::max<int64_t>(grain, 1);
  int64_t max_chunks = std::max<int64_t>(1, n / grain);
  int64_t chunks = std::min<int64_t>(max_chunks, threads);
  int64_t chunk_size = (n + chunks - 1) / chunks;
  chunks = (n + chunk_size - 1) / chunk_size;
  return Split{chunks, chunk_size};
}

int IntraOpThreads() { return GlobalPool().threads(); }
int KernelPoolWorkers() { return GlobalPool().workers(); }
bool DeterministicKernels() { return GlobalPool().deterministic(); }

Cancellable* SetThreadCancellable(Cancellable* c) { return std::exchange(detail::t_cancellable, c); }
Cancellable* ThreadCancellable() { return detail::t_cancellable; }

namespace detail {
void ParallelForImpl(int64_t n, int64_t grain, RangeFn fn, void* context) { GlobalPool().Run(n, grain, fn, context); }
}  // namespace detail

}  // namespace msrt
