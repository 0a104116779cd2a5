// fork() with msrt's threads.
//
// Note [Fork]
// A child process has only the thread that called fork(): the eager
// dispatcher, the kernel pool's workers and the op_timeout watchdog stay
// behind, and a lock one of them held would stay locked for ever. Before
// the fork the dispatcher's queue is drained (so no tensor waits for a
// thread the child lacks) and the memory pool's lock is taken (so it is
// consistent); after it both processes release the lock, and the child
// starts a new dispatcher, forgets the pool's workers (new ones start on
// its next parallel loop) and restarts the watchdog. Python's os.fork drains
// the queue earlier still (msrt/__init__.py), before fork() is called: a
// sanitizer's fork interceptor takes its allocator locks before any
// pthread_atfork handler runs, and a dispatcher allocating then would
// deadlock with the drain. The child computes in
// either mode. GNU OpenMP does not rebuild a thread's team in the child:
// the forking thread, if it led oneDNN's team, runs oneDNN on itself alone
// there (kernels/cpu/onednn_common.cc); other threads get teams of their own.
#include <pthread.h>

#include "core/thread_pool.h"
#include "memory/allocator.h"
#include "runtime/eager.h"

namespace msrt::runtime {

void ResetOpTimeoutInForkChild();  // op_timeout.cc

namespace {

void Prepare() {
  DrainForFork();
  memory::LockPoolsForFork();
}

void Parent() { memory::UnlockPoolsAfterFork(); }

void Child() {
  memory::UnlockPoolsAfterFork();
  ResetThreadPoolInForkChild();
  ResetDispatcherInForkChild();
  ResetOpTimeoutInForkChild();
}

const bool kForkHandlersInstalled = (pthread_atfork(&Prepare, &Parent, &Child), true);

}  // namespace
}  // namespace msrt::runtime
