// Sets and reads the execution context from C++, as a MindSpore script
// would from Python:
//   ms.set_context(mode=ms.GRAPH_MODE, max_device_memory="3.5GB")
// then calls ops through the generated C++ op API (msrt/ops.h).
#include <iostream>

#include <msrt/msrt.h>
#include <msrt/ops.h>

int main() {
  try {
    msrt::SetContext({{"mode", msrt::context::kGraphMode}, {"max_device_memory", "3.5GB"}});
    std::cout << "mode: " << msrt::GetContext("mode").repr() << "\n";
    std::cout << "max_device_memory: " << msrt::GetContext("max_device_memory").repr() << "\n";
    std::cout << "device_target: " << msrt::GetContext("device_target").repr() << "\n";
    // Errors are typed, and a failed call changes nothing.
    try {
      msrt::SetContext({{"mode", msrt::context::kPynativeMode}, {"max_device_memory", "0.0GB"}});
    } catch (const msrt::ValueError& e) {
      std::cout << "ValueError: " << e.what() << "\n";
    }
    std::cout << "mode after the failed call: " << msrt::GetContext("mode").repr() << "\n";
    std::cout << msrt::context::Global().Summary();

    // ops.reduce_sum(ops.relu(x) * 2, axis=1) on x = [[-1, 2], [3, -4]].
    const float data[] = {-1, 2, 3, -4};
    msrt::Tensor x = msrt::Tensor::FromHost(data, sizeof data, {2, 2}, msrt::DType::kFloat32);
    msrt::Tensor two = msrt::Tensor::Scalar(2, msrt::DType::kFloat32);
    msrt::Tensor y = msrt::ops::reduce_sum(msrt::ops::mul(msrt::ops::relu(x), two), {1});
    y.Sync();
    std::cout << "row sums: " << y.data<float>()[0] << " " << y.data<float>()[1] << "\n";
    try {
      msrt::Tensor bad = msrt::ops::reshape(x, {3});
      (void)bad;
    } catch (const msrt::ValueError& e) {
      std::cout << "reshape error: " << e.what() << "\n";
    }
  } catch (const msrt::Error& e) {
    std::cerr << msrt::ErrorKindName(e.kind()) << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
