// `oplab eval CASE.json --backend NAME [--out RESULT.json]`
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/external_cli.h"
#include "cli/names.h"
#include "core/case_io.h"

namespace oplab::cli {

namespace {

int run_eval(const std::string& case_path, const std::string& backend_name, const std::string& out_path) {
  Backend* backend = builtin_backends().find(backend_name);
  if (!backend) {
    std::cerr << unknown_name("eval", "backend", backend_name, backend_names()) << '\n';
    return kUsage;
  }
  Case c;
  try {
    c = case_from_json(read_json_file(case_path));
  } catch (const FormatError& e) {
    std::cerr << e.what() << '\n';
    return kBadFile;
  }
  Result r;
  try {
    r = evaluate(*backend, c);
  } catch (const InvalidCase& e) {
    std::cerr << e.what() << '\n';
    return kInvalidCase;
  } catch (const Unsupported& e) {
    std::cerr << e.what() << '\n';
    return kUnsupported;
  } catch (const BackendUnavailable& e) {
    std::cerr << e.what() << '\n';
    return kUnavailable;
  } catch (const std::exception& e) {
    std::cerr << backend_name << ": " << c.op << ": " << e.what() << '\n';
    return kFailed;
  }
  const json j = result_to_json(r);
  if (out_path.empty()) {
    std::cout << j.dump() << '\n';
  } else {
    try {
      write_json_file_atomic(out_path, j);
    } catch (const std::exception& e) {
      std::cerr << e.what() << '\n';
      return kFailed;
    }
  }
  return kOk;
}

}  // namespace

static void add_eval(CLI::App& app) {
  auto* sub = app.add_subcommand("eval", "evaluate one case file on one backend (forward, and backward with grad_output)");
  auto case_path = std::make_shared<std::string>();
  auto backend = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  sub->add_option("case", *case_path, "case JSON file (SPEC §1)")->required();
  sub->add_option("--backend,-b", *backend, "backend name (oplab backends)")->required();
  sub->add_option("--out,-o", *out, "write the result JSON here instead of stdout");
  auto ext = std::make_shared<ExternalArgs>();
  add_external_options(sub, *ext);
  sub->callback([=] {
    if (const std::string bad = install_external_backends(*ext, "eval", ""); !bad.empty()) {
      std::cerr << bad << '\n';
      set_exit_code(kUsage);
      return;
    }
    set_exit_code(run_eval(*case_path, *backend, *out));
  });
}

static const CommandRegistrar registrar(10, add_eval);

}  // namespace oplab::cli
