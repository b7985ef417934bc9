// The regression corpus: every bug the fuzz campaigns found stays in tests/regression/ as
// its shrunk failure record, with a "caught" line saying what it caught. Each record must
// still fail on the backend it was found on (while that backend exists: the seeded-bug
// variants do) and pass on every correct backend that can run it (ref, torchvision).
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/builtin_backends.h"
#include "core/case_io.h"
#include "fuzz/replay.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpus() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(OPLAB_SOURCE_DIR) / "tests" / "regression"))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(FuzzRegression, CorpusIsThere) { EXPECT_GE(corpus().size(), 5u); }

TEST(FuzzRegression, EveryRecordStillCatchesItsBugAndPassesOnCorrectBackends) {
  for (const std::string& file : corpus()) {
    SCOPED_TRACE(file);
    const json record = read_json_file(file);
    ASSERT_EQ(record.value("kind", std::string()), "oplab-fuzz-failure");
    const std::string caught = record.value("caught", std::string());
    EXPECT_FALSE(caught.empty()) << "each file states what it caught";
    std::cout << "[regression] " << fs::path(file).filename().string() << ": " << caught << "\n";

    fuzz::ReplayOptions o;
    o.file = file;
    const std::string found_on = record.at("backend").get<std::string>();
    if (builtin_backends().find(found_on)) {
      const fuzz::ReplayOutcome r = fuzz::replay_file(o, builtin_backends());
      EXPECT_TRUE(r.still_fails) << found_on << " no longer fails this case";
    }
    for (const char* good : {"ref", "torchvision"}) {
      Backend* b = builtin_backends().find(good);
      if (!b || b->unavailable_reason()) continue;
      o.backends = {good};
      const fuzz::ReplayOutcome r = fuzz::replay_file(o, builtin_backends());
      for (const auto& c : r.checks) EXPECT_FALSE(c.result.failed()) << good << ": " << c.property << ": " << c.result.detail;
    }
  }
}

}  // namespace
}  // namespace oplab
