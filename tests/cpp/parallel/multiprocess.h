// Runs a body in N forked processes (ranks) against one rendezvous store.
//
// The store binds before the fork and serves after it, so the fork happens
// before this test starts any thread. Each child runs `body(rank)`, reports
// a failure's message through a pipe and exits with 0 or 1 (_exit: no
// destructors of the parent's objects run twice). The parent waits up to a
// deadline, kills every child still running on a failure or a timeout, and
// reaps them all: nothing is left running.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "parallel/store.h"

namespace msrt::parallel::testing {

/// What each rank's process did: empty on success, else why it failed.
struct RankOutcome {
  std::string failure;
};

/// Runs `body(rank, store_port)` in `ranks` processes; returns each rank's
/// outcome. `deadline` bounds the whole run.
inline std::vector<RankOutcome> RunRanks(int ranks, const std::function<void(int rank, uint16_t port)>& body,
                                         std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
  auto server = StoreServer::Listen();
  const uint16_t port = server->port();
  std::vector<pid_t> children;
  std::vector<int> pipes;
  for (int rank = 0; rank < ranks; ++rank) {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    pid_t pid = ::fork();
    if (pid < 0) {  // stop the ranks already started, then fail the test
      for (pid_t child : children) ::kill(child, SIGKILL);
      for (pid_t child : children) ::waitpid(child, nullptr, 0);
      throw std::runtime_error("fork failed for rank " + std::to_string(rank));
    }
    if (pid == 0) {
      ::close(fds[0]);
      std::string failure;
      try {
        body(rank, port);
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "unknown exception";
      }
      if (!failure.empty()) {
        failure = "rank " + std::to_string(rank) + ": " + failure;
        ssize_t written = ::write(fds[1], failure.data(), failure.size());
        (void)written;
      }
      ::close(fds[1]);
      ::_exit(failure.empty() ? 0 : 1);
    }
    ::close(fds[1]);
    children.push_back(pid);
    pipes.push_back(fds[0]);
  }
  server->Start();
  std::vector<RankOutcome> outcomes(static_cast<size_t>(ranks));
  std::vector<bool> done(static_cast<size_t>(ranks), false);
  auto end = std::chrono::steady_clock::now() + deadline;
  int remaining = ranks;
  bool failed = false;  // once a rank fails, the others are stopped
  while (remaining > 0) {
    bool timed_out = std::chrono::steady_clock::now() > end;
    for (size_t i = 0; i < children.size(); ++i) {
      if (done[i]) continue;
      if (timed_out || failed) ::kill(children[i], SIGKILL);
      int status = 0;
      pid_t got = ::waitpid(children[i], &status, (timed_out || failed) ? 0 : WNOHANG);
      if (got != children[i]) continue;
      done[i] = true;
      --remaining;
      std::string message;
      char buffer[4096];
      ssize_t n = 0;
      while ((n = ::read(pipes[i], buffer, sizeof(buffer))) > 0) message.append(buffer, static_cast<size_t>(n));
      ::close(pipes[i]);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      if (message.empty()) {
        message = "rank " + std::to_string(i) +
                  (timed_out             ? " did not finish within the deadline"
                   : failed              ? " was stopped after another rank failed"
                   : WIFSIGNALED(status) ? " was killed by signal " + std::to_string(WTERMSIG(status))
                                         : " exited with status " + std::to_string(WEXITSTATUS(status)));
      }
      outcomes[i].failure = message;
      failed = true;
    }
    if (remaining > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  server->Stop();
  return outcomes;
}

/// All failures joined, or "" when every rank succeeded.
inline std::string Failures(const std::vector<RankOutcome>& outcomes) {
  std::string text;
  for (const auto& outcome : outcomes) {
    if (!outcome.failure.empty()) text += outcome.failure + "\n";
  }
  return text;
}

/// A store client for rank processes.
inline std::shared_ptr<StoreClient> ConnectStore(uint16_t port) {
  StoreClientOptions options;
  options.port = port;
  options.connect_timeout = std::chrono::seconds(10);
  options.timeout = std::chrono::seconds(20);
  return std::make_shared<StoreClient>(options);
}

}  // namespace msrt::parallel::testing
