// The peer a context benchmark compares against.
#pragma once

#include <string>

namespace msrt::bench {

/// Name of the peer ("" when none was built in).
std::string PeerName();
/// Reads one global runtime flag of the peer; returns it.
bool PeerGet();
/// Sets that flag.
void PeerSet(bool value);

}  // namespace msrt::bench
