// AllReduce bandwidth over Gloo on local ranks, beside memcpy.
//
//   build with -DMSRT_BUILD_BENCHMARKS=ON, then
//   build-bench/benchmarks/collective_bench [--ranks 2,4] [--max-bytes 268435456]
//
// For each rank count, forks that many processes on 127.0.0.1 meeting at a
// rendezvous store served by this one, and times an in-place float32 sum
// AllReduce (msrt's Tensor form) for 1 KB to --max-bytes. Prints per size:
// the time per call, the algorithm bandwidth (bytes / time), the bus
// bandwidth (algorithm bandwidth * 2 (n - 1) / n: what each rank moves) and
// memcpy's bandwidth on a buffer of the same size in this process.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "msrt/tensor/tensor.h"
#include "parallel/communicator.h"
#include "parallel/store.h"

namespace {

using Clock = std::chrono::steady_clock;
using msrt::parallel::Communicator;

// memcpy calls per size: about 0.5 GB moved, between 3 and 2000 calls.
int Iterations(size_t bytes) { return static_cast<int>(std::clamp<size_t>((512u << 20) / bytes, 3, 2000)); }

std::vector<size_t> Sizes(size_t max_bytes) {
  std::vector<size_t> sizes;
  for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

// Best of three runs of `iterations` copies, in GB/s (bytes read, once).
double MemcpyBandwidth(size_t bytes) {
  std::vector<char> source(bytes, 1);
  std::vector<char> target(bytes, 0);
  int iterations = Iterations(bytes);
  double best = 1e30;
  for (int run = 0; run < 3; ++run) {
    auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      std::memcpy(target.data(), source.data(), bytes);
      asm volatile("" : : "r"(target.data()) : "memory");
    }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count() / iterations);
  }
  return static_cast<double>(bytes) / best / 1e9;
}

// One rank's part; rank 0 writes a line per size to `report`.
void RunRank(int rank, int ranks, uint16_t port, const std::vector<size_t>& sizes, FILE* report) {
  msrt::parallel::StoreClientOptions store_options;
  store_options.port = port;
  auto store = std::make_shared<msrt::parallel::StoreClient>(store_options);
  auto comm = msrt::parallel::CreateGlooCommunicator(store, rank, ranks);
  for (size_t bytes : sizes) {
    auto count = static_cast<int64_t>(bytes / sizeof(float));
    msrt::Tensor tensor = msrt::Tensor::Zeros({count}, msrt::DType::kFloat32);
    // Warm up and calibrate: about 0.2 s a run, as rank 0 measures it (every
    // rank must make the same number of calls, so rank 0's count is broadcast).
    comm->AllReduce(tensor, msrt::parallel::ReduceOp::kSum);
    auto start = Clock::now();
    for (int i = 0; i < 3; ++i) comm->AllReduce(tensor, msrt::parallel::ReduceOp::kSum);
    double per_call = std::chrono::duration<double>(Clock::now() - start).count() / 3;
    int64_t iterations = std::clamp<int64_t>(static_cast<int64_t>(0.2 / per_call), 3, 2000);
    comm->Broadcast(&iterations, 1, msrt::DType::kInt64, 0);
    double best = 1e30;
    for (int run = 0; run < 3; ++run) {
      comm->Barrier();
      start = Clock::now();
      for (int64_t i = 0; i < iterations; ++i) comm->AllReduce(tensor, msrt::parallel::ReduceOp::kSum);
      comm->Barrier();
      best = std::min(best,
                      std::chrono::duration<double>(Clock::now() - start).count() / static_cast<double>(iterations));
    }
    if (rank == 0) {
      std::fprintf(report, "%zu %.9f\n", bytes, best);
      std::fflush(report);
    }
  }
}

std::string HumanBytes(size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MB";
  return std::to_string(bytes >> 10) + " KB";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> rank_counts = {2, 4};
  size_t max_bytes = 256u << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--ranks") {
      rank_counts.clear();
      for (char* p = argv[i + 1]; *p != '\0';) {
        rank_counts.push_back(static_cast<int>(std::strtol(p, &p, 10)));
        if (*p == ',') ++p;
      }
    } else if (flag == "--max-bytes") {
      max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--ranks 2,4] [--max-bytes N]\n", argv[0]);
      return 2;
    }
  }
  if (!msrt::parallel::BuiltWithGloo()) {
    std::fprintf(stderr, "msrt was built without Gloo: nothing to measure\n");
    return 1;
  }
  std::vector<size_t> sizes = Sizes(max_bytes);
  std::printf("msrt AllReduce (Gloo, TCP on 127.0.0.1, float32 sum, in place) beside memcpy\n");
  for (int ranks : rank_counts) {
    // Bound before the fork, served after it: the children start with one thread.
    auto server = msrt::parallel::StoreServer::Listen();
    int fds[2];
    if (::pipe(fds) != 0) return 1;
    std::vector<pid_t> children;
    for (int rank = 0; rank < ranks; ++rank) {
      pid_t pid = ::fork();
      if (pid == 0) {
        ::close(fds[0]);
        FILE* report = ::fdopen(fds[1], "w");
        int status = 0;
        try {
          RunRank(rank, ranks, server->port(), sizes, report);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
          status = 1;
        }
        std::fclose(report);
        ::_exit(status);
      }
      children.push_back(pid);
    }
    ::close(fds[1]);
    server->Start();
    FILE* results = ::fdopen(fds[0], "r");
    std::vector<std::pair<size_t, double>> rows;
    size_t bytes = 0;
    double seconds = 0;
    while (std::fscanf(results, "%zu %lf", &bytes, &seconds) == 2) rows.emplace_back(bytes, seconds);
    std::fclose(results);
    int failed = 0;
    for (pid_t pid : children) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    // memcpy is timed once the ranks have exited, on an idle machine.
    std::printf("\n%d ranks\n%10s %12s %14s %14s %14s %13s\n", ranks, "size", "time (us)", "algbw (GB/s)",
                "busbw (GB/s)", "memcpy (GB/s)", "busbw/memcpy");
    for (auto [size, time] : rows) {
      double algbw = static_cast<double>(size) / time / 1e9;
      double busbw = algbw * 2.0 * (ranks - 1) / ranks;
      double copy = MemcpyBandwidth(size);
      std::printf("%10s %12.1f %14.3f %14.3f %14.3f %13.3f\n", HumanBytes(size).c_str(), time * 1e6, algbw, busbw, copy,
                  busbw / copy);
      std::fflush(stdout);
    }
    server->Stop();
    if (failed != 0) {
      std::fprintf(stderr, "%d rank(s) failed\n", failed);
      return 1;
    }
  }
  return 0;
}
