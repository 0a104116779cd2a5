#include "msrt/core/logging.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string_view>

namespace msrt {
namespace {

LogLevel LevelFromEnvironment() {
  const char* text = std::getenv("GLOG_v");
  if (text == nullptr || text[0] == '\0' || text[1] != '\0' || text[0] < '0' || text[0] > '3') {
    if (text != nullptr && text[0] != '\0') {
      std::fprintf(stderr,
                   "[WARNING] MSRT: GLOG_v='%s' is not one of 0 (debug), 1 (info), "
                   "2 (warning), 3 (error); using 2.\n",
                   text);
    }
    return LogLevel::kWarning;
  }
  return static_cast<LogLevel>(text[0] - '0');
}

std::atomic<int>& LevelSlot() {
  static std::atomic<int> level{static_cast<int>(LevelFromEnvironment())};
  return level;
}

std::atomic<WarningSink> g_sink{nullptr};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARNING";
    case LogLevel::kError: return "ERROR";
  }
  return "?";
}

}  // namespace

LogLevel CurrentLogLevel() { return static_cast<LogLevel>(LevelSlot().load(std::memory_order_relaxed)); }

void SetLogLevel(LogLevel level) { LevelSlot().store(static_cast<int>(level)); }

void LogMessage(LogLevel level, const char* file, int line, const std::string& message) {
  if (level < CurrentLogLevel()) return;
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H:%M:%S", &local);
  std::string where;
  if (file != nullptr) {
    std::string_view path(file);
    auto slash = path.rfind('/');
    if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
    where = " [" + std::string(path) + ":" + std::to_string(line) + "]";
  }
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "[%s] MSRT(%d):%s.%06lld%s %s\n", LevelName(level), static_cast<int>(getpid()), stamp,
               static_cast<long long>(micros), where.c_str(), message.c_str());
}

WarningSink SetWarningSink(WarningSink sink) { return g_sink.exchange(sink); }

void Warn(WarningKind kind, const std::string& message) {
  WarningSink sink = g_sink.load();
  if (sink != nullptr) {
    sink(kind, message);
  } else {
    LogMessage(LogLevel::kWarning, nullptr, 0, message);
  }
}

}  // namespace msrt
