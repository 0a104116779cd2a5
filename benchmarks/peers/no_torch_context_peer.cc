// Linked when libtorch is not installed: no peer column.
#include "context_peer.h"

namespace msrt::bench {

std::string PeerName() { return ""; }
bool PeerGet() { return false; }
void PeerSet(bool) {}

}  // namespace msrt::bench
