#include "cli/external_cli.h"

#include <stdexcept>

#include "cli/builtin_backends.h"
#include "fuzz/arg_parse.h"

namespace oplab::cli {

void add_external_options(CLI::App* sub, ExternalArgs& a) {
  sub->add_option("--exec", a.request.exec, "an external backend NAME=COMMAND over the line protocol (repeatable)")
      ->type_name("NAME=COMMAND");
  sub->add_option("--plugin", a.request.plugin, "an external backend in a shared library (repeatable)")->type_name("PATH");
  sub->add_option("--backends", a.request.backends_file, "a JSON file listing external backends (default: $OPLAB_BACKENDS)")
      ->type_name("FILE");
  sub->add_option("--exec-timeout", a.timeout, "seconds an exec backend may take per case (default 10)")
      ->type_name("SECONDS");
}

std::string install_external_backends(const ExternalArgs& a, const std::string& verb, const std::string& log_dir) {
  ExternalRequest r = a.request;
  r.log_dir = log_dir;
  std::string err;
  if (!fuzz::parse_seconds(a.timeout, &r.timeout_s, &err) || !(r.timeout_s > 0))
    return verb + ": --exec-timeout " + (err.empty() ? "must be more than 0 seconds" : err);
  try {
    add_external_backends(builtin_backends(), r);
  } catch (const std::invalid_argument& e) {
    return verb + ": " + e.what();
  }
  return "";
}

}  // namespace oplab::cli
