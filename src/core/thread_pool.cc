#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "msrt/context/context.h"
#include "msrt/core/device.h"
#include "msrt/core/logging.h"

namespace msrt {
namespace {

thread_local bool t_inside_pool = false;

int ThreadsFor(int64_t requested) {
  int hardware = HardwareConcurrency();
  if (requested <= 0) return hardware;
  return static_cast<int>(std::min<int64_t>(requested, hardware));
}

class Pool {
 public:
  Pool() {
    using context::Family;
    desired_ = ThreadsFor(context::Global().Get(Family::kRuntime, "runtime_num_threads").as_int());
    subscription_ = context::Global().Subscribe(
        Family::kRuntime, {"runtime_num_threads"}, "CPU thread pool", [this](const context::Change&) {
          desired_ = ThreadsFor(context::Global().Get(Family::kRuntime, "runtime_num_threads").as_int());
        });
  }

  int threads() const { return desired_.load(); }

  void Run(int64_t n, int64_t grain, detail::RangeFn fn, void* context) {
    std::unique_lock job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock() || t_inside_pool) {  // busy or nested: run here
      fn(context, 0, n);
      return;
    }
    Resize(desired_.load());
    Split split = SplitWork(n, grain, static_cast<int>(workers_.size()) + 1);
    if (split.chunks <= 1) {
      fn(context, 0, n);
      return;
    }
    {
      std::lock_guard lock(mutex_);
      fn_ = fn;
      context_ = context;
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
  }

  ~Pool() { Resize(1); }

 private:
  void Work() {
    for (;;) {
      int64_t chunk = next_.fetch_add(1);
      if (chunk >= chunks_) return;
      int64_t begin = chunk * chunk_size_;
      int64_t end = std::min(n_, begin + chunk_size_);
      fn_(context_, begin, end);
      if (remaining_.fetch_sub(1) == 1) {
        std::lock_guard lock(mutex_);
        done_.notify_all();
      }
    }
  }

  void WorkerLoop(int index) {
    t_inside_pool = true;
    uint64_t seen;
    {
      std::lock_guard lock(mutex_);
      seen = generation_;
    }
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

  // Called with job_mutex_ held: no job is running.
  void Resize(int threads) {
    int workers = std::max(threads - 1, 0);
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
    {
      std::lock_guard lock(mutex_);
      stop_index_ = 1 << 30;
    }
    while (static_cast<int>(workers_.size()) < workers) {
      int index = static_cast<int>(workers_.size());
      workers_.emplace_back([this, index] { WorkerLoop(index); });
    }
    MSRT_LOG(Info) << "CPU thread pool: " << workers + 1 << " threads";
  }

  std::atomic<int> desired_{1};
  context::Subscription subscription_;
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
  int64_t n_ = 0;
  int64_t chunk_size_ = 0;
  int64_t chunks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> remaining_{0};
};

// Declared at load so explain() and the docs name the pool before its first use.
const bool kConsumerDeclared = [] {
  context::Global().DeclareConsumer(context::Family::kRuntime, "runtime_num_threads", "CPU thread pool");
  return true;
}();

Pool& GlobalPool() {
  static Pool* pool = new Pool();  // never destroyed: workers may be parked at exit
  return *pool;
}

}  // namespace

Split SplitWork(int64_t n, int64_t grain, int threads) {
  grain = std::max<int64_t>(grain, 1);
  int64_t max_chunks = std::max<int64_t>(1, n / grain);
  int64_t chunks = std::min<int64_t>(max_chunks, threads);
  int64_t chunk_size = (n + chunks - 1) / chunks;
  chunks = (n + chunk_size - 1) / chunk_size;
  return Split{chunks, chunk_size};
}

int IntraOpThreads() { return GlobalPool().threads(); }

namespace detail {
void ParallelForImpl(int64_t n, int64_t grain, RangeFn fn, void* context) { GlobalPool().Run(n, grain, fn, context); }
}  // namespace detail

}  // namespace msrt
