// PyTorch's global context (ATen) as the peer: the deterministic-algorithms flag.
#include <ATen/Context.h>

#include "context_peer.h"

namespace msrt::bench {

std::string PeerName() { return "libtorch at::globalContext()"; }
bool PeerGet() { return at::globalContext().deterministicAlgorithms(); }
void PeerSet(bool value) { at::globalContext().setDeterministicAlgorithms(value, /*warn_only=*/false); }

}  // namespace msrt::bench
