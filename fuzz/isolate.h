#pragma once
// Crash and hang isolation of in-process backends. A kernel that segfaults, aborts or loops
// forever must not take the campaign down with it: the case is evaluated in another process
// that sends its Result (or the exception it threw) back over a pipe, and is killed when it
// runs past the timeout. Its death becomes a KernelCrash that names the signal or the timeout,
// and the campaign records it as a failure with its case.
//
// Two ways (IsolationMode): by default one long-lived worker process per backend evaluates
// case after case (fuzz/worker.h; ~0.1 ms a case of overhead instead of a fork's ~2 ms),
// replaced after a crash or a hang; `fork` forks a fresh child per evaluation, so that no case
// can be affected by memory an earlier one corrupted without crashing.
//
// Out-of-process backends (Backend::out_of_process(), e.g. the torchvision bridge) are not
// forked: they already run in a child of their own, and a fork while the bridge is mid-call
// would duplicate its pipes. Only the in-process evaluation is forked.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/backend.h"

namespace oplab::fuzz {

// The kernel crashed (a signal, a non-zero exit) or hung past the timeout.
using oplab::KernelCrash;  // core/case.h: out-of-process backends throw it too

enum class IsolationMode {
  None,     // evaluate in this process (a crash ends the campaign)
  Worker,   // one long-lived worker process per backend
  PerCase,  // a forked child per evaluation
};
const char* isolation_mode_name(IsolationMode m);  // "none", "worker", "fork"
std::optional<IsolationMode> isolation_mode_from_name(const std::string& name);

struct Isolation {
  IsolationMode mode = IsolationMode::Worker;
  double timeout_s = 10.0;  // per evaluation (isolated modes only)
};

// evaluate(b, c) isolated as `iso` says (see above). Throws what evaluate throws (InvalidCase,
// Unsupported, ...), KernelCrash, or Interrupted when a stop was requested meanwhile.
Result isolated_evaluate(Backend& b, const Case& c, const Isolation& iso);

// Whether isolated_evaluate sends `b`'s cases to its worker (fuzz/worker.h).
bool uses_worker(const Backend& b, const Isolation& iso);

// Slow-start backends (Backend::slow_start()) are evaluated in their worker even under
// PerCase: a fresh child would pay their start (an OpenCL platform's) on every case.

// Shared with the worker: evaluate(b, c) as wire bytes (its Result, or the exception it threw);
// how a child process ended, in words ("crashed: killed by signal 11 (...)").
std::string evaluate_to_bytes(Backend& b, const Case& c);
std::string how_it_died(int status);

// The building block: runs `work` in a forked child and returns the bytes it returned there.
// `work` must not throw (an escaping exception counts as a crash). Throws KernelCrash
// ("<what>: crashed: ..." or "<what>: hung: ...") or Interrupted.
std::string run_forked(const std::function<std::string()>& work, double timeout_s, const std::string& what);

}  // namespace oplab::fuzz
