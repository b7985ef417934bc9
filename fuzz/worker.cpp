#include "fuzz/worker.h"

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/isolated_process.h"
#include "core/line_child.h"
#include "fuzz/interrupt.h"
#include "fuzz/wire.h"

namespace oplab::fuzz {

namespace {

using clock_type = std::chrono::steady_clock;

// The answer to one case's bytes, or to bytes that are not a case.
std::string answer_to(Backend& b, const std::string& bytes) {
  try {
    return evaluate_to_bytes(b, wire::decode_case(bytes));
  } catch (const std::exception& e) {
    return wire::encode_error(wire::Kind::Error, std::string("the worker could not read the case: ") + e.what());
  }
}

// The worker: answers frames until the campaign closes its end of the pipe. A request is a
// case, or a batch of cases (a tagged list, fuzz/wire.h), and its answer a result, or the list
// of their results, all as wire bytes (every double exactly, and no text to print and parse on
// a path taken several times a case). Before each case of a batch it counts one up in memory
// shared with the campaign, which tells the campaign which case was running if it dies or
// hangs, without a message (and a wake-up) per case.
[[noreturn]] void worker_main(Backend& b, int in, int out, std::atomic<uint64_t>* started) {
  mark_isolated_process();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  std::string text;
  while (read_frame(in, text)) {
    std::string answer;
    if (wire::is_tagged_list(text)) {
      std::vector<std::string> cases, answers;
      try {
        cases = wire::decode_list(text, true);
      } catch (const std::exception&) {
        // an empty list: the campaign sees the count differ and asks the cases one at a time
      }
      answers.reserve(cases.size());
      for (const std::string& c : cases) {
        started->fetch_add(1, std::memory_order_relaxed);
        answers.push_back(answer_to(b, c));
      }
      answer = wire::encode_list(answers);
    } else {
      answer = answer_to(b, text);
    }
    if (!write_frame(out, answer)) _exit(3);
  }
  _exit(0);
}

// One backend's worker: a forked child of the pipe layer (core/line_child.h) that reads the
// campaign's stop request while it waits, so Ctrl-C does not wait for a slow case.
class Worker {
 public:
  explicit Worker(Backend& b) : backend_(b) {
    void* shared = mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) throw std::runtime_error(b.name() + ": cannot map the worker's progress counter");
    started_ = new (shared) std::atomic<uint64_t>(0);  // inherited by every worker forked later
    LineChildOptions o;
    std::atomic<uint64_t>* started = started_;
    o.body = [&b, started](int in, int out) { worker_main(b, in, out, started); };
    o.framed = true;
    o.should_stop = [this] { return stop_requested() || batch_overdue(); };
    child_ = std::make_unique<LineChild>(std::move(o));
  }
  ~Worker() {
    child_.reset();
    munmap(started_, sizeof(std::atomic<uint64_t>));
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // At exit, at once: a worker forked after another holds a copy of the other's pipe and keeps
  // it from seeing the end of its input, so a polite stop would wait out its grace period.
  void kill() { child_->kill_now(); }

  std::string evaluate(const Case& c, double timeout_s) {
    if (stop_requested()) throw Interrupted();
    overdue_ = false;
    try {
      return child_->request(wire::encode_case(c), timeout_s);
    } catch (const ChildError& e) {
      throw crash_of(e, c, timeout_s);
    }
  }

  // False when the batch could not be sent (the worker does not start, or died at once).
  bool send(const WorkerBatch& batch) {
    base_ = started_->load();
    try {
      child_->send(wire::encode_list(batch.bytes, true));
      return true;
    } catch (const ChildError&) {
      child_->kill_now();
      return false;
    }
  }

  void receive(WorkerBatch& batch, double timeout_s) {
    watching_ = true, overdue_ = false, limit_s_ = timeout_s;
    seen_ = started_->load(), since_ = clock_type::now();
    std::string reply;
    try {
      reply = child_->receive(0);  // no overall limit: batch_overdue() times each case
    } catch (const ChildError& e) {
      watching_ = false;  // a stop that is no hang: crash_of throws Interrupted
      const uint64_t n = started_->load() - base_;
      const size_t at = std::min<size_t>(n == 0 ? 0 : size_t(n - 1), batch.cases.size() - 1);
      batch.crashed_at = at;
      batch.crash = std::make_exception_ptr(crash_of(e, *batch.cases[at], timeout_s));
      return;
    }
    watching_ = false;
    std::vector<std::string> answers;
    try {
      answers = wire::decode_list(reply);
    } catch (const std::exception&) {
    }
    if (answers.size() != batch.cases.size()) {  // garbled: ask them one at a time
      child_->kill_now();
      return;
    }
    for (size_t i = 0; i < answers.size(); ++i) batch.answers[i] = std::move(answers[i]);
  }

 private:
  // While a batch is awaited: true once the case in progress has run past the limit.
  bool batch_overdue() {
    if (!watching_) return false;
    const uint64_t now_started = started_->load();
    const auto now = clock_type::now();
    if (now_started != seen_) seen_ = now_started, since_ = now;
    overdue_ = std::chrono::duration<double>(now - since_).count() > limit_s_;
    return overdue_;
  }

  KernelCrash crash_of(const ChildError& e, const Case& c, double timeout_s) {
    const std::string what = backend_.name() + ": " + c.op;
    switch (e.kind) {
      case ChildError::Stopped:
        if (!overdue_) throw Interrupted();
        [[fallthrough]];
      case ChildError::Hung: {
        std::ostringstream os;
        os << what << ": hung: no answer within " << timeout_s << " s (worker killed)";
        return KernelCrash(os.str());
      }
      case ChildError::Died: return KernelCrash(what + ": " + how_it_died(child_->last_status()) + " (worker)");
      case ChildError::TooLong: return KernelCrash(what + ": answered more than a worker's answer may hold (worker killed)");
      case ChildError::CannotStart: throw std::runtime_error(what + ": cannot start the worker: " + e.what());
    }
    throw std::runtime_error(e.what());
  }

  Backend& backend_;
  std::unique_ptr<LineChild> child_;
  std::atomic<uint64_t>* started_ = nullptr;  // cases of batches the worker has started, ever
  uint64_t base_ = 0;                         // its value when the batch was sent
  bool watching_ = false, overdue_ = false;
  double limit_s_ = 0;
  uint64_t seen_ = 0;
  clock_type::time_point since_;
};

// One worker per backend for the life of the campaign process; a dead one is started again
// by the next request.
Worker& worker_for(Backend& b) {
  struct Workers {
    std::vector<std::pair<const Backend*, std::unique_ptr<Worker>>> list;
    ~Workers() {
      for (auto& w : list) w.second->kill();
    }
  };
  static Workers workers;
  for (auto& w : workers.list)
    if (w.first == &b) return *w.second;
  workers.list.emplace_back(&b, std::make_unique<Worker>(b));
  return *workers.list.back().second;
}

}  // namespace

Result worker_evaluate(Backend& b, const Case& c, double timeout_s) {
  return wire::decode(worker_for(b).evaluate(c, timeout_s));
}

void worker_evaluate_batches(std::vector<WorkerBatch>& batches, double timeout_s,
                             const std::function<void()>& meanwhile) {
  if (stop_requested()) throw Interrupted();
  std::vector<Worker*> busy(batches.size(), nullptr);
  for (size_t i = 0; i < batches.size(); ++i) {
    WorkerBatch& batch = batches[i];
    batch.answers.assign(batch.cases.size(), std::nullopt);
    batch.crashed_at.reset();
    batch.crash = nullptr;
    if (batch.cases.empty()) continue;
    Worker& w = worker_for(*batch.backend);
    if (w.send(batch)) busy[i] = &w;
  }
  try {
    if (meanwhile) meanwhile();
    for (size_t i = 0; i < batches.size(); ++i)
      if (busy[i]) {
        Worker* w = busy[i];
        busy[i] = nullptr;
        w->receive(batches[i], timeout_s);
      }
  } catch (...) {
    // An answer still on its way would be read as the answer to the next request.
    for (Worker* w : busy)
      if (w) w->kill();
    throw;
  }
}

}  // namespace oplab::fuzz
