// Linked when CMake did not find Gloo (Debian's libgloo-dev).
#include "msrt/core/errors.h"
#include "parallel/communicator.h"

namespace msrt::parallel {

bool BuiltWithGloo() { return false; }

// The real backend's signature, which keeps the store client (a sink).
std::unique_ptr<Communicator> CreateGlooCommunicator(
    std::shared_ptr<StoreClient> /*store*/,  // NOLINT(performance-unnecessary-value-param)
    int rank, int size, const CommunicatorOptions&) {
  CheckWorld(rank, size);
  ThrowError(ErrorKind::kRuntime,
             "msrt was built without Gloo, so it has no collectives on CPU tensors: install Gloo (Debian's "
             "libgloo-dev, scripts/setup.sh) and rebuild msrt (CMake finds it; MSRT_GLOO=OFF leaves it out)");
}

}  // namespace msrt::parallel
