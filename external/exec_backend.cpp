#include "external/exec_backend.h"

#include <mutex>
#include <optional>

#include "external/protocol.h"
#include "external/protocol_client.h"

namespace oplab {

namespace {

// `/bin/sh -c COMMAND` in its own process group: Ctrl-C at the terminal stops oplab, which then
// closes the backend's stdin, rather than killing the backend mid-case (a false crash).
LineChildOptions child_options(const ExecSpec& s) {
  LineChildOptions o;
  o.argv = {"/bin/sh", "-c", s.command};
  o.cwd = s.cwd;
  o.stderr_path = s.log;
  o.own_process_group = true;
  return o;
}

class ExecBackend : public Backend {
 public:
  explicit ExecBackend(ExecSpec s) : spec_(std::move(s)), client_(spec_.name, child_options(spec_), spec_.timeout_s) {}

  std::string name() const override { return spec_.name; }
  std::string origin() const override { return "exec: " + spec_.command; }
  BackendRole role() const override { return spec_.role; }
  bool out_of_process() const override { return true; }  // a process of its own already

  std::string description() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string d = "external (line protocol 1): " + spec_.command;
    if (!client_.unavailable() && client_.hello()) {
      d += " -- \"" + client_.hello()->name + "\"";
      if (!client_.hello()->description.empty()) d += ": " + client_.hello()->description;
    }
    return d;
  }

  std::optional<std::string> unavailable_reason() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return client_.unavailable();
  }

  std::optional<std::string> unsupported_reason(const Case& c) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (client_.unavailable()) return std::nullopt;  // run() reports it
    if (!client_.decl(c.op)) return spec_.name + " does not declare op " + c.op;
    return std::nullopt;
  }

  DType dtype(const std::string& op) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto d = client_.decl(op)) return d->dtype;
    return client_.hello() ? client_.hello()->dtype : DType::Float64;
  }

  DType accumulation(const std::string& op) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto d = client_.decl(op)) return d->accumulation;
    return default_accumulation(client_.hello() ? client_.hello()->dtype : DType::Float64);
  }

  bool computes_grads(const std::string& op) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto d = client_.decl(op);
    return !d || d->grads;
  }

  Result run(const Case& c, const ValidParams& vp) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Result r = client_.evaluate(c, vp);
    r.backend = spec_.name;
    return r;
  }

 private:
  ExecSpec spec_;
  mutable std::mutex mutex_;  // one process, one conversation at a time
  mutable ProtocolClient client_;
};

}  // namespace

std::unique_ptr<Backend> make_exec_backend(const ExecSpec& spec) { return std::make_unique<ExecBackend>(spec); }

}  // namespace oplab
