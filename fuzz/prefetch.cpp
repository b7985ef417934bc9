#include "fuzz/prefetch.h"

#include "fuzz/interrupt.h"
#include "fuzz/wire.h"
#include "fuzz/worker.h"

namespace oplab::fuzz {

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
  struct Item {
    Answers* store;
    size_t ask;  // index into asks
  };
  std::vector<WorkerBatch> batches;
  std::vector<std::vector<Item>> items;  // per batch
  for (size_t i = 0; i < asks.size(); ++i) {
    CheckContext& ctx = *asks[i].first;
    const Ask& a = asks[i].second;
    if (!a.backend || !uses_worker(*a.backend, ctx.isolation())) continue;
    Answers& store = ctx.answers_of(*a.backend);
    std::string key = wire::encode_case(a.c);
    if (store.find(*a.backend, key)) continue;
    size_t k = 0;
    while (k < batches.size() && batches[k].backend != a.backend) ++k;
    if (k == batches.size()) {
      batches.emplace_back().backend = a.backend;
      items.emplace_back();
    }
    bool twice = false;  // asked by two checks of the same context (the unmodified case)
    for (size_t j = 0; j < items[k].size() && !twice; ++j)
      twice = items[k][j].store == &store && batches[k].bytes[j] == key;
    if (twice) continue;
    batches[k].cases.push_back(&a.c);
    batches[k].bytes.push_back(std::move(key));
    items[k].push_back({&store, i});
  }
  if (batches.empty()) {
    if (meanwhile) meanwhile();
    return;
  }
  // The contexts agree on the timeout (one campaign's isolation).
  const double timeout_s = asks.front().first->isolation().timeout_s;
  try {
    worker_evaluate_batches(batches, timeout_s, meanwhile);
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception&) {
    return;  // a worker that cannot start: each check meets that error itself
  }
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
