// Graph-kernel fusion (see Note [Elementwise fusion] in fusion.cc).
#pragma once

#include <string>

#include "ir/graph.h"

namespace msrt::compiler {

/// Fuses chains of elementwise ops whose kernels on `device` are plain
/// vectorised loops. Appends one line per fused chain to `report` if given.
bool FuseElementwise(ir::Graph& graph, DeviceTarget device, std::string* report = nullptr);

}  // namespace msrt::compiler
