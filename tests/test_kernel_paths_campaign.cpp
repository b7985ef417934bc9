// Every kernel path of every Halide backend that runs here is reached by the main job's
// default campaign (`oplab campaign --cases 300 --seed 1`, scripts/main.sh), restricted to the
// Halide backends (cases are drawn from the seed, the op and the index alone, so they are the
// main job's cases): a path no case reaches is an untested branch of a fast kernel (a kernel
// chosen by size, a specialisation, a block of channels past the first), and this test names
// it. The counts come from the campaign's records (Backend::kernel_paths), printed here.
#include <gtest/gtest.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "fuzz/campaign_records.h"
#include "tests/cli_fixture.h"
#include "tests/halide_backends.h"

namespace oplab {
namespace {

using json = nlohmann::json;
using testing_cli::CliFixture;

class KernelPathsCampaign : public CliFixture {};

TEST_F(KernelPathsCampaign, TheDefaultCampaignReachesEveryPathOfEveryHalideBackend) {
  std::string backends;
  for (Backend* b : runnable_halide_backends("paths")) backends += " --backend " + b->name();
  for (Backend* b : runnable_halide_f16_backends("paths")) backends += " --backend " + b->name();
  ASSERT_FALSE(backends.empty()) << "no Halide backend can run here";
  const auto r = run("campaign --cases 300 --seed 1" + backends + " --out " + path("campaign"));
  ASSERT_EQ(r.code, 0) << r.out.substr(r.out.size() > 4000 ? r.out.size() - 4000 : 0) << r.err;
  const json records = json::parse(testing_cli::slurp(path("campaign/summary.json"))).at("records");
  int64_t paths = 0;
  for (const json& rec : records) {
    if (!rec.contains("kernel_paths")) continue;
    std::cout << "[paths] " << rec["backend"].get<std::string>() << " " << rec["op"].get<std::string>() << ":";
    for (const auto& [path, n] : rec["kernel_paths"].items()) std::cout << " " << n << " " << path << ";";
    std::cout << "\n";
    paths += int64_t(rec["kernel_paths"].size());
  }
  // Every Halide op names its paths: 9 ops on each float32 backend, 1 on each float16 one.
  EXPECT_GE(paths, 9 * int64_t(runnable_halide_backends().size()) + int64_t(runnable_halide_f16_backends().size()));
  const std::vector<std::string> unreached = fuzz::unreached_kernel_paths(records);
  for (const std::string& u : unreached) ADD_FAILURE() << "no case of the default campaign reached " << u;
}

}  // namespace
}  // namespace oplab
