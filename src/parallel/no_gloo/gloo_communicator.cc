// Linked when CMake did not find Gloo (Debian's libgloo-dev).
#include "msrt/core/errors.h"
#include "parallel/communicator.h"

namespace msrt::parallel {

bool BuiltWithGloo() { return false; }

std::unique_ptr<Communicator> CreateGlooCommunicator(std::shared_ptr<StoreClient>, int rank, int size,
                                                     const CommunicatorOptions&) {
  CheckWorld(rank, size);
  ThrowError(ErrorKind::kRuntime,
             "msrt was built without Gloo, so it has no collectives on CPU tensors: install Gloo (Debian's "
             "libgloo-dev, scripts/setup.sh) and rebuild msrt (CMake finds it; MSRT_GLOO=OFF leaves it out)");
}

}  // namespace msrt::parallel
