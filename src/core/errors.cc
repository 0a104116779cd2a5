#include "msrt/core/errors.h"

namespace msrt {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kType: return "TypeError";
    case ErrorKind::kValue: return "ValueError";
    case ErrorKind::kRuntime: return "RuntimeError";
    case ErrorKind::kKey: return "KeyError";
    case ErrorKind::kMemory: return "MemoryError";
    case ErrorKind::kOS: return "OSError";
    case ErrorKind::kIndex: return "IndexError";
    case ErrorKind::kNotImplemented: return "NotImplementedError";
    case ErrorKind::kInternal: return "RuntimeError";
    case ErrorKind::kGraphCapture: return "GraphCaptureError";
    case ErrorKind::kInterrupted: return "KeyboardInterrupt";
  }
  return "RuntimeError";
}

void ThrowError(ErrorKind kind, std::string message) {
  switch (kind) {
    case ErrorKind::kType: throw TypeError(std::move(message));
    case ErrorKind::kValue: throw ValueError(std::move(message));
    case ErrorKind::kRuntime: throw RuntimeError(std::move(message));
    case ErrorKind::kKey: throw KeyError(std::move(message));
    case ErrorKind::kMemory: throw MemoryError(std::move(message));
    case ErrorKind::kOS: throw OSError(std::move(message));
    case ErrorKind::kIndex: throw IndexError(std::move(message));
    case ErrorKind::kNotImplemented: throw NotImplementedError(std::move(message));
    case ErrorKind::kInternal: throw InternalError(std::move(message));
    case ErrorKind::kGraphCapture: throw GraphCaptureError(std::move(message));
    case ErrorKind::kInterrupted: throw Interrupted(std::move(message));
  }
  throw RuntimeError(std::move(message));
}

}  // namespace msrt
