// `oplab repro NAME|RECORD [--backend B] [--out FILE]`, `oplab repro --all DIR`, `oplab repro --list`
// Writes a standalone reproduction (core/repro.h): a short script in the peer's own terms that
// shows a named divergence (on its smallest case, Divergence::example) or a failure record's
// disagreement without oplab, the reference's values written into it. The judge checks the
// claim first; nothing is written when the case no longer shows it.
// Exit: 0 written; 1 the case no longer shows it (or a write failed); 2 bad command line or
// unknown name; 3 the backend is no library a script can call (our kernels, variants,
// external backends); 4 the backend cannot run here; 5 the file is not a failure record.
#include <sys/stat.h>

#include <filesystem>
#include <iostream>
#include <variant>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/names.h"
#include "core/case_io.h"
#include "reference/ref_backend.h"
#include "repro/repro_request.h"

namespace oplab::cli {

namespace {

struct Args {
  std::string target, backend, out, all_dir;
  bool list = false;
};

int usage_error(const std::string& line) {
  std::cerr << line << '\n';
  return kUsage;
}

struct Named {
  Backend* backend;
  const Divergence* divergence;
};

// Every named divergence once, on the first backend (in `oplab backends` order) that states
// it: torch's float32 kernels share the float64 peer's list, and so on.
std::vector<Named> every_divergence() {
  std::vector<Named> all;
  for (Backend* b : builtin_backends().all())
    for (const Divergence& d : b->divergences()) {
      bool seen = false;
      for (const Named& n : all) seen |= n.divergence->name == d.name;
      if (!seen) all.push_back({b, &d});
    }
  return all;
}

std::vector<std::string> divergence_names() {
  std::vector<std::string> names;
  for (const Named& n : every_divergence()) names.push_back(n.divergence->name);
  return names;
}

std::string op_of(const Divergence& d) {
  if (d.example.empty()) return "?";
  return json::parse(d.example).value("op", std::string("?"));
}

// Writes `s` to `path` (atomically, executable), or to stdout when path is empty.
int emit(const ReproScript& s, const std::string& path) {
  if (path.empty()) {
    std::cout << s.text;
    return kOk;
  }
  try {
    write_text_file_atomic(path, s.text);
  } catch (const std::exception& e) {
    std::cerr << "repro: " << e.what() << '\n';
    return kFailed;
  }
  ::chmod(path.c_str(), 0755);
  std::cerr << "wrote " << path << ": run it with `" << s.interpreter << " " << path << "`\n";
  return kOk;
}

// The request built and the script written by the backend: the script, or the exit code of
// the contract (with its one line on stderr).
std::variant<ReproScript, int> make(Backend& b, const std::function<ReproRequest(Backend&)>& request) {
  if (!b.writes_repro()) {
    std::cerr << "repro: " << b.name() << " is no library a standalone script can call; replay its case with `oplab replay`\n";
    return kUnsupported;
  }
  if (auto why = b.unavailable_reason()) {
    std::cerr << "repro: backend " << b.name() << " cannot run here: " << *why << '\n';
    return kUnavailable;
  }
  try {
    std::optional<ReproScript> s = b.repro_script(request(b));
    if (s) return *s;
    std::cerr << "repro: " << b.name() << " wrote no script for this case\n";
    return kUnsupported;
  } catch (const ReproNotShown& e) {
    std::cerr << e.what() << '\n';
    return kFailed;
  } catch (const BackendUnavailable& e) {
    std::cerr << "repro: " << e.what() << '\n';
    return kUnavailable;
  } catch (const std::exception& e) {
    std::cerr << "repro: " << b.name() << ": " << e.what() << '\n';
    return kFailed;
  }
}

int write(Backend& b, const std::function<ReproRequest(Backend&)>& request, const std::string& path) {
  auto made = make(b, request);
  return std::holds_alternative<int>(made) ? std::get<int>(made) : emit(std::get<ReproScript>(made), path);
}

int run_list() {
  for (const Named& n : every_divergence())
    std::cout << n.divergence->name << "  " << n.backend->name() << "  " << op_of(*n.divergence) << '\n';
  return kOk;
}

// Every divergence's script into DIR (NAME.py / NAME.js); the worst exit of them.
int run_all(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return usage_error("repro: --all " + echo_name(dir) + " is not a folder");
  auto ref = make_ref_backend();
  int worst = kOk;
  for (const Named& n : every_divergence()) {
    auto made = make(*n.backend, [&](Backend& b) {
      return divergence_repro(*ref, b, *n.divergence, "oplab repro " + n.divergence->name);
    });
    const int code = std::holds_alternative<int>(made)
                         ? std::get<int>(made)
                         : emit(std::get<ReproScript>(made),
                                (std::filesystem::path(dir) / (n.divergence->name + std::get<ReproScript>(made).extension)).string());
    worst = std::max(worst, code);
  }
  return worst;
}

int run(const Args& a, const std::vector<std::string>& extras) {
  if (!extras.empty()) return usage_error("repro: unexpected argument \"" + echo_name(extras[0]) + "\" (see oplab repro --help)");
  if (a.list) return a.target.empty() && a.all_dir.empty() ? run_list() : usage_error("repro: --list takes no other argument");
  if (!a.all_dir.empty()) return a.target.empty() ? run_all(a.all_dir) : usage_error("repro: --all takes no divergence or record");
  if (a.target.empty()) return usage_error("repro: give a divergence name (oplab repro --list) or a failure record");
  const std::vector<std::string> backends = backend_names();
  if (!a.backend.empty() && std::find(backends.begin(), backends.end(), a.backend) == backends.end())
    return usage_error(unknown_name("repro", "backend", a.backend, backends));
  auto ref = make_ref_backend();
  std::error_code ec;
  if (std::filesystem::exists(a.target, ec)) {
    json record;
    try {
      record = read_json_file(a.target);
    } catch (const FormatError& e) {
      std::cerr << e.what() << '\n';
      return kBadFile;
    }
    if (!record.is_object() || record.value("kind", std::string()) != "oplab-fuzz-failure" || !record.contains("case") ||
        !record.contains("backend") || !record["backend"].is_string()) {
      std::cerr << "repro: " << echo_name(a.target) << " is not a failure record (DIR/failures/ID.json of oplab fuzz or campaign)\n";
      return kBadFile;
    }
    const std::string name = a.backend.empty() ? record["backend"].get<std::string>() : a.backend;
    Backend* b = builtin_backends().find(name);
    if (!b) return usage_error(unknown_name("repro", "backend", name, backends) + " (named by the failure record)");
    Case c;
    try {
      c = case_from_json(record["case"]);
    } catch (const std::exception& e) {
      std::cerr << "repro: " << echo_name(a.target) << ": its case: " << e.what() << '\n';
      return kBadFile;
    }
    const std::string id = record.value("id", std::filesystem::path(a.target).stem().string());
    const std::string file = std::filesystem::path(a.target).filename().string();
    return write(*b, [&](Backend& on) { return failure_repro(*ref, on, c, id, record.value("detail", std::string()), "oplab repro " + file); },
                 a.out);
  }
  for (const Named& n : every_divergence()) {
    if (n.divergence->name != a.target) continue;
    Backend* b = n.backend;
    if (!a.backend.empty()) {
      b = builtin_backends().find(a.backend);
      bool states = false;
      for (const Divergence& d : b->divergences()) states |= d.name == a.target;
      if (!states) return usage_error("repro: backend " + a.backend + " does not state the divergence " + a.target);
    }
    return write(*b, [&](Backend& on) { return divergence_repro(*ref, on, *n.divergence, "oplab repro " + a.target); }, a.out);
  }
  return usage_error(unknown_name("repro", "divergence or record file", a.target, divergence_names()));
}

}  // namespace

static void add_repro(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "repro", "write a standalone script (Python or Node) that shows a named divergence or a failure record without oplab");
  sub->allow_extras();
  sub->add_option("target", a->target, "a divergence name (see --list) or a failure record (DIR/failures/ID.json)");
  sub->add_option("--backend,-b", a->backend, "the backend to show it on (default: the first that states it, or the record's)");
  sub->add_option("--out,-o", a->out, "write the script here (default: stdout)");
  sub->add_option("--all", a->all_dir, "write every divergence's script into this folder (NAME.py, NAME.js)")->type_name("DIR");
  sub->add_flag("--list", a->list, "list every named divergence: name, backend, op");
  sub->callback([a, sub] { set_exit_code(run(*a, sub->remaining())); });
}

static const CommandRegistrar registrar(42, add_repro);

}  // namespace oplab::cli
