#pragma once
// A backend loaded from a shared library that exports the C ABI of include/oplab/plugin.h.
#include <memory>
#include <string>

#include "core/backend.h"

namespace oplab {

// Loads PATH (dlopen) and returns its backend. A library that cannot be opened, lacks the
// versioned symbol or declares another ABI version throws BackendUnavailable with one line
// naming PATH and what is wrong.
// `role`: what its failures mean (as ExecSpec::role).
std::unique_ptr<Backend> load_plugin_backend(const std::string& path, BackendRole role = BackendRole::Implementation);

}  // namespace oplab
