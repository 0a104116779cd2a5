// The NCCL communicator on a real device: a one-rank world on the current
// CUDA device (one GPU is enough). Built only with NCCL (tests/cpp/CMakeLists.txt);
// skipped where no CUDA device is visible.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "msrt/core/device.h"
#include "msrt/core/errors.h"
#include "parallel/communicator.h"
#include "parallel/store.h"

namespace msrt::parallel {
namespace {

class NcclDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (VisibleCudaDevices(&why) == 0) GTEST_SKIP() << "no CUDA device: " << why;
    server_ = StoreServer::Listen();
    server_->Start();
    StoreClientOptions options;
    options.port = server_->port();
    CommunicatorOptions comm_options;
    comm_options.timeout = std::chrono::seconds(60);
    comm_ = CreateNcclCommunicator(std::make_shared<StoreClient>(options), 0, 1, comm_options);
  }

  std::unique_ptr<StoreServer> server_;
  std::unique_ptr<Communicator> comm_;
};

// A device buffer holding `values`, freed with the test.
struct DeviceBuffer {
  explicit DeviceBuffer(const std::vector<float>& values) : count(values.size()) {
    EXPECT_EQ(cudaMalloc(&data, values.size() * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::vector<float> Read() const {
    std::vector<float> values(count);
    EXPECT_EQ(cudaMemcpy(values.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return values;
  }
  void* data = nullptr;
  size_t count;
};

TEST_F(NcclDeviceTest, OneRankCollectivesReturnTheirInput) {
  EXPECT_EQ(comm_->backend(), "nccl");
  EXPECT_EQ(comm_->device(), DeviceTarget::kGPU);
  std::vector<float> values(1000);
  std::iota(values.begin(), values.end(), -3.0f);
  DeviceBuffer buffer(values);
  DeviceBuffer output(std::vector<float>(values.size(), 0.0f));
  comm_->AllReduce(buffer.data, buffer.data, values.size(), DType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(buffer.Read(), values);
  comm_->AllReduce(buffer.data, output.data, values.size(), DType::kFloat32, ReduceOp::kMax);
  EXPECT_EQ(output.Read(), values);
  comm_->AllGather(buffer.data, output.data, values.size(), DType::kFloat32);
  EXPECT_EQ(output.Read(), values);
  comm_->ReduceScatter(buffer.data, output.data, values.size(), DType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(output.Read(), values);
  comm_->Broadcast(buffer.data, values.size(), DType::kFloat32, 0);
  EXPECT_EQ(buffer.Read(), values);
  comm_->Barrier();
}

TEST_F(NcclDeviceTest, Int16IsATypeErrorAndCpuTensorsAreRefused) {
  DeviceBuffer buffer(std::vector<float>(4, 1.0f));
  EXPECT_THROW(comm_->AllReduce(buffer.data, buffer.data, 8, DType::kInt16, ReduceOp::kSum), TypeError);
  Tensor cpu = Tensor::Zeros({4}, DType::kFloat32);
  EXPECT_THROW(comm_->AllReduce(cpu, ReduceOp::kSum), ValueError);
  comm_->Barrier();  // still usable: nothing was sent
}

}  // namespace
}  // namespace msrt::parallel
