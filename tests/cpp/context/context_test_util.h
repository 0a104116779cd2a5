// Helpers shared by the context engine tests: a warning recorder installed
// as the process's WarningSink, and scoped environment variables.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"
#include "msrt/core/value.h"

namespace msrt::context::testing {

struct RecordedWarning {
  WarningKind kind;
  std::string message;
};

/// Installs a WarningSink that records every warning (from any thread) for
/// as long as it lives; restores the previous sink when destroyed.
class WarningRecorder {
 public:
  WarningRecorder() {
    Clear();
    previous_ = SetWarningSink(&Record);
  }
  ~WarningRecorder() { SetWarningSink(previous_); }
  WarningRecorder(const WarningRecorder&) = delete;
  WarningRecorder& operator=(const WarningRecorder&) = delete;

  /// Everything recorded so far; clears the record.
  std::vector<RecordedWarning> Take() {
    std::lock_guard lock(Mutex());
    std::vector<RecordedWarning> out;
    out.swap(Log());
    return out;
  }
  void Clear() { Take(); }
  size_t Count() {
    std::lock_guard lock(Mutex());
    return Log().size();
  }

 private:
  static std::mutex& Mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static std::vector<RecordedWarning>& Log() {
    static std::vector<RecordedWarning> log;
    return log;
  }
  static void Record(WarningKind kind, const std::string& message) {
    std::lock_guard lock(Mutex());
    Log().push_back({kind, message});
  }
  WarningSink previous_ = nullptr;
};

/// Sets (or, with nullopt, unsets) an environment variable for a scope and
/// restores what was there before.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = std::string(old);
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// Runs `body`, expecting it to throw `E`; returns the message.
template <typename E, typename F>
std::string MessageOf(F&& body) {
  try {
    body();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

/// Clears the environment variables the context reads, so that a test's
/// results do not depend on the shell that runs it.
class CleanContextEnv {
 public:
  CleanContextEnv()
      : device_id_("DEVICE_ID", std::nullopt),
        save_graphs_("MS_DEV_SAVE_GRAPHS", std::nullopt),
        save_graphs_path_("MS_DEV_SAVE_GRAPHS_PATH", std::nullopt),
        kernel_flags_("MS_DEV_GRAPH_KERNEL_FLAGS", std::nullopt),
        cache_enable_("MS_COMPILER_CACHE_ENABLE", std::nullopt),
        cache_path_("MS_COMPILER_CACHE_PATH", std::nullopt),
        role_("MS_ROLE", std::nullopt),
        worker_num_("MS_WORKER_NUM", std::nullopt),
        server_num_("MS_SERVER_NUM", std::nullopt),
        sched_host_("MS_SCHED_HOST", std::nullopt),
        sched_port_("MS_SCHED_PORT", std::nullopt),
        sched_manage_port_("MS_SCHED_MANAGE_PORT", std::nullopt),
        profile_("MSRT_CONTEXT_PROFILE", std::nullopt) {}

 private:
  ScopedEnv device_id_, save_graphs_, save_graphs_path_, kernel_flags_, cache_enable_, cache_path_, role_, worker_num_,
      server_num_, sched_host_, sched_port_, sched_manage_port_, profile_;
};

/// Base fixture: a clean environment and a warning recorder.
class ContextTest : public ::testing::Test {
 protected:
  CleanContextEnv env_;
  WarningRecorder warnings_;
};

inline bool Contains(const std::string& text, const std::string& token) {
  return text.find(token) != std::string::npos;
}

}  // namespace msrt::context::testing
