// A list of observers that the running side reads without a lock: adding
// or removing one copies the list (rare), a notification takes a snapshot
// (one relaxed load when the list is empty).
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace msrt {

template <typename Observer>
class ObserverList {
 public:
  using Snapshot = std::shared_ptr<const std::vector<Observer*>>;

  /// Adds `observer` once; it is called after the ones already there.
  void Add(Observer* observer) {
    Edit([observer](std::vector<Observer*>& v) {
      if (std::find(v.begin(), v.end(), observer) == v.end()) v.push_back(observer);
    });
  }
  void Remove(Observer* observer) {
    Edit([observer](std::vector<Observer*>& v) { v.erase(std::remove(v.begin(), v.end(), observer), v.end()); });
  }
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }
  Snapshot snapshot() const { return std::atomic_load(&current_); }

 private:
  template <typename Fn>
  void Edit(Fn&& edit) {
    std::lock_guard lock(mutex_);
    auto next = std::make_shared<std::vector<Observer*>>(*std::atomic_load(&current_));
    edit(*next);
    count_.store(next->size(), std::memory_order_relaxed);
    std::atomic_store(&current_, Snapshot(std::move(next)));
  }

  std::mutex mutex_;
  Snapshot current_ = std::make_shared<std::vector<Observer*>>();
  std::atomic<size_t> count_{0};
};

}  // namespace msrt
