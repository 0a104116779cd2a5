// Typed errors for people, and the check macros that raise them.
//
// User mistakes raise an `Error` whose kind maps onto a Python exception
// (TypeError, ValueError, ...). Broken internal invariants use
// MSRT_INTERNAL_ASSERT, which says "this is a bug in msrt".
#pragma once

#include <exception>
#include <sstream>
#include <string>
#include <utility>

namespace msrt {

/// The Python exception type an error becomes.
enum class ErrorKind {
  kType,
  kValue,
  kRuntime,
  kKey,
  kMemory,
  kOS,
  kIndex,
  kNotImplemented,
  kInternal,
  kGraphCapture,  // a Tensor's value was read while a graph was being captured (a RuntimeError)
  kInterrupted,   // the user interrupted a run or a wait (Ctrl-C: KeyboardInterrupt)
};

/// Name of the Python exception for `kind` ("TypeError", ...).
const char* ErrorKindName(ErrorKind kind);

/// Base of every error msrt raises on purpose.
class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  ErrorKind kind() const noexcept { return kind_; }
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorKind kind_;
  std::string message_;
};

#define MSRT_DEFINE_ERROR(Name, Kind)                                       \
  class Name : public Error {                                               \
   public:                                                                  \
    explicit Name(std::string message) : Error(Kind, std::move(message)) {} \
  };
MSRT_DEFINE_ERROR(TypeError, ErrorKind::kType)
MSRT_DEFINE_ERROR(ValueError, ErrorKind::kValue)
MSRT_DEFINE_ERROR(RuntimeError, ErrorKind::kRuntime)
MSRT_DEFINE_ERROR(KeyError, ErrorKind::kKey)
MSRT_DEFINE_ERROR(MemoryError, ErrorKind::kMemory)
MSRT_DEFINE_ERROR(OSError, ErrorKind::kOS)
MSRT_DEFINE_ERROR(IndexError, ErrorKind::kIndex)
MSRT_DEFINE_ERROR(NotImplementedError, ErrorKind::kNotImplemented)
MSRT_DEFINE_ERROR(InternalError, ErrorKind::kInternal)
MSRT_DEFINE_ERROR(GraphCaptureError, ErrorKind::kGraphCapture)
MSRT_DEFINE_ERROR(Interrupted, ErrorKind::kInterrupted)
#undef MSRT_DEFINE_ERROR

/// Concatenates the streamable arguments into one string.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

/// Throws the error class that matches `kind`.
[[noreturn]] void ThrowError(ErrorKind kind, std::string message);

}  // namespace msrt

#define MSRT_CHECK_KIND_(kind, cond, ...)                    \
  do {                                                       \
    if (!(cond)) {                                           \
      ::msrt::ThrowError(kind, ::msrt::StrCat(__VA_ARGS__)); \
    }                                                        \
  } while (0)

/// User-input checks: raise the named Python error with the given message.
#define MSRT_CHECK_TYPE(cond, ...) MSRT_CHECK_KIND_(::msrt::ErrorKind::kType, cond, __VA_ARGS__)
#define MSRT_CHECK_VALUE(cond, ...) MSRT_CHECK_KIND_(::msrt::ErrorKind::kValue, cond, __VA_ARGS__)
#define MSRT_CHECK(cond, ...) MSRT_CHECK_KIND_(::msrt::ErrorKind::kRuntime, cond, __VA_ARGS__)

/// Internal invariant: failing means a bug in msrt, never bad user input.
#define MSRT_INTERNAL_ASSERT(cond, ...)                                                                             \
  do {                                                                                                              \
    if (!(cond)) {                                                                                                  \
      ::msrt::ThrowError(::msrt::ErrorKind::kInternal,                                                              \
                         ::msrt::StrCat("internal error (a bug in msrt) at ", __FILE__, ":", __LINE__, ": ", #cond, \
                                        ". ", ##__VA_ARGS__));                                                      \
    }                                                                                                               \
  } while (0)
