// Logging and warnings.
//
// The log level comes from GLOG_v, as in MindSpore: 0 debug, 1 info,
// 2 warning (default), 3 error. Warnings meant for the user go through
// `Warn`, which a host (the Python binding) may route to its own warning
// system; without a host they are logged.
#pragma once

#include <sstream>
#include <string>

namespace msrt {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

/// The current threshold (from GLOG_v when first asked).
LogLevel CurrentLogLevel();
/// Overrides the threshold for this process.
void SetLogLevel(LogLevel level);
/// Writes one formatted line to stderr if `level` passes the threshold.
void LogMessage(LogLevel level, const char* file, int line, const std::string& message);

/// What a user warning is about; the Python binding maps each onto its own
/// warning class.
enum class WarningKind {
  kGeneral,
  kDeprecated,     // a key or value that still works but is going away
  kNotApplicable,  // a key that does nothing on the current device
};

/// Receives user warnings. May throw (Python's "error" warning filter).
using WarningSink = void (*)(WarningKind kind, const std::string& message);
/// Installs `sink` (nullptr restores logging); returns the previous sink.
WarningSink SetWarningSink(WarningSink sink);
/// Issues a user warning through the installed sink, or logs it.
void Warn(WarningKind kind, const std::string& message);

namespace detail {
class LogLine {
 public:
  LogLine(LogLevel level, const char* file, int line) : level_(level), file_(file), line_(line) {}
  ~LogLine() { LogMessage(level_, file_, line_, stream_.str()); }
  std::ostringstream& stream() { return stream_; }

 private:
  LogLevel level_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
};
}  // namespace detail

}  // namespace msrt

/// MSRT_LOG(WARNING) << "text";
#define MSRT_LOG(severity)                                         \
  if (::msrt::LogLevel::k##severity < ::msrt::CurrentLogLevel()) { \
  } else                                                           \
    ::msrt::detail::LogLine(::msrt::LogLevel::k##severity, __FILE__, __LINE__).stream()
