// Core allocates tensors through the Allocator interface (core/allocator.h);
// the memory layer installs the pool's when libmsrt loads.
#include "core/allocator.h"

#include <gtest/gtest.h>

#include "memory/allocator.h"

namespace msrt {
namespace {

// Counts what it hands out and passes the request on.
class Counting final : public Allocator {
 public:
  explicit Counting(Allocator* next) : next_(next) {}
  std::shared_ptr<Storage> Allocate(size_t nbytes, DeviceTarget device) override {
    ++calls;
    bytes += nbytes;
    return next_->Allocate(nbytes, device);
  }
  int calls = 0;
  size_t bytes = 0;

 private:
  Allocator* next_;
};

TEST(Allocator, TheMemoryLayerInstallsThePool) {
  int64_t before = memory::Stats(DeviceTarget::kCPU).allocations;
  Tensor t = Tensor::Empty({16}, DType::kFloat32);
  EXPECT_EQ(memory::Stats(DeviceTarget::kCPU).allocations, before + 1);
  EXPECT_GE(t.nbytes(), 64u);
}

TEST(Allocator, TensorsAllocateThroughTheInstalledOne) {
  Allocator* pool = &TensorAllocator();
  Counting counting(pool);
  InstallAllocator(&counting);
  Tensor a = Tensor::Empty({4, 4}, DType::kFloat32);
  Tensor b = Tensor::Zeros({3}, DType::kInt64);
  InstallAllocator(pool);
  Tensor c = Tensor::Empty({2}, DType::kFloat32);  // the pool's again
  EXPECT_EQ(counting.calls, 2);
  EXPECT_EQ(counting.bytes, 64u + 24u);
  EXPECT_EQ(&TensorAllocator(), pool);
}

}  // namespace
}  // namespace msrt
