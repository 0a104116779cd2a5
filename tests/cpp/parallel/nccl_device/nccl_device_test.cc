// The NCCL communicator on a real device: a one-rank world on the current
// CUDA device (one GPU is enough). Built only with NCCL (tests/cpp/CMakeLists.txt);
// skipped where no CUDA device is visible.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <string>
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

// Device bytes, filled from the host; freed with the test.
struct DeviceBytes {
  explicit DeviceBytes(const std::vector<uint8_t>& bytes) : size(bytes.size()) {
    EXPECT_EQ(cudaMalloc(&data, bytes.size()), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBytes() { cudaFree(data); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  std::vector<uint8_t> Read() const {
    std::vector<uint8_t> bytes(size);
    EXPECT_EQ(cudaMemcpy(bytes.data(), data, size, cudaMemcpyDeviceToHost), cudaSuccess);
    return bytes;
  }
  void* data = nullptr;
  size_t size;
};

// In a world of one every collective copies its input: the output, first
// filled with a sentinel, must then hold the input's bytes exactly, which
// checks that each dtype reaches NCCL with the element size it has in msrt.
TEST_F(NcclDeviceTest, EveryDtypeAndReduceOpMovesExactlyItsBytes) {
  const DType dtypes[] = {DType::kBool,     DType::kUInt8,   DType::kInt8,   DType::kInt32,
                          DType::kInt64,    DType::kUInt32,  DType::kUInt64, DType::kFloat16,
                          DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd};
  constexpr size_t kCount = 257;
  for (DType dtype : dtypes) {
    SCOPED_TRACE(std::string(DTypeName(dtype)));
    size_t bytes = kCount * ItemSize(dtype);
    std::vector<uint8_t> input(bytes);
    for (size_t i = 0; i < bytes; ++i) input[i] = static_cast<uint8_t>((i * 37 + 11) % 251);
    // bool holds 0 or 1 only; every other pattern is some valid value.
    if (dtype == DType::kBool) {
      for (auto& b : input) b &= 1;
    }
    const std::vector<uint8_t> sentinel(bytes, 0xAB);
    DeviceBytes in(input);
    for (ReduceOp op : ops) {
      DeviceBytes out(sentinel);
      comm_->AllReduce(in.data, out.data, kCount, dtype, op);
      EXPECT_EQ(out.Read(), input) << "AllReduce op " << static_cast<int>(op);
      DeviceBytes scattered(sentinel);
      comm_->ReduceScatter(in.data, scattered.data, kCount, dtype, op);
      EXPECT_EQ(scattered.Read(), input) << "ReduceScatter op " << static_cast<int>(op);
    }
    DeviceBytes gathered(sentinel);
    comm_->AllGather(in.data, gathered.data, kCount, dtype);
    EXPECT_EQ(gathered.Read(), input) << "AllGather";
    DeviceBytes exchanged(sentinel);
    comm_->AllToAll(in.data, exchanged.data, kCount, dtype);
    EXPECT_EQ(exchanged.Read(), input) << "AllToAll";
    DeviceBytes broadcast(input);
    comm_->Broadcast(broadcast.data, kCount, dtype, 0);
    EXPECT_EQ(broadcast.Read(), input) << "Broadcast";
  }
  comm_->Barrier();
}

TEST_F(NcclDeviceTest, ASubGroupGetsACommunicatorOfItsOwn) {
  std::unique_ptr<Communicator> group = comm_->NewGroup({0});
  EXPECT_EQ(group->backend(), "nccl");
  EXPECT_EQ(group->size(), 1);
  EXPECT_NE(group->key(), comm_->key());
  std::vector<float> values = {1.5f, -2.0f, 3.25f};
  DeviceBuffer buffer(values);
  group->AllReduce(buffer.data, buffer.data, values.size(), DType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(buffer.Read(), values);
  EXPECT_THROW(comm_->NewGroup({1}), ValueError);
  group->Barrier();
  comm_->Barrier();
}

// Large buffers go through NCCL's pipelined path rather than one chunk.
TEST_F(NcclDeviceTest, A64MiBAllReduceKeepsEveryValue) {
  std::vector<float> values(size_t{16} << 20);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 65521) - 300.0f;
  DeviceBuffer buffer(values);
  comm_->AllReduce(buffer.data, buffer.data, values.size(), DType::kFloat32, ReduceOp::kSum);
  EXPECT_TRUE(buffer.Read() == values);
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
