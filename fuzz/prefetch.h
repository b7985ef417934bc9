#pragma once
// Evaluations asked ahead of the checks, in batches. The properties of one drawn case ask a
// handful of cases of each backend (the case, its permuted, scaled and nudged variants, ...),
// and sent one at a time each is a pipe round trip to the backend's worker, which costs more
// than evaluating a small case. Listed ahead (Property::asks), they go to each backend's worker
// in one message, every worker's batch sent before any answer is awaited (the workers run at
// once), and the answers are kept in the contexts (CheckContext::answers_of), where the checks
// then find them exactly as if they had asked them one at a time: the same answers, the same
// verdicts. A batch whose worker died or hung keeps that case's crash, and nothing for the
// others of the batch: a check that asks one of them evaluates it alone, as before.
// Backends in a process of their own (the peer bridges, Backend::out_of_process()) get their
// asked cases too, one after the other, each from a thread of the campaign's process that
// runs while the workers evaluate (a bridge answers a case at a time; what it costs, its JSON
// both ways above all, then overlaps the workers' work instead of following it).
#include <functional>
#include <utility>
#include <vector>

#include "fuzz/properties.h"

namespace oplab::fuzz {

// Evaluates every asked case whose answer its context does not keep yet, one batch per backend
// that runs in a worker (uses_worker), one thread per out-of-process backend, and keeps the
// answers there. Throws only Interrupted (every thread joined first). `meanwhile` (which must
// not throw) runs while the workers and the threads evaluate: the campaign draws its next case
// then, so that its process, the workers and the bridges work at the same time. Nothing may
// fork meanwhile (a worker is started before the threads are).
void prefetch(const std::vector<std::pair<CheckContext*, Ask>>& asks, const std::function<void()>& meanwhile = {});

// Adds what property `p` asks on `ctx`'s case to `asks` (nothing when listing them fails: the
// check will meet that failure itself).
void collect_asks(const Property& p, CheckContext& ctx, std::vector<std::pair<CheckContext*, Ask>>& asks);

}  // namespace oplab::fuzz
