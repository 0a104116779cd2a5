// A list of observers that the running side reads without a lock: adding
// or removing one copies the list (rare), a notification takes a snapshot
// (one acquire load; one relaxed load when the list is empty).
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
  /// The list as it was at some moment; valid for the life of the process.
  using Snapshot = const std::vector<Observer*>*;

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
  Snapshot snapshot() const { return current_.load(std::memory_order_acquire); }

 private:
  // A reader may still walk a replaced list, so replaced lists are kept (a
  // few pointers per edit; edits are rare: a profiler or tracer starting or
  // stopping).
  template <typename Fn>
  void Edit(Fn&& edit) {
    std::lock_guard lock(mutex_);
    auto next = std::make_unique<std::vector<Observer*>>(*lists_.back());
    edit(*next);
    count_.store(next->size(), std::memory_order_relaxed);
    current_.store(next.get(), std::memory_order_release);
    lists_.push_back(std::move(next));
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<const std::vector<Observer*>>> lists_ = Initial();
  std::atomic<Snapshot> current_{lists_.back().get()};
  std::atomic<size_t> count_{0};

  static std::vector<std::unique_ptr<const std::vector<Observer*>>> Initial() {
    std::vector<std::unique_ptr<const std::vector<Observer*>>> out;
    out.push_back(std::make_unique<const std::vector<Observer*>>());
    return out;
  }
};

}  // namespace msrt
