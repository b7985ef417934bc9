// Hostile input ends cleanly (issue 15, item 7; docs/semantics.md, "Resource policy and hostile
// input"). Every case of the corpus in tests/hostile/ (README.md there says how each was made),
// and the large ones made below, must end on every backend that can run here with one clean
// error: FormatError (not a case: bad JSON, nesting, duplicate keys, a number out of range) or
// InvalidCase (a rule of SPEC §7, an integer that would overflow, the resource policy), with a
// one-line message under 300 characters, within seconds, without a huge allocation. Each
// evaluation runs in a child process of its own (a crash or a hang then fails the test instead
// of ending the suite), once in-process through evaluate() and once through `oplab eval`.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "cli/builtin_backends.h"
#include "core/case_io.h"
#include "core/limits.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(OPLAB_SOURCE_DIR) / "tests" / "hostile";

// How long one evaluation may take (a clean refusal takes milliseconds; parsing a 10 MB case
// well under a second). OPLAB_HOSTILE_TIMEOUT overrides it (seconds).
double timeout_s() {
  const char* v = std::getenv("OPLAB_HOSTILE_TIMEOUT");
  return v ? std::atof(v) : 30.0;
}
constexpr size_t kMaxMessage = 300;
constexpr long kMaxRssKb = 1L << 20;          // 1 GiB: no huge allocation
constexpr rlim_t kAddressSpace = 8ull << 30;  // a child that asks for more fails instead of swapping the machine

// ---- the cases ----

// Format: not a case; Invalid: a broken rule or the resource policy; Answer: a valid case at
// the extremes (coordinates of 1e308, NaN, infinities) that every backend answers, or declines,
// at once and within bounded memory.
enum class Want { Format, Invalid, Answer };
const char* want_name(Want w) { return w == Want::Format ? "FormatError" : w == Want::Invalid ? "InvalidCase" : "ok"; }

struct Hostile {
  std::string name;
  Want want;
  // Large cases are written by the test (generate) rather than kept in the corpus.
  std::function<void(const fs::path&)> generate;
  bool every_backend = true;  // false: ref and halide-cpu only (the large generated cases)
};
void PrintTo(const Hostile& h, std::ostream* os) { *os << h.name; }

// The oplab program the CLI checks run: OPLAB_HOSTILE_CLI overrides the one built with the
// tests (to show that a check fails on an older build).
std::string cli_path() {
  const char* v = std::getenv("OPLAB_HOSTILE_CLI");
  return v && *v ? v : OPLAB_CLI;
}

// The expectation for each corpus file. A file without an entry fails CorpusIsListed.
const std::map<std::string, Want>& corpus_table() {
  static const std::map<std::string, Want> t = {
      {"number_1e400_data", Want::Format},
      {"number_1e400_param", Want::Format},
      {"duplicate_key_op", Want::Format},
      {"duplicate_key_param", Want::Format},
      {"duplicate_key_tensor", Want::Format},
      {"newline_in_param_key", Want::Invalid},
      {"roi_pool_scale_1e308", Want::Invalid},
      {"roi_pool_coords_1e308", Want::Invalid},
      {"ps_roi_pool_coords_1e308", Want::Invalid},
      {"roi_align_adaptive_scale_1e308", Want::Invalid},
      {"roi_align_adaptive_coords_1e308", Want::Invalid},
      {"deform_roi_pool_adaptive_scale_1e308", Want::Invalid},
      {"ps_roi_align_adaptive_coords_1e308", Want::Invalid},
      {"roi_align_sampling_ratio_1e9", Want::Invalid},
      {"ps_roi_align_sampling_ratio_1e9", Want::Invalid},
      {"roi_align_sampling_ratio_5000", Want::Invalid},
      {"roi_align_sampling_ratio_uint64", Want::Invalid},
      {"deform_conv2d_dilation_2e62", Want::Invalid},
      {"deform_conv2d_kernel_2e32", Want::Invalid},
      {"deform_conv2d_padding_3e9", Want::Invalid},
      {"deform_conv2d_zero_channels", Want::Invalid},
      {"interpolate_size_1e4", Want::Invalid},
      {"interpolate_scale_factor_1e4", Want::Invalid},
      {"interpolate_n0_size_2e40", Want::Invalid},
      {"interpolate_input_0x1x2e32x2e32", Want::Invalid},
      {"interpolate_1d_size_2e30", Want::Invalid},
      {"interpolate_antialias_scale_1em300", Want::Invalid},
      {"interpolate_antialias_size_2e30", Want::Invalid},
      {"grid_sample_input_0x1x2e32x2e32", Want::Invalid},
      {"grid_sample_5d_grid_2e31", Want::Invalid},
      {"grid_sample_grid_1e308_reflection", Want::Answer},
      {"grid_sample_grid_nonfinite", Want::Answer},
      {"ms_deform_attn_level_2e32_by_0", Want::Invalid},
      {"ms_deform_attn_queries_2e31", Want::Format},
      {"ms_deform_attn_locations_1e308", Want::Answer},
      {"ms_deform_attn_locations_nonfinite", Want::Answer},
  };
  return t;
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A small valid roi_pool case with one hole: `fill(params, data_element, extra_field)`.
std::string roi_pool_case(const std::string& extra_param, const std::string& last_value, const std::string& extra_input = "",
                          const std::string& extra_field = "") {
  return "{\"op\":\"roi_pool\",\"params\":{\"output_size\":[2,2],\"spatial_scale\":1.0" + extra_param +
         "},\"inputs\":{\"input\":{\"shape\":[1,1,2,2],\"data\":[1,2,3," + last_value +
         "]},\"rois\":{\"shape\":[1,5],\"data\":[0,0,0,1,1]}" + extra_input + "}" + extra_field + "}";
}

std::string nested_arrays(size_t depth, const std::string& inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

constexpr size_t kDeep = 1000000;       // the fuzz found 70 000; deeper also overflows a large stack
constexpr size_t kLong = 10 * 1000000;  // a 10 MB name

std::vector<Hostile> generated_cases() {
  return {
      {"deep_data_element", Want::Format, [](const fs::path& p) { write_text(p, roi_pool_case("", nested_arrays(kDeep, "4"))); }},
      {"deep_param", Want::Format,
       [](const fs::path& p) {
         std::string text = roi_pool_case("", "4");
         text.replace(text.find("[2,2]"), 5, nested_arrays(kDeep, "2"));
         write_text(p, text);
       }},
      {"deep_unknown_param", Want::Format, [](const fs::path& p) { write_text(p, roi_pool_case(",\"junk\":" + nested_arrays(kDeep), "4")); }},
      {"long_op_name_without_inputs", Want::Format,
       [](const fs::path& p) { write_text(p, "{\"op\":\"" + std::string(kLong, 'x') + "\",\"params\":{}}"); }, false},
      {"long_case_field", Want::Format,
       [](const fs::path& p) { write_text(p, roi_pool_case("", "4", "", ",\"" + std::string(kLong, 'f') + "\":1")); }, false},
      {"long_string_data_element", Want::Format,
       [](const fs::path& p) { write_text(p, roi_pool_case("", "\"" + std::string(kLong, 'z') + "\"")); }, false},
      {"long_param_key", Want::Invalid,
       [](const fs::path& p) { write_text(p, roi_pool_case(",\"" + std::string(kLong, 'k') + "\":1", "4")); }, false},
      {"long_input_name", Want::Invalid,
       [](const fs::path& p) {
         write_text(p, roi_pool_case("", "4", ",\"" + std::string(kLong, 'i') + "\":{\"shape\":[1],\"data\":[0]}"));
       },
       false},
      {"long_mode_value", Want::Invalid,
       [](const fs::path& p) {
         write_text(p, "{\"op\":\"interpolate\",\"params\":{\"mode\":\"" + std::string(kLong, 'm') +
                           "\",\"size\":[2]},\"inputs\":{\"input\":{\"shape\":[1,1,2],\"data\":[1,2]}}}");
       },
       false},
      {"long_shape_rank", Want::Invalid,
       [](const fs::path& p) {
         std::string shape = "1";
         for (int i = 1; i < 100000; ++i) shape += ",1";
         write_text(p, "{\"op\":\"roi_pool\",\"params\":{\"output_size\":[2,2]},\"inputs\":{\"input\":{\"shape\":[" + shape +
                           "],\"data\":[1]},\"rois\":{\"shape\":[1,5],\"data\":[0,0,0,1,1]}}}");
       }},
      {"directory_as_case", Want::Format, [](const fs::path& p) { fs::create_directories(p); }},
  };
}

std::vector<Hostile> all_cases() {
  std::vector<Hostile> v;
  for (const auto& [name, want] : corpus_table()) v.push_back({name, want, nullptr, true});
  for (auto& h : generated_cases()) v.push_back(std::move(h));
  return v;
}

// ---- running in a child ----

struct Outcome {
  bool timed_out = false;
  bool exited = false;  // exited normally (not by a signal)
  int code = -1;        // exit code, or the signal
  double seconds = 0;
  long maxrss_kb = 0;
  std::string out;  // what the child reported (in-process) or printed on stdout (CLI)
  std::string err;  // stderr (CLI)
};

void limit_child() {
  setpgid(0, 0);
#if !defined(__SANITIZE_ADDRESS__)
  // Under ASan the address space is its shadow memory's: a cap makes every child fail to start.
  // The peak-memory check (maxrss) still holds there.
  struct rlimit rl{kAddressSpace, kAddressSpace};
  setrlimit(RLIMIT_AS, &rl);
#endif
}

// Waits for child `pid` up to `limit_s` (default: the timeout), draining `fd` (when >= 0) into
// `sink` meanwhile.
Outcome wait_child(pid_t pid, int fd, std::string* sink, double limit_s = 0) {
  if (limit_s <= 0) limit_s = timeout_s();
  Outcome o;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int status = 0;
  struct rusage ru{};
  for (;;) {
    if (fd >= 0) {
      struct pollfd pfd{fd, POLLIN, 0};
      if (poll(&pfd, 1, 20) > 0) {
        char buf[65536];
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
          if (sink->size() < (64u << 20)) sink->append(buf, size_t(n));
          continue;
        }
        if (n == 0) {
          close(fd);
          fd = -1;
        }
      }
    } else {
      usleep(10000);
    }
    const pid_t w = wait4(pid, &status, WNOHANG, &ru);
    if (w == pid) break;
    if (elapsed() > limit_s) {
      o.timed_out = true;
      kill(-pid, SIGKILL);  // the child's own process group (a peer bridge it started goes too)
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &ru);
      break;
    }
  }
  if (fd >= 0) {
    char buf[65536];
    ssize_t n;
    fcntl(fd, F_SETFL, O_NONBLOCK);
    while ((n = read(fd, buf, sizeof buf)) > 0)
      if (sink->size() < (64u << 20)) sink->append(buf, size_t(n));
    close(fd);
  }
  o.seconds = elapsed();
  o.maxrss_kb = ru.ru_maxrss;
  o.exited = WIFEXITED(status);
  o.code = o.exited ? WEXITSTATUS(status) : WIFSIGNALED(status) ? WTERMSIG(status) : -1;
  return o;
}

// Reads the case file, builds the case and evaluates it on `backend`, in a child; the child
// reports "<kind>\n<message>" (kind: ok, FormatError, InvalidCase, Unsupported,
// BackendUnavailable, or the exception's type for anything else).
Outcome evaluate_in_child(const fs::path& file, const std::string& backend) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    limit_child();
    std::string report;
    try {
      Backend* b = builtin_backends().find(backend);
      if (!b) throw std::logic_error("no backend " + backend);
      const Case c = case_from_json(read_json_file(file.string()));
      (void)evaluate(*b, c);
      report = "ok\n";
    } catch (const FormatError& e) {
      report = std::string("FormatError\n") + e.what();
    } catch (const InvalidCase& e) {
      report = std::string("InvalidCase\n") + e.what();
    } catch (const Unsupported& e) {
      report = std::string("Unsupported\n") + e.what();
    } catch (const BackendUnavailable& e) {
      report = std::string("BackendUnavailable\n") + e.what();
    } catch (const std::exception& e) {
      report = std::string("std::exception\n") + e.what();
    } catch (...) {
      report = "unknown exception\n";
    }
    for (size_t off = 0; off < report.size();) {
      const ssize_t n = write(fds[1], report.data() + off, report.size() - off);
      if (n <= 0) break;
      off += size_t(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  Outcome o = wait_child(pid, fds[0], &got);
  o.out = got;
  return o;
}

// `oplab eval FILE --backend B`, in a child, stdout and stderr captured; `limits`, when given,
// is the child's OPLAB_LIMITS.
Outcome cli_in_child(const fs::path& file, const std::string& backend, const fs::path& scratch,
                     const char* limits = nullptr) {
  const fs::path out = scratch / ("stdout." + backend), err = scratch / ("stderr." + backend);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    limit_child();
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    dup2(o, 1), dup2(e, 2), dup2(in, 0);
    if (limits) setenv("OPLAB_LIMITS", limits, 1);
    const std::string f = file.string(), cli = cli_path();
    execl(cli.c_str(), cli.c_str(), "eval", f.c_str(), "--backend", backend.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  Outcome r = wait_child(pid, -1, nullptr);
  std::stringstream so, se;
  so << std::ifstream(out).rdbuf();
  se << std::ifstream(err).rdbuf();
  r.out = so.str();
  r.err = se.str();
  return r;
}

// The backends that can run here, asked in a child: asking the peer starts its bridge process,
// which the forked evaluations must not share.
std::vector<std::string> runnable_backends() {
  static const std::vector<std::string> names = [] {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      std::string list;
      for (Backend* b : builtin_backends().all())
        if (!b->unavailable_reason()) list += b->name() + "\n";
      (void)!write(fds[1], list.data(), list.size());
      _exit(0);
    }
    close(fds[1]);
    std::string got;
    // Asking every backend starts each torch dtype's bridge (Python and torch, seconds each on a
    // loaded machine): more than one evaluation's timeout.
    wait_child(pid, fds[0], &got, 6 * timeout_s());
    std::vector<std::string> v;
    std::stringstream ss(got);
    std::string listed;
    for (std::string line; std::getline(ss, line);)
      if (!line.empty()) v.push_back(line), listed += " " + line;
    std::cout << "[hostile] backends that can run here:" << listed << "\n";
    return v;
  }();
  return names;
}

bool runnable(const std::string& name) {
  for (const auto& n : runnable_backends())
    if (n == name) return true;
  return false;
}

std::string shown(const std::string& s) { return s.size() > 400 ? s.substr(0, 400) + "...(" + std::to_string(s.size()) + " bytes)" : s; }

// ---- the checks ----

class HostileInput : public ::testing::TestWithParam<Hostile> {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() / ("oplab_hostile_" + std::to_string(::getpid()) + "_" + GetParam().name);
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
    const Hostile& h = GetParam();
    if (h.generate) {
      file_ = scratch_ / (h.name + ".json");
      h.generate(file_);
    } else {
      file_ = kCorpus / (h.name + ".json");
    }
  }
  void TearDown() override { fs::remove_all(scratch_); }

  fs::path scratch_, file_;
};

// One clean line: no newline inside, under kMaxMessage characters.
void expect_one_line(const std::string& msg, const std::string& where) {
  EXPECT_LT(msg.size(), kMaxMessage) << where << ": message of " << msg.size() << " bytes: " << shown(msg);
  EXPECT_EQ(msg.find('\n'), std::string::npos) << where << ": message of more than one line: " << shown(msg);
  EXPECT_FALSE(msg.empty()) << where << ": empty message";
}

void expect_clean_child(const Outcome& o, const std::string& where) {
  EXPECT_FALSE(o.timed_out) << where << ": still running after " << timeout_s() << " s (killed)";
  EXPECT_TRUE(o.timed_out || o.exited) << where << ": killed by signal " << o.code << " (" << strsignal(o.code) << ")";
  EXPECT_LT(o.maxrss_kb, kMaxRssKb) << where << ": peak memory " << o.maxrss_kb / 1024 << " MiB";
}

TEST_P(HostileInput, EvaluateEndsWithOneCleanError) {
  const Hostile& h = GetParam();
  std::vector<std::string> backends;
  if (h.every_backend) {
    backends = runnable_backends();
  } else {
    backends = {"ref", "halide-cpu"};
  }
  ASSERT_FALSE(backends.empty());
  for (const auto& b : backends) {
    const std::string where = h.name + " on " + b + " (in-process evaluate)";
    const Outcome o = evaluate_in_child(file_, b);
    expect_clean_child(o, where);
    if (o.timed_out || !o.exited) continue;
    const size_t nl = o.out.find('\n');
    const std::string kind = o.out.substr(0, nl);
    const std::string msg = nl == std::string::npos ? "" : o.out.substr(nl + 1);
    if (h.want == Want::Answer && kind == "Unsupported") continue;  // declining is an answer too
    EXPECT_EQ(kind, want_name(h.want)) << where << ": " << shown(msg);
    if (h.want != Want::Answer) expect_one_line(msg, where);
  }
}

TEST_P(HostileInput, CliEndsWithOneCleanLine) {
  const Hostile& h = GetParam();
  std::vector<std::string> backends = {"ref", "halide-cpu"};
  if (h.every_backend && runnable("torchvision")) backends.push_back("torchvision");
  for (const auto& b : backends) {
    const std::string where = h.name + " on " + b + " (oplab eval)";
    const Outcome o = cli_in_child(file_, b, scratch_);
    expect_clean_child(o, where);
    if (o.timed_out || !o.exited) continue;
    if (h.want == Want::Answer) {
      // 0 and the result on stdout, or 3: the backend declines the case (README, "The CLI").
      EXPECT_TRUE(o.code == 0 || o.code == 3) << where << ": exit " << o.code << ", stderr: " << shown(o.err);
      if (o.code == 0) {
        EXPECT_EQ(o.out.find('\n'), o.out.size() - 1) << where << ": not one result line: " << shown(o.out);
      }
      if (o.code == 3) expect_one_line(o.err.substr(0, o.err.size() - 1), where);
      continue;
    }
    // 2: invalid input; 5: not a case (README, "The CLI"). Never a result on stdout.
    EXPECT_TRUE(o.code == 2 || o.code == 5) << where << ": exit " << o.code << ", stderr: " << shown(o.err);
    EXPECT_TRUE(o.out.empty()) << where << ": wrote a result: " << shown(o.out);
    std::string line = o.err;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    expect_one_line(line, where);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, HostileInput, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Hostile>& info) { return info.param.name; });

// Every file in tests/hostile/ has an expectation above, and every expectation its file.
TEST(HostileCorpus, CorpusIsListed) {
  std::map<std::string, bool> seen;
  for (const auto& e : fs::directory_iterator(kCorpus))
    if (e.path().extension() == ".json") {
      const std::string name = e.path().stem().string();
      EXPECT_TRUE(corpus_table().count(name)) << name << ".json has no expectation in test_hostile_input.cpp";
      seen[name] = true;
    }
  for (const auto& [name, want] : corpus_table()) EXPECT_TRUE(seen.count(name)) << name << ".json is missing from tests/hostile/";
}

// ---- the resource policy: on by default, documented switches, the benchmark within it ----

// roi_align with a fixed 1100 x 1100 grid on a 1 x 1 image: 1.21 M samples in its one bin, over
// the default bin_samples (2^20) but quick to evaluate (milliseconds on ref).
const char* kOverBinLimit =
    R"({"op":"roi_align","params":{"output_size":[1,1],"spatial_scale":1.0,"sampling_ratio":1100},)"
    R"("inputs":{"input":{"shape":[1,1,1,1],"data":[1]},"rois":{"shape":[1,5],"data":[0,0,0,1,1]}}})";

class ResourcePolicyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() / ("oplab_policy_" + std::to_string(::getpid()));
    fs::create_directories(scratch_);
    file_ = scratch_ / "over_bin_limit.json";
    write_text(file_, kOverBinLimit);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  fs::path scratch_, file_;
};

TEST_F(ResourcePolicyCli, RefusedByDefaultNamingTheLimit) {
  const Outcome o = cli_in_child(file_, "ref", scratch_);
  expect_clean_child(o, "default limits");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("bin_samples=1048576"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("1210000 samples per bin"), std::string::npos) << o.err;
  expect_one_line(o.err.substr(0, o.err.size() - 1), "default limits");
}

TEST_F(ResourcePolicyCli, OplabLimitsSwitchesAndRaisesThem) {
  for (const char* setting : {"off", "bin_samples=2e6", "work=1e12,bin_samples=1300000"}) {
    const Outcome o = cli_in_child(file_, "ref", scratch_, setting);
    expect_clean_child(o, setting);
    EXPECT_EQ(o.code, 0) << "OPLAB_LIMITS=" << setting << ": " << o.err;
  }
  const Outcome bad = cli_in_child(file_, "ref", scratch_, "bin_sample=2e6");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("OPLAB_LIMITS=bin_sample=2e6: unknown limit \"bin_sample\""), std::string::npos) << bad.err;
}

TEST(ResourcePolicy, ApiSwitchesAndSetsTheLimits) {
  const Case c = case_from_json(json::parse(kOverBinLimit));
  Backend& ref = *builtin_backends().find("ref");
  EXPECT_THROW(evaluate(ref, c), InvalidCase);
  set_limits_enforced(false);
  EXPECT_EQ(evaluate(ref, c).outputs.at("output").data.at(0), 1.0);
  set_limits_enforced(true);
  ResourceLimits l = default_resource_limits();
  l.bin_samples = 2000000;
  l.work = 1000;
  set_resource_limits(l);
  try {
    evaluate(ref, c);
    ADD_FAILURE() << "accepted over the work limit";
  } catch (const InvalidCase& e) {
    EXPECT_NE(std::string(e.what()).find("over the resource limit work=1000"), std::string::npos) << e.what();
  }
  set_resource_limits(default_resource_limits());
}

// The defaults must admit what the benchmark times (bench/shapes_*.cpp, full size): building
// the shapes validates each of them.
TEST(ResourcePolicy, BenchmarkShapesFitTheDefaults) {
  ASSERT_TRUE(limits_enforced());
  std::vector<bench::BenchShape> shapes;
  EXPECT_NO_THROW(shapes = bench::standard_shapes(false));
  EXPECT_GE(shapes.size(), 10u);
}

}  // namespace
}  // namespace oplab
