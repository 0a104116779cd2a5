// Context get/set latency from C++, against PyTorch's global context.
//
//   make bench     (or build/benchmarks/context_bench)
//
// Prints the median nanoseconds per call over repeated runs, and the ratio
// against the peer measured in the same process. Goal: get <= 50 ns.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "msrt/msrt.h"
#include "peers/context_peer.h"

namespace {

using msrt::context::Family;

// Keeps a value alive without a volatile store in the timed loop.
template <typename T>
void Keep(T value) {
  asm volatile("" : : "r"(value) : "memory");
}

double MedianNanoseconds(const std::function<void(int)>& body, int iterations) {
  std::vector<double> runs;
  for (int run = 0; run < 15; ++run) {
    auto start = std::chrono::steady_clock::now();
    body(iterations);
    auto end = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double, std::nano>(end - start).count() / iterations);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

void Row(const char* what, double ns, double peer_ns) {
  if (peer_ns > 0) {
    std::printf("  %-46s %9.1f ns   %6.2fx peer\n", what, ns, ns / peer_ns);
  } else {
    std::printf("  %-46s %9.1f ns\n", what, ns);
  }
}

}  // namespace

int main() {
  msrt::context::Store& store = msrt::context::Global();
  const bool has_peer = !msrt::bench::PeerName().empty();
  constexpr int kGets = 2'000'000;
  constexpr int kSets = 100'000;

  double peer_get = has_peer ? MedianNanoseconds(
                                   [](int n) {
                                     for (int i = 0; i < n; ++i) Keep(msrt::bench::PeerGet());
                                   },
                                   kGets)
                             : 0;
  double peer_set = has_peer ? MedianNanoseconds(
                                   [](int n) {
                                     for (int i = 0; i < n; ++i) msrt::bench::PeerSet(i & 1);
                                   },
                                   kSets)
                             : 0;

  const msrt::context::OptionRef<int64_t> mode(Family::kRuntime, "mode");
  const msrt::context::OptionRef<bool> check_bprop(Family::kRuntime, "check_bprop");
  const msrt::context::OptionRef<std::string> graphs_path(Family::kRuntime, "save_graphs_path");

  double get_ref = MedianNanoseconds(
      [&](int n) {
        for (int i = 0; i < n; ++i) Keep(mode.Get());
      },
      kGets);
  double get_ref_bool = MedianNanoseconds(
      [&](int n) {
        for (int i = 0; i < n; ++i) Keep(check_bprop.Get());
      },
      kGets);
  double get_name = MedianNanoseconds(
      [&](int n) {
        for (int i = 0; i < n; ++i) Keep(store.Get(Family::kRuntime, "mode").as_int());
      },
      kGets / 4);
  double get_string = MedianNanoseconds(
      [&](int n) {
        for (int i = 0; i < n; ++i) Keep(static_cast<int64_t>(graphs_path.Get().size()));
      },
      kGets / 4);
  const msrt::Dict graph{{"mode", msrt::Value(int64_t{0})}};
  const msrt::Dict pynative{{"mode", msrt::Value(int64_t{1})}};
  double set_one = MedianNanoseconds(
      [&](int n) {
        for (int i = 0; i < n; ++i) store.Set(Family::kRuntime, (i & 1) ? graph : pynative);
      },
      kSets);

  std::printf("context get/set from C++ (median of 15 runs; peer: %s)\n",
              has_peer ? msrt::bench::PeerName().c_str() : "none built");
  Row("peer get (deterministicAlgorithms)", peer_get, 0);
  Row("peer set (setDeterministicAlgorithms)", peer_set, 0);
  Row("msrt get, typed handle OptionRef<int64_t>", get_ref, peer_get);
  Row("msrt get, typed handle OptionRef<bool>", get_ref_bool, peer_get);
  Row("msrt get by name Store::Get(\"mode\")", get_name, peer_get);
  Row("msrt get string, OptionRef<std::string>", get_string, peer_get);
  Row("msrt set one key Store::Set({mode})", set_one, peer_set);
  std::printf("goal: C++ get <= 50 ns -> typed handle %s, by name %s\n", get_ref <= 50 ? "met" : "NOT met",
              get_name <= 50 ? "met" : "NOT met");
  return 0;
}
