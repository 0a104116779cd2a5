// Communicator over NCCL (CUDA device memory), compiled when CMake finds the
// CUDA toolkit with NCCL.
//
// Rank 0 of a group makes NCCL's unique id and publishes it through the
// rendezvous store under the group's key (ShareFromRoot); every member then
// calls ncclCommInitRank. Each call is enqueued on the communicator's own
// stream and waited for, up to the timeout: a call that does not finish in
// time aborts the NCCL communicator (ncclCommAbort) and leaves this one
// unusable. Sub-groups get their own unique id the same way, so only their
// members take part (no ncclCommSplit, which needs every parent rank).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "msrt/core/device.h"
#include "msrt/core/errors.h"
#include "parallel/communicator.h"
#include "parallel/store.h"

namespace msrt::parallel {

namespace {

std::string NcclText(ncclResult_t status) { return StrCat(ncclGetErrorString(status), " (NCCL error ", status, ")"); }

void CheckCuda(cudaError_t status, std::string_view what) {
  if (status != cudaSuccess) {
    cudaGetLastError();
    ThrowError(ErrorKind::kRuntime,
               StrCat(what, " failed: ", cudaGetErrorName(status), ": ", cudaGetErrorString(status)));
  }
}

// NCCL's element type for `dtype`; TypeError where it has none.
ncclDataType_t NcclType(DType dtype, std::string_view call) {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8: return ncclUint8;
    case DType::kInt8: return ncclInt8;
    case DType::kInt32: return ncclInt32;
    case DType::kInt64: return ncclInt64;
    case DType::kFloat16: return ncclFloat16;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kFloat32: return ncclFloat32;
    case DType::kFloat64: return ncclFloat64;
    case DType::kUInt32: return ncclUint32;
    case DType::kUInt64: return ncclUint64;
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kComplex64:
    case DType::kComplex128: break;
  }
  ThrowError(ErrorKind::kType,
             StrCat("For '", call, "', NCCL has no ", DTypeName(dtype), " type; supported: Bool, ",
                    "UInt8, Int8, Int32, Int64, UInt32, UInt64, Float16, BFloat16, Float32, Float64"));
}

// bool is one byte of 0 or 1: sum and max are or (max), prod and min are and (min).
ncclRedOp_t NcclOp(ReduceOp op, DType dtype) {
  if (dtype == DType::kBool) return op == ReduceOp::kSum || op == ReduceOp::kMax ? ncclMax : ncclMin;
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kProd: return ncclProd;
  }
  return ncclSum;
}

ncclUniqueId ToUniqueId(const Bytes& bytes) {
  ncclUniqueId id;
  MSRT_CHECK(bytes.size() == sizeof(id.internal), "the NCCL unique id from the store has ", bytes.size(),
             " bytes; NCCL's has ", sizeof(id.internal));
  std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
  return id;
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(int rank, std::vector<int> world_ranks, std::string key, CommunicatorOptions options,
                   std::shared_ptr<StoreClient> store)
      : Communicator(rank, std::move(world_ranks), options.timeout, std::move(key)),
        options_(std::move(options)),
        store_(std::move(store)) {
    std::string why;
    MSRT_CHECK(VisibleCudaDevices(&why) > 0, Describe("connecting"), ": NCCL needs a CUDA device, but ", why);
    CheckCuda(cudaGetDevice(&device_), "cudaGetDevice");
    Bytes id = ShareFromRoot(*store_, this->key() + "/nccl-id", this->rank(), MakeNcclUniqueId, timeout());
    CheckCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ncclResult_t status = ncclCommInitRank(&comm_, size(), ToUniqueId(id), this->rank());
    if (status != ncclSuccess) {
      cudaStreamDestroy(stream_);
      ThrowError(ErrorKind::kRuntime, StrCat(Describe("connecting"), " failed: ", NcclText(status)));
    }
  }

  ~NcclCommunicator() override {
    if (comm_ != nullptr && failure_) {
      ncclCommAbort(comm_);
    } else if (comm_ != nullptr) {
      ncclCommDestroy(comm_);
    }
    if (barrier_ != nullptr) cudaFree(barrier_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  std::string_view backend() const override { return "nccl"; }
  DeviceTarget device() const override { return DeviceTarget::kGPU; }

 protected:
  void RunAllReduce(const void* input, void* output, size_t count, DType dtype, ReduceOp op) override {
    Run("AllReduce", [&] {
      return ncclAllReduce(input, output, count, NcclType(dtype, "AllReduce"), NcclOp(op, dtype), comm_, stream_);
    });
  }

  void RunAllGather(const void* input, void* output, size_t count, DType dtype) override {
    Run("AllGather", [&] { return ncclAllGather(input, output, count, NcclType(dtype, "AllGather"), comm_, stream_); });
  }

  void RunReduceScatter(const void* input, void* output, size_t count, DType dtype, ReduceOp op) override {
    Run("ReduceScatter", [&] {
      return ncclReduceScatter(input, output, count, NcclType(dtype, "ReduceScatter"), NcclOp(op, dtype), comm_,
                               stream_);
    });
  }

  void RunBroadcast(void* buffer, size_t count, DType dtype, int root) override {
    Run("Broadcast",
        [&] { return ncclBroadcast(buffer, buffer, count, NcclType(dtype, "Broadcast"), root, comm_, stream_); });
  }

  void RunAllToAll(const void* input, void* output, size_t count, DType dtype) override {
    Run("AllToAll", [&] {
      ncclDataType_t type = NcclType(dtype, "AllToAll");
      size_t chunk = count * ItemSize(dtype);
      ncclResult_t status = ncclGroupStart();
      for (int peer = 0; peer < size() && status == ncclSuccess; ++peer) {
        status = ncclSend(static_cast<const uint8_t*>(input) + static_cast<size_t>(peer) * chunk, count, type, peer,
                          comm_, stream_);
        if (status == ncclSuccess) {
          status = ncclRecv(static_cast<uint8_t*>(output) + static_cast<size_t>(peer) * chunk, count, type, peer, comm_,
                            stream_);
        }
      }
      ncclResult_t end = ncclGroupEnd();
      return status != ncclSuccess ? status : end;
    });
  }

  // NCCL matches point-to-point calls by order, not by tag.
  void RunSend(const void* data, size_t count, DType dtype, int dst, uint32_t) override {
    Run("Send", [&] { return ncclSend(data, count, NcclType(dtype, "Send"), dst, comm_, stream_); });
  }

  void RunRecv(void* data, size_t count, DType dtype, int src, uint32_t) override {
    Run("Receive", [&] { return ncclRecv(data, count, NcclType(dtype, "Receive"), src, comm_, stream_); });
  }

  void RunBarrier() override {
    if (barrier_ == nullptr) CheckCuda(cudaMalloc(&barrier_, sizeof(int32_t)), "cudaMalloc");
    Run("Barrier", [&] { return ncclAllReduce(barrier_, barrier_, 1, ncclInt32, ncclSum, comm_, stream_); });
  }

  std::unique_ptr<Communicator> RunNewGroup(const std::vector<int>& world_ranks, const std::string& key) override {
    MSRT_CHECK(!failure_, Describe("NewGroup"),
               ": the communicator is unusable after an earlier failure: ", failure_.value_or(""));
    int own = this->world_ranks()[static_cast<size_t>(rank())];
    int group_rank = static_cast<int>(std::find(world_ranks.begin(), world_ranks.end(), own) - world_ranks.begin());
    return std::make_unique<NcclCommunicator>(group_rank, world_ranks, key, options_, store_);
  }

 private:
  // Enqueues a call and waits for it, up to the timeout.
  template <typename Enqueue>
  void Run(std::string_view call, Enqueue&& enqueue) {
    MSRT_CHECK(!failure_, Describe(call),
               ": the communicator is unusable after an earlier failure: ", failure_.value_or(""));
    CheckCuda(cudaSetDevice(device_), "cudaSetDevice");
    ncclResult_t status = enqueue();
    if (status != ncclSuccess) {
      failure_ = StrCat(Describe(call), " failed: ", NcclText(status), ": ", ncclGetLastError(comm_));
      ThrowError(ErrorKind::kRuntime, *failure_);
    }
    auto deadline = std::chrono::steady_clock::now() + timeout();
    for (;;) {
      cudaError_t done = cudaStreamQuery(stream_);
      if (done == cudaSuccess) return;
      if (done != cudaErrorNotReady) {
        failure_ = StrCat(Describe(call), " failed on the device: ", cudaGetErrorString(done));
        ThrowError(ErrorKind::kRuntime, *failure_);
      }
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess || std::chrono::steady_clock::now() > deadline) {
        failure_ = async != ncclSuccess ? StrCat(Describe(call), " failed: ", NcclText(async))
                                        : StrCat(Describe(call), " timed out after ", timeout().count(), " ms");
        ncclCommAbort(comm_);
        comm_ = nullptr;
        ThrowError(ErrorKind::kRuntime, *failure_);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  CommunicatorOptions options_;
  std::shared_ptr<StoreClient> store_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  void* barrier_ = nullptr;
  std::optional<std::string> failure_;
};

}  // namespace

bool BuiltWithNccl() { return true; }

std::vector<uint8_t> MakeNcclUniqueId() {
  ncclUniqueId id;
  ncclResult_t status = ncclGetUniqueId(&id);
  MSRT_CHECK(status == ncclSuccess, "ncclGetUniqueId failed: ", NcclText(status));
  return {reinterpret_cast<const uint8_t*>(id.internal), reinterpret_cast<const uint8_t*>(id.internal) + sizeof(id)};
}

std::unique_ptr<Communicator> CreateNcclCommunicator(std::shared_ptr<StoreClient> store, int rank, int size,
                                                     const CommunicatorOptions& options) {
  CheckWorld(rank, size);
  MSRT_CHECK_VALUE(store != nullptr, "CreateNcclCommunicator needs a store client, got none");
  std::vector<int> world(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) world[static_cast<size_t>(r)] = r;
  return std::make_unique<NcclCommunicator>(rank, std::move(world), options.store_prefix + "/world", options,
                                            std::move(store));
}

}  // namespace msrt::parallel
