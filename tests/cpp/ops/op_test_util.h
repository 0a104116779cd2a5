// Helpers of the op declaration tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace msrt::ops {

/// The message of the `Error` that `fn` raises (a test failure when none).
template <typename Error>
std::string Message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error raised";
  return "";
}

}  // namespace msrt::ops
