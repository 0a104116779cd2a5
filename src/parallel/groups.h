// The named communication groups of this process.
//
// Collective ops name their group by an attribute (`group`); their kernels
// look the communicator up here. `msrt.communication.init()` registers the
// world communicator under kWorldGroup, and create_group registers the
// sub-groups it makes (Communicator::NewGroup).
#pragma once

#include <memory>
#include <string>

#include "parallel/communicator.h"

namespace msrt::parallel {

/// Registers `comm` under `name`; ValueError if the name exists.
void RegisterGroup(const std::string& name, std::shared_ptr<Communicator> comm);
/// The communicator of `name`; RuntimeError "... call msrt.communication.init() first" when unknown.
std::shared_ptr<Communicator> GetGroup(const std::string& name);
bool HasGroup(const std::string& name);
/// Forgets `name` (nothing happens when it is unknown).
void UnregisterGroup(const std::string& name);
/// Forgets every group.
void ClearGroups();

/// The world group's name (MindSpore's GlobalComm.WORLD_COMM_GROUP on GPU).
inline constexpr const char* kWorldGroup = "nccl_world_group";

}  // namespace msrt::parallel
