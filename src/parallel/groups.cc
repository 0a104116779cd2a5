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
  std::string world_name;  // the world's registered name, empty before init
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed: used from exit handlers
  return *registry;
}

// The registered name `name` stands for (world aliases resolve to the world).
std::string Resolve(const Registry& registry, const std::string& name) {
  if (IsWorldGroupName(name) && !registry.world_name.empty()) return registry.world_name;
  return name;
}

std::string KnownNames(const Registry& registry) {
  std::string text;
  for (const auto& [name, comm] : registry.groups) {
    if (!text.empty()) text += ", ";
    text += "'" + name + "'";
  }
  return text;
}

}  // namespace

bool IsWorldGroupName(const std::string& name) {
  return name == kHcclWorldGroup || name == kNcclWorldGroup || name == kMcclWorldGroup;
}

void RegisterGroup(const std::string& name, std::shared_ptr<Communicator> comm) {
  MSRT_CHECK_VALUE(comm != nullptr, "RegisterGroup: the communicator of group '", name, "' is null");
  MSRT_CHECK_VALUE(!name.empty(), "RegisterGroup: the group name must not be empty");
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (IsWorldGroupName(name)) {
    MSRT_CHECK_VALUE(registry.world_name.empty(), "the world group is already registered as '", registry.world_name,
                     "'; call msrt.communication.release() before registering '", name, "'");
  }
  MSRT_CHECK_VALUE(!registry.groups.contains(name), "the communication group '", name,
                   "' already exists; choose another name or destroy_group('", name, "') first");
  registry.groups.emplace(name, std::move(comm));
  if (IsWorldGroupName(name)) registry.world_name = name;
}

std::shared_ptr<Communicator> GetGroup(const std::string& name) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  MSRT_CHECK(!registry.groups.empty(), "the communication group '", name,
             "' does not exist: no communication service is initialized; call msrt.communication.init() first");
  auto it = registry.groups.find(Resolve(registry, name));
  if (it == registry.groups.end()) {
    MSRT_CHECK(!registry.world_name.empty(), "the communication group '", name,
               "' does not exist and the world group is not initialized; call msrt.communication.init() first");
    MSRT_CHECK_VALUE(false, "the communication group '", name, "' does not exist; the groups are ",
                     KnownNames(registry), " (create it with msrt.communication.create_group)");
  }
  return it->second;
}

bool HasGroup(const std::string& name) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.groups.contains(Resolve(registry, name));
}

void UnregisterGroup(const std::string& name) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::string key = Resolve(registry, name);
  auto it = registry.groups.find(key);
  MSRT_CHECK_VALUE(it != registry.groups.end(), "the communication group '", name, "' does not exist");
  registry.groups.erase(it);
  if (key == registry.world_name) registry.world_name.clear();
}

void ClearGroups() {
  Registry& registry = GetRegistry();
  std::map<std::string, std::shared_ptr<Communicator>> dropped;
  {
    std::lock_guard<std::mutex> lock(registry.mutex);
    dropped.swap(registry.groups);
    registry.world_name.clear();
  }
  // The communicators close outside the lock.
}

std::vector<std::string> GroupNames() {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<std::string> names;
  for (const auto& [name, comm] : registry.groups) names.push_back(name);
  return names;
}

}  // namespace msrt::parallel
