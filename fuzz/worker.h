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
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "fuzz/isolate.h"

namespace oplab::fuzz {

// evaluate(b, c) in the backend's worker process. Throws what evaluate throws (InvalidCase,
// Unsupported, ...), KernelCrash (the worker died or ran past the timeout; it is replaced on
// the next call), or Interrupted when a stop was requested meanwhile.
Result worker_evaluate(Backend& b, const Case& c, double timeout_s);

// Several cases for one backend's worker, sent as one message and answered by one: a pipe
// round trip wakes both processes, and costs more than evaluating a small case.
struct WorkerBatch {
  Backend* backend = nullptr;
  std::vector<const Case*> cases;
  std::vector<std::string> bytes;  // each case's wire bytes (wire::encode_case), same order
  // Filled in: answers[i] holds the wire answer of cases[i] (wire::decode gives its Result or
  // throws its error). When the worker died or hung, `crash` is the KernelCrash of the case it
  // was evaluating (crashed_at) and no other case has an answer: the ones before it died with
  // the worker, the ones after it were never started.
  std::vector<std::optional<std::string>> answers;
  std::optional<size_t> crashed_at;
  std::exception_ptr crash;
};

// Sends every batch to its backend's worker before waiting for any, so the workers evaluate
// at once, then collects the answers. One batch per backend. Each case of a batch is given
// timeout_s from the end of the one before it (checked every 100 ms), as a single evaluation
// is. A batch that cannot be sent (its worker does not start) is left unanswered. Throws
// Interrupted when a stop is requested (every worker still busy is killed). `meanwhile`, when
// given, runs once every batch is sent, while the workers evaluate; it must not throw.
void worker_evaluate_batches(std::vector<WorkerBatch>& batches, double timeout_s,
                             const std::function<void()>& meanwhile = {});

}  // namespace oplab::fuzz
