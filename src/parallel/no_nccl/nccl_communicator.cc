// Linked when CMake did not find the CUDA toolkit with NCCL.
#include "msrt/core/errors.h"
#include "parallel/communicator.h"

namespace msrt::parallel {

namespace {
constexpr const char* kWhy =
    "msrt was built without NCCL, so it has no collectives on GPU tensors: build msrt with the CUDA toolkit and "
    "NCCL present (CMake finds them; MSRT_CUDA=OFF or MSRT_NCCL=OFF leaves them out)";
}

bool BuiltWithNccl() { return false; }

std::vector<uint8_t> MakeNcclUniqueId() { ThrowError(ErrorKind::kRuntime, kWhy); }

// The real backend's signature, which keeps the store client (a sink).
std::unique_ptr<Communicator> CreateNcclCommunicator(
    std::shared_ptr<StoreClient> /*store*/,  // NOLINT(performance-unnecessary-value-param)
    int rank, int size, const CommunicatorOptions&) {
  CheckWorld(rank, size);
  ThrowError(ErrorKind::kRuntime, kWhy);
}

}  // namespace msrt::parallel
