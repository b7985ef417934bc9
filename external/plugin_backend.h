#pragma once
// A backend loaded from a shared library that exports the C ABI of include/oplab/plugin.h.
#include <memory>
#include <string>

#include "core/backend.h"

struct oplab_plugin_v1;

namespace oplab {

// Loads PATH (dlopen) and returns its backend. A library that cannot be opened, lacks the
// versioned symbol or declares another ABI version throws BackendUnavailable with one line
// naming PATH and what is wrong.
// `role`: what its failures mean (as ExecSpec::role).
std::unique_ptr<Backend> load_plugin_backend(const std::string& path, BackendRole role = BackendRole::Implementation);

// The backend of a plugin declaration built into this binary (the seeded cheaters of variants/:
// their kernels are called through the ABI exactly as a loaded plugin's, with its checks); it
// has no origin to register again. `path` names it in messages. Throws BackendUnavailable as
// above.
std::unique_ptr<Backend> plugin_backend_from_api(const oplab_plugin_v1* api, const std::string& path,
                                                 BackendRole role = BackendRole::Implementation);

}  // namespace oplab
