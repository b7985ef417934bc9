#pragma once
// Isolation for backends whose start is slow (Backend::slow_start(): an OpenCL platform that
// initialises, builds and loads its kernels in every new process, ~50 ms a kernel with pocl).
// Forking a child per evaluation would pay that start every time; instead one worker process
// per backend, forked once, evaluates case after case sent over a pipe. It is as isolated as a
// per-case child from the campaign (a crash or a hang kills the worker, is reported as a
// KernelCrash with its case, and the next evaluation forks a fresh worker), but not from the
// cases before it in the same worker: a kernel that corrupts memory without crashing could
// affect a later case. The worker is forked before the backend's platform is started in the
// campaign's process, which matters: a platform's threads do not survive a fork.
#include "core/backend.h"
#include "fuzz/isolate.h"

namespace oplab::fuzz {

// evaluate(b, c) in the backend's worker process. Throws what evaluate throws (InvalidCase,
// Unsupported, ...), KernelCrash (the worker died or ran past the timeout; it is replaced on
// the next call), or Interrupted when a stop was requested meanwhile.
Result worker_evaluate(Backend& b, const Case& c, double timeout_s);

}  // namespace oplab::fuzz
