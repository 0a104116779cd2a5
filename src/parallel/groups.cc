#include "parallel/groups.h"

#include <map>
#include <mutex>
#include <utility>

#include "msrt/core/errors.h"

namespace msrt::parallel {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<Communicator>> groups;
};

Registry& Groups() {
  static auto* registry = new Registry();  // never destroyed: kernels may run during exit
  return *registry;
}

}  // namespace

void RegisterGroup(const std::string& name, std::shared_ptr<Communicator> comm) {
  MSRT_CHECK_VALUE(comm != nullptr, "RegisterGroup: group '", name, "' needs a communicator, got none");
  Registry& r = Groups();
  std::lock_guard<std::mutex> lock(r.mutex);
  MSRT_CHECK_VALUE(!r.groups.contains(name), "the communication group '", name, "' already exists");
  r.groups.emplace(name, std::move(comm));
}

std::shared_ptr<Communicator> GetGroup(const std::string& name) {
  Registry& r = Groups();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.groups.find(name);
  MSRT_CHECK(it != r.groups.end(), "the communication group '", name,
             "' does not exist; call msrt.communication.init() first (and create_group for a sub-group)");
  return it->second;
}

bool HasGroup(const std::string& name) {
  Registry& r = Groups();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.groups.contains(name);
}

void UnregisterGroup(const std::string& name) {
  Registry& r = Groups();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.groups.erase(name);
}

void ClearGroups() {
  Registry& r = Groups();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.groups.clear();
}

}  // namespace msrt::parallel
