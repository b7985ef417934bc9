#pragma once
// Protocol 1 of the line protocol (docs/protocol.md): the messages a backend in a process of
// its own exchanges with the harness, one JSON object per line, and the checks of what it
// answers. Every check failure is one line saying what was wrong (the caller prefixes the
// backend's name).
#include <map>
#include <string>

#include "core/backend.h"
#include "core/case.h"
#include "core/op_desc.h"

namespace oplab::protocol {

inline constexpr int kVersion = 1;

// What a backend declares for one op: the type it computes in, and whether it evaluates the
// backward (false: it is sent cases without grad_output).
struct OpDecl {
  DType dtype = DType::Float32;
  // The type its sums are accumulated in (SPEC §15; `"accumulation"` in the hello, per op or
  // top level): by default float32 for float16 and bfloat16, the dtype itself otherwise.
  DType accumulation = DType::Float32;
  bool grads = true;
};

// The backend's answer to hello.
struct Hello {
  std::string name, description;
  DType dtype = DType::Float32;  // the default of its ops
  std::map<std::string, OpDecl> ops;
  std::map<std::string, std::string> versions;  // optional, informational: {"torch": "1.13.1", ...}
};

// A backend may answer hello with {"error": "one line", "kind": "unavailable"}: it cannot run
// on this machine (a library it needs is missing). parse_hello throws this, with its line.
struct HelloRefused : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The harness's hello line: {"oplab": VERSION, "protocol": 1}.
std::string hello_line();

// Parses and checks the answer to hello; throws std::invalid_argument with what was wrong:
// not JSON, another protocol, no name, an unknown dtype, an unknown op, a misspelt field.
Hello parse_hello(const std::string& line);

// The answer line to a case, checked against the case that was sent (the one without
// grad_output when the op declares no backward) and its output shape. A result becomes the
// Result; an error throws Unsupported (kind "unsupported") or std::runtime_error ("failed",
// and "invalid", since the harness sends only valid cases); an answer that breaks the protocol
// throws ProtocolError (the stream is no longer trusted: the caller restarts the process).
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
Result parse_answer(const std::string& line, const Case& sent, const Shape& output_shape);

// The first `n` characters of a line, printable, for error messages.
std::string excerpt(const std::string& line, size_t n = 80);

}  // namespace oplab::protocol
