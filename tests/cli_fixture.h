#pragma once
// A test fixture that runs the oplab program (OPLAB_CLI, set by tests/CMakeLists.txt) in a
// scratch directory of its own, capturing exit code, stdout and stderr. Shared by the tests of
// every CLI verb.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace oplab::testing_cli {

namespace fs = std::filesystem;

struct CliRun {
  int code;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class CliFixture : public ::testing::Test {
 protected:
  // `verb_prefix` is put before the arguments of every run() ("gradcheck ", or empty).
  explicit CliFixture(std::string verb_prefix = "") : prefix_(std::move(verb_prefix)) {}

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("oplab_" + std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `oplab <prefix><args>` with no stdin (so no terminal progress line).
  CliRun run(const std::string& args) {
    const std::string cmd = std::string(OPLAB_CLI) + " " + prefix_ + args + " >" + (dir_ / "stdout").string() +
                            " 2>" + (dir_ / "stderr").string() + " </dev/null";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "stdout"), slurp(dir_ / "stderr")};
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return path(name);
  }

  std::string prefix_;
  fs::path dir_;
};

}  // namespace oplab::testing_cli
