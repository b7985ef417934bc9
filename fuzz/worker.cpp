#include "fuzz/worker.h"

#include <signal.h>

#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/line_child.h"
#include "fuzz/interrupt.h"
#include "fuzz/wire.h"

namespace oplab::fuzz {

namespace {

// The worker: answers frames until the campaign closes its end of the pipe. A request is a
// case and an answer a result, both as wire bytes (fuzz/wire.h: every double exactly, and no
// text to print and parse on a path taken several times a case).
[[noreturn]] void worker_main(Backend& b, int in, int out) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  std::string text;
  while (read_frame(in, text)) {
    std::string answer;
    try {
      answer = evaluate_to_bytes(b, wire::decode_case(text));
    } catch (const std::exception& e) {
      answer = wire::encode_error(wire::Kind::Error, std::string("the worker could not read the case: ") + e.what());
    }
    if (!write_frame(out, answer)) _exit(3);
  }
  _exit(0);
}

// One backend's worker: a forked child of the pipe layer (core/line_child.h) that reads the
// campaign's stop request while it waits, so Ctrl-C does not wait for a slow case.
class Worker {
 public:
  explicit Worker(Backend& b) {
    LineChildOptions o;
    o.body = [&b](int in, int out) { worker_main(b, in, out); };
    o.framed = true;
    o.should_stop = [] { return stop_requested(); };
    child_ = std::make_unique<LineChild>(std::move(o));
  }

  std::string evaluate(Backend& b, const Case& c, double timeout_s) {
    if (stop_requested()) throw Interrupted();
    const std::string what = b.name() + ": " + c.op;
    try {
      return child_->request(wire::encode_case(c), timeout_s);
    } catch (const ChildError& e) {
      switch (e.kind) {
        case ChildError::Stopped: throw Interrupted();
        case ChildError::Hung: {
          std::ostringstream os;
          os << what << ": hung: no answer within " << timeout_s << " s (worker killed)";
          throw KernelCrash(os.str());
        }
        case ChildError::Died: throw KernelCrash(what + ": " + how_it_died(child_->last_status()) + " (worker)");
        case ChildError::CannotStart: throw std::runtime_error(what + ": cannot start the worker: " + e.what());
      }
      throw;
    }
  }

 private:
  std::unique_ptr<LineChild> child_;
};

}  // namespace

Result worker_evaluate(Backend& b, const Case& c, double timeout_s) {
  // One worker per backend for the life of the campaign process; a dead one is started again
  // by the next request.
  static std::map<const Backend*, Worker> workers;
  auto it = workers.find(&b);
  if (it == workers.end()) it = workers.emplace(&b, Worker(b)).first;
  return wire::decode(it->second.evaluate(b, c, timeout_s));
}

}  // namespace oplab::fuzz
