#pragma once
// A plugin's evaluate runs in oplab's address space: a kernel that writes past its buffers or
// dereferences garbage would take oplab down with it. Here it is called in a forked child
// (its tensors are shared mappings, external/plugin_memory.h, so what it writes is seen here),
// and a crash becomes the plugin's failure of that case, in every verb. A process that is
// already an evaluation child (a campaign's worker or per-case child, core/isolated_process.h)
// calls it directly: a crash there is caught one level up, and a fork per call is not paid.
#include <cstdint>
#include <string>

#include "oplab/plugin.h"

namespace oplab {

struct PluginAnswer {
  int32_t code = 0;     // what evaluate returned (an OPLAB_* code, or not)
  std::string message;  // its message buffer, up to the first NUL
};

// `what` names the plugin in errors ("plugin PATH crashed in its evaluate: ..."). Throws KernelCrash when the call
// died (a signal, an exit), Interrupted when Ctrl-C or kill ended it, std::runtime_error when
// no child could be made.
PluginAnswer call_plugin(const oplab_plugin_v1& api, const oplab_call_v1& call, const std::string& what);

}  // namespace oplab
