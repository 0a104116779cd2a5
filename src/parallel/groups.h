// The process-wide registry of named communicators.
//
// msrt.communication.init() registers the world communicator under the name
// GlobalComm.WORLD_COMM_GROUP has for the backend in use ("mccl_world_group"
// on CPU, "nccl_world_group" on GPU); create_group registers sub-groups,
// destroy_group unregisters them, release() clears the registry. Every world
// name of MindSpore ("hccl_world_group", "nccl_world_group",
// "mccl_world_group") resolves to the world, whichever backend registered
// it, so an op whose group defaults to another backend's world name still
// finds it. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "parallel/communicator.h"

namespace msrt::parallel {

/// MindSpore's world group names (mindspore.communication.*_WORLD_COMM_GROUP).
inline constexpr const char* kHcclWorldGroup = "hccl_world_group";
inline constexpr const char* kNcclWorldGroup = "nccl_world_group";
inline constexpr const char* kMcclWorldGroup = "mccl_world_group";
/// A name of the world group; any of the three names above resolves to it.
inline constexpr const char* kWorldGroup = kNcclWorldGroup;

/// Whether `name` is one of MindSpore's world group names.
bool IsWorldGroupName(const std::string& name);

/// Registers `comm` under `name`. ValueError if the name (or, for a world
/// name, the world) is already registered, or `comm` is null.
void RegisterGroup(const std::string& name, std::shared_ptr<Communicator> comm);
/// The communicator registered under `name`. RuntimeError saying to call
/// msrt.communication.init() first when nothing is registered; ValueError
/// naming the known groups for an unknown name after init.
std::shared_ptr<Communicator> GetGroup(const std::string& name);
bool HasGroup(const std::string& name);
/// Removes `name`; ValueError when it is not registered.
void UnregisterGroup(const std::string& name);
/// Removes every group (release()).
void ClearGroups();
/// The registered names, sorted (the world under the name it was given).
std::vector<std::string> GroupNames();

}  // namespace msrt::parallel
