#pragma once
// The harness's side of the line protocol (docs/protocol.md) with one backend process: start
// it, say hello and check the answer, send a case and check the answer against the case, and
// start a fresh process after a death, a hang or a broken answer. Shared by the --exec
// backends (external/exec_backend.h) and the torchvision peer (peer/torchvision_backend.cpp).
// Not thread-safe: its backend serialises calls.
#include <optional>
#include <string>

#include "core/backend.h"
#include "core/line_child.h"
#include "core/op_desc.h"
#include "external/protocol.h"

namespace oplab {

class ProtocolClient {
 public:
  // `who` prefixes every error ("mine", "torchvision"); `log` is where its stderr goes (empty:
  // oplab's own); timeout_s per case (<= 0: none), hello gets at least hello_timeout_s.
  ProtocolClient(std::string who, LineChildOptions child, double timeout_s, double hello_timeout_s = 30);

  // The first contact: starts the process and checks its hello, once; nullopt when it can run,
  // else one line saying why not (without the backend's name: callers put it first).
  const std::optional<std::string>& unavailable() const;
  // The backend's own reason when it answered hello that it cannot run here (HelloRefused).
  const std::optional<std::string>& refused() const { return refused_; }
  // The checked hello (after a successful unavailable()).
  const std::optional<protocol::Hello>& hello() const { return hello_; }
  // The declaration of `op`, or nullopt when the backend does not declare it.
  std::optional<protocol::OpDecl> decl(const std::string& op) const;

  // Evaluates a validated case: sends it (with "meta": {"grads": [names]} naming the gradients
  // wanted) and returns the checked answer; a case with grad_output for an op that declares no
  // backward is Unsupported. Throws KernelCrash ("WHO: OP: crashed: ..." / "...: hung: ...") when the
  // process died or hung, Unsupported for an unsupported answer, std::runtime_error for a
  // failed one or one that breaks the protocol (then the process is replaced).
  Result evaluate(const Case& c, const ValidParams& vp);

  // One raw request line and its answer line, on the same process (extensions such as the
  // peer's benchmark requests). Throws ChildError.
  std::string raw(const std::string& line, double timeout_s);

  // The log its stderr goes to, as error lines mention it ("; its stderr: PATH"), or "".
  std::string log_note() const;

 private:
  void say_hello() const;  // throws std::runtime_error with what was wrong

  std::string who_;
  double timeout_s_, hello_timeout_s_;
  mutable LineChild child_;
  mutable bool checked_ = false;
  mutable std::optional<std::string> unavailable_;
  mutable std::optional<protocol::Hello> hello_;
  mutable std::optional<std::string> refused_;
};

}  // namespace oplab
