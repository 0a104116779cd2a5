#include "ops/views.h"

#include <algorithm>
#include <string>
#include <vector>

namespace msrt::ops {
namespace {

// Names, as registration order between files is not known; a handful of ops.
std::vector<std::string>& ViewOps() {
  static auto* names = new std::vector<std::string>();
  return *names;
}

}  // namespace

bool RegisterViewOp(std::string_view name) {
  ViewOps().emplace_back(name);
  return true;
}

bool IsViewOp(const OpDef& op) {
  const std::vector<std::string>& names = ViewOps();
  return std::find(names.begin(), names.end(), op.name) != names.end();
}

}  // namespace msrt::ops
