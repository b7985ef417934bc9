#include "fuzz/prefetch.h"

#include <thread>

#include "fuzz/interrupt.h"
#include "fuzz/wire.h"
#include "fuzz/worker.h"

namespace oplab::fuzz {

namespace {

// Where an evaluation's answer goes: the answers of the context that asked it.
struct Item {
  Answers* store;
  size_t ask;  // index into asks
};

// The asks of one backend that runs in a process of its own (a peer bridge): evaluated one
// after the other, in a thread of this process, while the workers evaluate theirs.
struct PeerJob {
  Backend* backend = nullptr;
  std::vector<const Case*> cases;
  std::vector<std::string> keys;     // each case's wire bytes, same order
  std::vector<Item> items;
  std::vector<Answers::Answer> answers;  // filled in by the thread; an answer with no backend: none
};

// The same answer CheckContext::eval would keep, computed the same way (evaluate(), as
// isolated_evaluate does for an out-of-process backend). A stop request ends the job: the
// cases left (and one that failed meanwhile, the bridge killed by the same Ctrl-C) get no
// answer, so nothing the stop caused is kept as the backend's.
void run_peer_job(PeerJob& job) {
  job.answers.resize(job.cases.size());
  for (size_t i = 0; i < job.cases.size(); ++i) {
    if (stop_requested()) return;
    Answers::Answer a;
    try {
      a.result = evaluate(*job.backend, *job.cases[i]);
    } catch (const KernelCrash&) {
      a.crashed = true;
      a.error = std::current_exception();
    } catch (const std::exception&) {
      a.error = std::current_exception();
    } catch (...) {
      continue;  // not an answer (Interrupted): a check that asks it evaluates it itself
    }
    if (stop_requested()) return;
    a.backend = job.backend;
    job.answers[i] = std::move(a);
  }
}

// Joins the peers' threads on every way out, an Interrupted thrown while the workers were
// awaited included: no thread may outlive the answers' stores, nor run across the next fork.
struct Threads {
  std::vector<std::thread> list;
  void join() {
    for (std::thread& t : list)
      if (t.joinable()) t.join();
  }
  ~Threads() { join(); }
};

}  // namespace

void collect_asks(const Property& p, CheckContext& ctx, std::vector<std::pair<CheckContext*, Ask>>& asks) {
  if (!p.asks) return;
  std::vector<Ask> mine;
  try {
    p.asks(ctx, mine);
  } catch (const std::exception&) {
    return;
  }
  for (Ask& a : mine) asks.emplace_back(&ctx, std::move(a));
}

void prefetch(const std::vector<std::pair<CheckContext*, Ask>>& asks, const std::function<void()>& meanwhile) {
  std::vector<WorkerBatch> batches;
  std::vector<std::vector<Item>> items;  // per batch
  std::vector<PeerJob> peers;
  for (size_t i = 0; i < asks.size(); ++i) {
    CheckContext& ctx = *asks[i].first;
    const Ask& a = asks[i].second;
    if (!a.backend) continue;
    const bool worker = uses_worker(*a.backend, ctx.isolation());
    // A backend in a process of its own is never isolated again (isolated_evaluate); under
    // --isolation none the campaign does not prefetch at all.
    if (!worker && !a.backend->out_of_process()) continue;
    Answers& store = ctx.answers_of(*a.backend);
    std::string key = wire::encode_case(a.c);
    if (store.find(*a.backend, key)) continue;
    std::vector<const Case*>* cases;
    std::vector<std::string>* keys;
    std::vector<Item>* its;
    if (worker) {
      size_t k = 0;
      while (k < batches.size() && batches[k].backend != a.backend) ++k;
      if (k == batches.size()) {
        batches.emplace_back().backend = a.backend;
        items.emplace_back();
      }
      cases = &batches[k].cases, keys = &batches[k].bytes, its = &items[k];
    } else {
      size_t k = 0;
      while (k < peers.size() && peers[k].backend != a.backend) ++k;
      if (k == peers.size()) peers.emplace_back().backend = a.backend;
      cases = &peers[k].cases, keys = &peers[k].keys, its = &peers[k].items;
    }
    bool twice = false;  // asked by two checks of the same context (the unmodified case)
    for (size_t j = 0; j < its->size() && !twice; ++j) twice = (*its)[j].store == &store && (*keys)[j] == key;
    if (twice) continue;
    cases->push_back(&a.c);
    keys->push_back(std::move(key));
    its->push_back({&store, i});
  }

  // The peers' threads start once every worker has its batch (a worker is forked when it
  // starts, and a fork must not copy a process in which another thread may hold a lock) and
  // are joined before anything else forks; meanwhile this thread draws the next case and then
  // awaits the workers.
  Threads threads;
  auto start_peers_then_meanwhile = [&] {
    for (PeerJob& job : peers) threads.list.emplace_back(run_peer_job, std::ref(job));
    if (meanwhile) meanwhile();
  };
  bool workers_answered = false;
  if (batches.empty()) {
    start_peers_then_meanwhile();
  } else {
    // The contexts agree on the timeout (one campaign's isolation).
    const double timeout_s = asks.front().first->isolation().timeout_s;
    try {
      worker_evaluate_batches(batches, timeout_s, start_peers_then_meanwhile);
      workers_answered = true;
    } catch (const Interrupted&) {
      throw;  // Threads joins the peers first
    } catch (const std::exception&) {
      // a worker that cannot start: each check meets that error itself
    }
  }
  threads.join();
  if (stop_requested()) throw Interrupted();

  for (PeerJob& job : peers)
    for (size_t j = 0; j < job.answers.size(); ++j) {
      Answers::Answer& a = job.answers[j];
      if (!a.backend) continue;  // no answer: asked alone if a check asks it
      a.key = std::move(job.keys[j]);
      job.items[j].store->add(std::move(a));
    }
  if (!workers_answered) return;
  for (size_t k = 0; k < batches.size(); ++k) {
    WorkerBatch& batch = batches[k];
    for (size_t j = 0; j < items[k].size(); ++j) {
      Answers::Answer a;
      a.backend = batch.backend;
      if (batch.answers[j]) {
        try {
          a.result = wire::decode(*batch.answers[j]);
        } catch (const std::exception&) {
          a.error = std::current_exception();
        }
      } else if (batch.crashed_at == j) {
        a.crashed = true;
        a.error = batch.crash;
      } else {
        continue;  // no answer: asked alone if a check asks it
      }
      a.key = std::move(batch.bytes[j]);
      items[k][j].store->add(std::move(a));
    }
  }
}

}  // namespace oplab::fuzz
