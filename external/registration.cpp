#include "external/registration.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "core/case_io.h"
#include "external/exec_backend.h"
#include "external/plugin_backend.h"
#include "external/protocol.h"

namespace oplab {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void bad(const std::string& why) { throw std::invalid_argument(why); }

void check_name(const Registry& reg, const std::string& name, const std::string& where) {
  if (name.empty()) bad(where + ": the backend name is empty");
  for (char ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-'))
      bad(where + ": backend name \"" + protocol::excerpt(name, 40) + "\" may use only letters, digits, '.', '_' and '-'");
  if (name == "all") bad(where + ": \"all\" is not a backend name (it means every backend)");
  if (const Backend* b = reg.find(name))
    bad(where + ": backend name \"" + name + "\" is taken by " +
        (b->origin().empty() ? "a built-in backend" : "another external backend (" + b->origin() + ")"));
}

std::string log_path(const ExternalRequest& r, const std::string& name) {
  std::error_code ec;
  if (!r.log_dir.empty()) {
    fs::create_directories(r.log_dir, ec);
    if (!ec || fs::is_directory(r.log_dir)) return (fs::path(r.log_dir) / (name + ".stderr.log")).string();
  }
  return (fs::temp_directory_path(ec) / ("oplab-" + name + "-" + std::to_string(getpid()) + ".stderr.log")).string();
}

void add_exec(Registry& reg, const ExternalRequest& r, const std::string& name, const std::string& command,
              const std::string& cwd, double timeout_s, const std::string& where,
              BackendRole role = BackendRole::Implementation) {
  check_name(reg, name, where);
  if (command.find_first_not_of(" \t") == std::string::npos) bad(where + ": the command of " + name + " is empty");
  ExecSpec s;
  s.name = name;
  s.command = command;
  s.cwd = cwd;
  s.timeout_s = timeout_s;
  s.log = log_path(r, name);
  s.role = role;
  reg.add(make_exec_backend(s));
}

void add_plugin(Registry& reg, const std::string& path, const std::string& where,
                BackendRole role = BackendRole::Implementation) {
  std::unique_ptr<Backend> b;
  try {
    b = load_plugin_backend(path, role);
  } catch (const std::exception& e) {
    bad(where + ": " + e.what());
  }
  check_name(reg, b->name(), where + " (" + path + ")");
  reg.add(std::move(b));
}

// An entry's "role": what its failures mean (docs/protocol.md); a kernel under test by default.
BackendRole role_of(const json& e, const std::string& at) {
  if (!e.contains("role")) return BackendRole::Implementation;
  for (BackendRole r : {BackendRole::Implementation, BackendRole::SeededBug, BackendRole::StudyVariant})
    if (e["role"] == backend_role_name(r)) return r;
  bad(at + ".role must be \"implementation\", \"seeded-bug\" or \"study-variant\"");
}

void add_file(Registry& reg, const ExternalRequest& r, const std::string& path, const std::string& flag) {
  json j;
  try {
    j = read_json_file(path);
  } catch (const FormatError& e) {
    bad(flag + ": " + e.what());
  }
  const std::string where = flag + " " + path;
  if (!j.is_object() || !j.contains("backends") || !j["backends"].is_array())
    bad(where + ": must be {\"backends\": [...]} (docs/protocol.md)");
  for (const auto& [k, v] : j.items())
    if (k != "backends") bad(where + ": unknown field \"" + protocol::excerpt(k, 40) + "\"");
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();
  size_t i = 0;
  for (const json& e : j["backends"]) {
    const std::string at = where + ": backends[" + std::to_string(i++) + "]";
    if (!e.is_object()) bad(at + " must be an object");
    for (const auto& [k, v] : e.items())
      if (k != "name" && k != "exec" && k != "plugin" && k != "timeout" && k != "role")
        bad(at + " has an unknown field \"" + protocol::excerpt(k, 40) + "\" (name, exec, plugin, timeout, role)");
    if (e.contains("exec") == e.contains("plugin")) bad(at + " needs exactly one of \"exec\" and \"plugin\"");
    const BackendRole role = role_of(e, at);
    if (e.contains("exec")) {
      if (!e["exec"].is_string()) bad(at + ".exec must be a string (a shell command)");
      if (!e.contains("name") || !e["name"].is_string()) bad(at + " needs a \"name\" for its exec backend");
      double t = r.timeout_s;
      if (e.contains("timeout")) {
        if (!e["timeout"].is_number() || !(e["timeout"].get<double>() > 0) || e["timeout"].get<double>() > 86400)
          bad(at + ".timeout must be a number of seconds from 0 to 86400");
        t = e["timeout"].get<double>();
      }
      add_exec(reg, r, e["name"].get<std::string>(), e["exec"].get<std::string>(), dir.string(), t, at, role);
    } else {
      if (!e["plugin"].is_string()) bad(at + ".plugin must be a string (a path)");
      if (e.contains("name") || e.contains("timeout"))
        bad(at + ": a plugin names itself and runs in-process (no \"name\" or \"timeout\")");
      fs::path p = e["plugin"].get<std::string>();
      if (p.is_relative()) p = dir / p;
      add_plugin(reg, p.string(), at, role);
    }
  }
}

}  // namespace

void add_external_backends(Registry& reg, const ExternalRequest& r) {
  for (const std::string& arg : r.exec) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos)
      bad("--exec \"" + protocol::excerpt(arg, 60) + "\": expected NAME=COMMAND (e.g. --exec mine='python3 mine.py')");
    add_exec(reg, r, arg.substr(0, eq), arg.substr(eq + 1), "", r.timeout_s, "--exec " + arg.substr(0, eq));
  }
  for (const std::string& path : r.plugin) add_plugin(reg, path, "--plugin");
  if (!r.backends_file.empty()) {
    add_file(reg, r, r.backends_file, "--backends");
  } else if (const char* env = std::getenv("OPLAB_BACKENDS"); env && *env) {
    add_file(reg, r, env, "OPLAB_BACKENDS");
  }
}

}  // namespace oplab
