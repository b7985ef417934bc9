// The CUDA kernels as the build checked them (halide/ptx_check/): per kernel, what ptxas says
// each thread uses (registers, spills, stack) and whether its scatter is a native atomic add.
// This is what can be known of the CUDA code without a GPU; whether its algorithm and schedule
// are right is in the accuracy section (halide-opencl runs the same GPU schedules).
#include <algorithm>

#include "notebooks-cpp/page.h"
#include "reports/sections.h"

namespace oplab::report {

json cuda_kernels_section(const json& kernels, const std::string& pages) {
  nb::Page page(pages, "cuda-kernels", "CUDA kernels (checked at build time)",
                "Does every CUDA kernel assemble for a real GPU, what does a thread of it use, and do its scatters "
                "use native float atomics?");
  std::vector<std::vector<std::string>> rows;
  int assembled = 0, scatters = 0, native = 0, cas = 0, max_regs = 0;
  int64_t spills = 0, max_stack = 0;
  std::string widest, arch;
  for (const json& k : kernels) {
    const json& entries = member(k, "entries");
    int regs = 0;
    int64_t spill = 0, stack = 0;
    for (const auto& [name, e] : entries.items()) {
      regs = std::max(regs, e.value("registers", 0));
      spill += e.value("spill_store_bytes", int64_t(0)) + e.value("spill_load_bytes", int64_t(0));
      stack = std::max(stack, e.value("stack_frame_bytes", int64_t(0)));
    }
    const bool has_ptxas = k.contains("ptxas_arch");
    if (has_ptxas) ++assembled, arch = k["ptxas_arch"].get<std::string>();
    const bool add = k.value("native_float_atomic_add", false), loop = k.value("cas_loop", false);
    if (add || loop) ++scatters;
    native += add && !loop;
    cas += loop;
    if (regs > max_regs) max_regs = regs, widest = k.value("kernel", "");
    spills += spill;
    max_stack = std::max(max_stack, stack);
    rows.push_back({k.value("kernel", "?"), std::to_string(entries.size()), has_ptxas ? std::to_string(regs) : "-",
                    has_ptxas ? std::to_string(spill) : "-", has_ptxas ? std::to_string(stack) : "-",
                    loop ? "CAS loop" : add ? "atom.global.add.f32" : "none"});
  }
  std::string answer = std::to_string(kernels.size()) + " CUDA kernels; ";
  if (assembled > 0)
    answer += std::to_string(assembled) + " assembled by ptxas for " + arch + ": at most " + std::to_string(max_regs) +
              " registers a thread (" + widest + "), " + std::to_string(spills) + " bytes of spills, at most " +
              std::to_string(max_stack) + " bytes of stack; ";
  else
    answer += "ptxas was not found, so none was assembled; ";
  answer += std::to_string(native) + " of " + std::to_string(scatters) + " scattering kernels use native float atomic adds" +
            (cas ? ", " + std::to_string(cas) + " a compare-and-swap loop." : ", none a compare-and-swap loop.");
  page.answer(answer);
  page.text("Each kernel is a Halide pipeline compiled to PTX for sm_70 and above; the build takes the PTX out of the "
            "object and, where ptxas is installed, assembles it for the GPU named (so PTX the driver would reject "
            "fails the build). An entry is one GPU kernel launch of the pipeline; registers and stack are the most "
            "any entry uses, spills are summed. Local memory (stack) in a kernel that should need none usually "
            "means a Func computed over more points per thread than it uses.");
  page.table({"kernel", "entries", "registers", "spill bytes", "stack bytes", "scatter"}, rows);
  page.number("kernels", double(kernels.size()));
  page.number("spill_bytes", double(spills));
  page.write();
  return json{{"name", "cuda-kernels"}, {"kernels", kernels.size()}};
}

}  // namespace oplab::report
