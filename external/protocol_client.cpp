#include "external/protocol_client.h"

#include <algorithm>
#include <fstream>

#include "core/case_io.h"

namespace oplab {

namespace {

// The most bytes a well-formed answer to `c` can take: its output and gradients at 40 bytes an
// element (a number of 17 digits, exponent and separator; "-inf" and "nan" are shorter), and
// 1 MiB for the rest. A backend writing more is not read further (a multi-gigabyte line would
// otherwise be held in memory whole).
size_t answer_bound(const Case& c, const Shape& output_shape) {
  int64_t elements = shape_numel(output_shape);
  if (c.grad_output)
    for (const std::string& n : grad_inputs(c)) elements += c.in(n).numel();
  return size_t(elements) * 40 + (size_t(1) << 20);
}

// The last line the process wrote to its stderr log (the file's last 8 KiB searched), capped and
// with control characters as spaces: where an interpreter names what stopped it
// ("ModuleNotFoundError: No module named 'numpy'"). "" when there is none.
std::string last_stderr_line(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 8192);
  f.seekg(from);
  std::string tail(size_t(size - from), '\0');
  f.read(tail.data(), std::streamsize(tail.size()));
  size_t end = tail.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t start = tail.find_last_of("\r\n", end);
  std::string line = tail.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
  for (char& ch : line)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

}  // namespace

ProtocolClient::ProtocolClient(std::string who, LineChildOptions child, double timeout_s, double hello_timeout_s)
    : who_(std::move(who)), timeout_s_(timeout_s), hello_timeout_s_(hello_timeout_s), child_(std::move(child)) {}

std::string ProtocolClient::log_note() const {
  const std::string& log = child_.options().stderr_path;
  return log.empty() ? "" : "; its stderr: " + log;
}

void ProtocolClient::say_hello() const {
  std::string reply;
  try {
    reply = child_.request(protocol::hello_line(), timeout_s_ > 0 ? std::max(timeout_s_, hello_timeout_s_) : 0);
  } catch (const ChildError& e) {
    throw std::runtime_error(std::string(e.kind == ChildError::Hung ? "hello: " : "") + e.what());
  }
  try {
    hello_ = protocol::parse_hello(reply);
  } catch (const protocol::HelloRefused& e) {
    child_.kill_now();
    refused_ = e.what();
    throw std::runtime_error(std::string("it cannot run here: ") + e.what());
  } catch (const std::invalid_argument& e) {
    child_.kill_now();
    throw std::runtime_error(e.what());
  }
}

const std::optional<std::string>& ProtocolClient::unavailable() const {
  if (checked_) return unavailable_;
  checked_ = true;
  try {
    say_hello();
  } catch (const std::exception& e) {
    // Callers put the backend's name first; what it ran and the last thing it said follow, so
    // that "cannot start" names the command and, say, the import that failed.
    const LineChildOptions& o = child_.options();
    std::string ran;
    if (o.argv.size() == 3 && o.argv[0] == "/bin/sh" && o.argv[1] == "-c") ran = o.argv[2];
    else
      for (const std::string& a : o.argv) ran += (ran.empty() ? "" : " ") + a;
    const std::string said = refused_ ? "" : last_stderr_line(o.stderr_path);
    unavailable_ = std::string(e.what()) + (ran.empty() ? "" : "; it ran: " + ran) +
                   (said.empty() ? "" : "; its stderr ends: " + said) + log_note();
  }
  return unavailable_;
}

std::optional<protocol::OpDecl> ProtocolClient::decl(const std::string& op) const {
  if (unavailable() || !hello_) return std::nullopt;
  auto it = hello_->ops.find(op);
  if (it == hello_->ops.end()) return std::nullopt;
  return it->second;
}

Result ProtocolClient::evaluate(const Case& c, const ValidParams& vp) {
  if (const auto& why = unavailable()) throw BackendUnavailable(who_ + ": " + *why);
  const std::string what = who_ + ": " + c.op;
  const Case& sent = c;
  const auto d = decl(c.op);
  // The judging layer sends such a backend its cases without grad_output (compare/dtype_case.h);
  // anything else asking it for gradients (eval, the algebraic properties) is told it has none.
  if (d && !d->grads && c.grad_output) throw Unsupported(what + ": declares no backward (\"grads\": false)");
  if (!child_.running()) {
    // A process started afresh after a failure says hello again before it gets a case.
    try {
      say_hello();
    } catch (const std::exception& e) {
      throw std::runtime_error(what + ": the restarted process: " + e.what() + log_note());
    }
  }
  json line = case_to_json(sent);
  if (sent.grad_output) line["meta"] = {{"grads", grad_inputs(sent)}};
  std::string reply;
  try {
    reply = child_.request(line.dump(), timeout_s_, answer_bound(sent, vp.output_shape));
  } catch (const ChildError& e) {
    if (e.kind == ChildError::Hung) throw KernelCrash(what + ": hung: " + e.what() + log_note());
    if (e.kind == ChildError::TooLong) throw std::runtime_error(what + ": broke the protocol: " + e.what() + log_note());
    throw KernelCrash(what + ": crashed: " + e.what() + log_note());
  }
  try {
    return protocol::parse_answer(reply, sent, vp.output_shape);
  } catch (const protocol::ProtocolError& e) {
    child_.kill_now();  // the stream can no longer be trusted: a new process for the next case
    throw std::runtime_error(what + ": broke the protocol: " + e.what() + " (process restarted)" + log_note());
  } catch (const Unsupported& e) {
    throw Unsupported(what + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
}

std::string ProtocolClient::raw(const std::string& line, double timeout_s) {
  if (!child_.running()) say_hello();
  return child_.request(line, timeout_s);
}

}  // namespace oplab
