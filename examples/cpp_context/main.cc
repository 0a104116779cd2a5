// Sets and reads the execution context from C++, as a MindSpore script
// would from Python:
//   ms.set_context(mode=ms.GRAPH_MODE, max_device_memory="3.5GB")
#include <iostream>

#include <msrt/msrt.h>

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
  } catch (const msrt::Error& e) {
    std::cerr << msrt::ErrorKindName(e.kind()) << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
