// External backends over the line protocol (external/exec_backend.h, docs/protocol.md): a
// process that misbehaves in each way the protocol names fails the case it was evaluating,
// with one line naming the backend, and the campaign goes on with a fresh process. The
// well-behaved answers of tests/exec/backend.py are `oplab eval --backend ref`'s own, so what
// is judged is only what the script spoils on purpose.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "core/case_io.h"
#include "external/exec_backend.h"

#ifndef OPLAB_TEST_PYTHON
#define OPLAB_TEST_PYTHON "/usr/bin/python3"
#endif

namespace oplab {
namespace {

using testing_cli::CliFixture;
using testing_cli::CliRun;
using json = nlohmann::json;

const std::string kScript = std::string(OPLAB_SOURCE_DIR) + "/tests/exec/backend.py";
const std::string kCase = std::string(OPLAB_SOURCE_DIR) + "/tests/exec/roi_align_case.json";

class ExecBackend : public CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    setenv("OPLAB_BIN", OPLAB_CLI, 1);  // the script asks the reference through it
    unsetenv("OPLAB_BACKENDS");
  }
  // --exec NAME='python backend.py MODE DTYPE GRADS'
  static std::string exec(const std::string& name, const std::string& mode, const std::string& dtype = "float64",
                          const std::string& grads = "true") {
    return "--exec '" + name + "=" + OPLAB_TEST_PYTHON + " " + kScript + " " + mode + " " + dtype + " " + grads + "'";
  }
  // The timeout is short only where a hang is the point: a Python child answering on a
  // loaded machine (a sanitized build beside other builds) can take seconds to start.
  CliRun fuzz(const std::string& mode, int cases, const std::string& extra = "") {
    const std::string timeout = mode == "hang" ? "2" : "60";
    return run("fuzz " + exec("bad", mode) + " --backend bad --op roi_align --property differential --cases " +
               std::to_string(cases) + " --keep-going --shrink-time 0 --exec-timeout " + timeout + " --out " +
               path("out") + " " + extra);
  }
  json summary() { return read_json_file(path("out") + "/summary.json"); }
};

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }
int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// ---- the first contact: each a one-line "cannot run here" (exit 4) naming the backend

TEST_F(ExecBackend, HelloThatIsNotJsonIsOneLineNamingTheBackend) {
  const CliRun r = run("eval " + kCase + " --backend mine --exec 'mine=echo hello there; cat'");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(has(r.err, "mine") && has(r.err, "not JSON") && has(r.err, "hello there")) << r.err;
}

TEST_F(ExecBackend, ProcessThatExitsAtOnceSaysHowItEnded) {
  const CliRun r = run("eval " + kCase + " --backend mine --exec 'mine=exit 3'");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(has(r.err, "mine") && has(r.err, "exited with status 3")) << r.err;
}

// An interpreter that cannot import what the backend needs: the line names the command that ran
// and the import that failed (the interpreter's last stderr line), not only "exited".
TEST_F(ExecBackend, AFailedImportIsNamedWithTheCommand) {
  const std::string command = std::string(OPLAB_TEST_PYTHON) + " -c \"import oplab_no_such_module\"";
  const CliRun r = run("eval " + kCase + " --backend mine --exec 'mine=" + command + "'");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(has(r.err, "it ran: " + command)) << r.err;
  EXPECT_TRUE(has(r.err, "No module named 'oplab_no_such_module'")) << r.err;
}

// `backends` with an external backend that cannot run: listed, and exit 4 with the reason (as
// every verb that would use it), not 0.
TEST_F(ExecBackend, BackendsExitsFourWhenTheNamedBackendCannotRun) {
  const CliRun down = run("backends --exec 'mine=exit 3'");
  EXPECT_EQ(down.code, 4) << down.err;
  EXPECT_EQ(lines(down.err), 1) << down.err;
  EXPECT_TRUE(has(down.err, "cannot run here: mine:") && has(down.err, "exited with status 3")) << down.err;
  EXPECT_TRUE(has(down.out, "mine")) << down.out;
  const CliRun up = run("backends " + exec("ok", "ok"));
  EXPECT_EQ(up.code, 0) << up.err;
}

TEST_F(ExecBackend, HelloOfAnotherProtocolIsRefused) {
  const CliRun r = run("eval " + kCase + " --backend bad " + exec("bad", "bad_hello"));
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_TRUE(has(r.err, "bad") && has(r.err, "protocol 2")) << r.err;
}

TEST_F(ExecBackend, NamesMustNotClashWithBuiltInBackends) {
  const CliRun r = run("eval " + kCase + " --backend ref --exec 'ref=cat'");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(has(r.err, "\"ref\" is taken by a built-in backend")) << r.err;
  const CliRun twice = run("backends --exec 'a=cat' --exec 'a=cat'");
  EXPECT_EQ(twice.code, 2) << twice.err;
  EXPECT_TRUE(has(twice.err, "another external backend")) << twice.err;
  const CliRun malformed = run("backends --exec nameonly");
  EXPECT_EQ(malformed.code, 2) << malformed.err;
  EXPECT_TRUE(has(malformed.err, "NAME=COMMAND")) << malformed.err;
}

TEST_F(ExecBackend, ProcessThatStopsReadingIsAnEpipeCrashNotASigpipe) {
  // Answers hello, then closes its stdin and lingers: the next multi-MB case cannot all fit in
  // the pipe, so the write fails with EPIPE, which must fail the case, not kill the harness.
  ExecSpec spec;
  spec.name = "deaf";
  spec.command = std::string(OPLAB_TEST_PYTHON) +
                 " -c 'import sys, os, time; sys.stdin.readline(); "
                 "print(\"{\\\"protocol\\\": 1, \\\"name\\\": \\\"d\\\", \\\"dtype\\\": \\\"float64\\\", "
                 "\\\"ops\\\": {\\\"interpolate\\\": {}}}\", flush=True); os.close(0); time.sleep(0.3)'";
  spec.log = path("deaf.log");
  auto b = make_exec_backend(spec);
  ASSERT_FALSE(b->unavailable_reason().has_value()) << *b->unavailable_reason();
  Case big;
  big.op = "interpolate";
  big.params = json{{"mode", "nearest"}, {"size", 65536}};
  big.inputs["input"] = Tensor({1, 4, 65536}, 0.5);
  try {
    evaluate(*b, big);
    FAIL() << "a process that reads nothing produced a result";
  } catch (const KernelCrash& e) {
    const std::string m = e.what();
    EXPECT_TRUE(has(m, "deaf: interpolate: crashed: the process stopped reading its input")) << m;
    EXPECT_TRUE(has(m, "deaf.log")) << m;
  }
}

// ---- a good backend: the reference's own answers pass, through the protocol both ways

TEST_F(ExecBackend, ReferenceAnswersPassAndTheStderrGoesToTheRunsLog) {
  const CliRun r = fuzz("ok", 6);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const json s = summary();
  ASSERT_EQ(s.at("records").size(), 1u) << s.dump();
  const json& rec = s.at("records")[0];
  EXPECT_EQ(rec.at("verdicts").value("agree", 0), 6) << rec.dump();
  EXPECT_EQ(rec.at("dtype"), "float64");
  EXPECT_TRUE(has(rec.at("backend_origin").get<std::string>(), "exec: ")) << rec.dump();
  EXPECT_TRUE(has(testing_cli::slurp(path("out") + "/bad.stderr.log"), "case received"));
}

// ---- each way of breaking the protocol fails its case, and the next case still runs

struct Misbehaviour {
  const char* mode;
  const char* detail;  // what the failure's detail must say
  bool crashed;
};

class ExecMisbehaves : public ExecBackend, public ::testing::WithParamInterface<Misbehaviour> {};

TEST_P(ExecMisbehaves, FailsEveryCaseAndTheCampaignGoesOn) {
  const Misbehaviour m = GetParam();
  const CliRun r = fuzz(m.mode, 3);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const json s = summary();
  EXPECT_EQ(s.at("status"), "finished") << s.dump();
  // One failure per case: the process was replaced after each one.
  ASSERT_EQ(s.at("failures").size(), 3u) << s.dump();
  for (const json& f : s.at("failures")) {
    const json rec = read_json_file(path("out") + "/failures/" + f.at("id").get<std::string>() + ".json");
    const std::string detail = rec.at("detail");
    EXPECT_TRUE(has(detail, "bad")) << detail;
    EXPECT_TRUE(has(detail, m.detail)) << detail;
    EXPECT_EQ(rec.at("crashed").get<bool>(), m.crashed) << detail;
    EXPECT_TRUE(has(rec.at("backend_origin").get<std::string>(), "backend.py " + std::string(m.mode))) << rec.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Protocol, ExecMisbehaves,
    ::testing::Values(Misbehaviour{"die", "crashed: the process closed its output (exited with status 7)", true},
                      Misbehaviour{"hang", "hung: no answer within 2 s", true},
                      Misbehaviour{"another_op", "answered for op \"interpolate\"", false},
                      Misbehaviour{"wrong_shape", "its output has shape", false},
                      Misbehaviour{"nan", "nan vs ref", false},
                      Misbehaviour{"stray", "is not JSON: \"computing roi_align...\"", false},
                      // An answer line that never ends: read up to the bound of a well-formed
                      // answer to the case, then the process is killed (bounded memory).
                      Misbehaviour{"huge", "broke the protocol: answered more than", false}),
    [](const auto& info) { return std::string(info.param.mode); });

TEST_F(ExecBackend, WrongNumberOfGradientsFails) {
  const CliRun r = fuzz("wrong_grads", 4);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const json s = summary();
  ASSERT_GE(s.at("failures").size(), 1u) << s.dump();
  for (const json& f : s.at("failures")) {
    const json rec = read_json_file(path("out") + "/failures/" + f.at("id").get<std::string>() + ".json");
    EXPECT_TRUE(has(rec.at("detail"), "gradient(s)")) << rec.dump();
  }
}

// ---- a failure found on an external backend is replayed only on that backend

TEST_F(ExecBackend, ReplayNeedsTheSameExternalBackend) {
  ASSERT_EQ(fuzz("nan", 1).code, 1);
  const std::string id = summary().at("failures")[0].at("id");
  const std::string record = path("out") + "/failures/" + id + ".json";
  // The record's replay command carries the --exec the backend needs: run as written, it replays.
  const json rec = read_json_file(record);
  const std::string replay = rec.at("replay");
  EXPECT_TRUE(has(replay, "--exec ")) << replay;
  ASSERT_EQ(replay.rfind("oplab replay ", 0), 0u) << replay;
  const CliRun as_printed = run(replay.substr(6));
  EXPECT_EQ(as_printed.code, 1) << replay << "\n" << as_printed.out << as_printed.err;
  EXPECT_TRUE(has(as_printed.out, "still fails")) << as_printed.out;
  const CliRun without = run("replay " + record);
  EXPECT_EQ(without.code, 2) << without.out << without.err;
  EXPECT_TRUE(has(without.err, "external backend bad") && has(without.err, "--exec 'bad=")) << without.err;
  const CliRun with = run("replay " + record + " " + exec("bad", "nan"));
  EXPECT_EQ(with.code, 1) << with.out << with.err;
  EXPECT_TRUE(has(with.out, "still fails")) << with.out;
}

// ---- judging by dtype: a float16 kernel is held to float16's bound only if it says so

TEST_F(ExecBackend, Float16KernelFailsAsFloat32AndPassesAsFloat16) {
  const CliRun as32 = run("compare " + kCase + " --backend h " + exec("h", "f16out", "float32"));
  EXPECT_EQ(as32.code, 1) << as32.out << as32.err;
  EXPECT_TRUE(has(as32.out, "(float32, per-element bound")) << as32.out;
  EXPECT_TRUE(has(as32.out, "DISAGREE")) << as32.out;
  const CliRun as16 = run("compare " + kCase + " --backend h " + exec("h", "f16out", "float16"));
  EXPECT_EQ(as16.code, 0) << as16.out << as16.err;
  EXPECT_TRUE(has(as16.out, "(float16, per-element bound")) << as16.out;
  EXPECT_TRUE(has(as16.out, "agree")) << as16.out;
}

// ---- grads: false: cases go without grad_output, judged on the forward

TEST_F(ExecBackend, ForwardOnlyBackendIsSentNoGradOutput) {
  const CliRun r = run("fuzz " + exec("fwd", "ok", "float64", "false") +
                       " --backend fwd --op roi_align --property differential --cases 6 --out " + path("out"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;  // the script fails any case that brings grad_output
  const json rec = summary().at("records")[0];
  EXPECT_GT(rec.at("forward_only").get<int>(), 0) << rec.dump();
  EXPECT_EQ(rec.at("verdicts").value("agree", 0), 6) << rec.dump();
}

// ---- backends files, named on the command line or by OPLAB_BACKENDS

TEST_F(ExecBackend, BackendsFileListsDtypeAndOps) {
  const std::string file = write("backends.json", json{{"backends", json::array({json{{"name", "h16"},
      {"exec", std::string(OPLAB_TEST_PYTHON) + " " + kScript + " f16out float16 false"}, {"timeout", 5}}})}}.dump());
  const CliRun r = run("backends --backends " + file);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "h16") && has(r.out, "roi_align (float16, forward only)") && has(r.out, "interpolate (float16)"))
      << r.out;
  // OPLAB_BACKENDS names the same file when no --backends is given.
  setenv("OPLAB_BACKENDS", file.c_str(), 1);
  const CliRun env = run("eval " + kCase + " --backend h16");
  unsetenv("OPLAB_BACKENDS");
  EXPECT_EQ(env.code, 0) << env.err;
  EXPECT_TRUE(has(env.out, "\"backend\":\"h16\"")) << env.out;
  const std::string broken = write("broken.json", R"({"backends": [{"name": "x", "exec": "cat", "plugin": "y.so"}]})");
  const CliRun bad = run("backends --backends " + broken);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_TRUE(has(bad.err, "backends[0] needs exactly one of")) << bad.err;
}

// A backends file may say what an entry's failures mean: a deliberately broken copy declared
// "role": "seeded-bug" is counted as a caught seeded bug (exit 0 under --backend all) where the
// same kernel as an implementation is a finding (exit 1); any other role is one line and exit 2.
TEST_F(ExecBackend, BackendsFileRoleCountsASeededBugApart) {
  // f16out declared float32: a half answer held to float32's bound (the test above) fails.
  auto file_with = [&](const std::string& name, const std::string& role) {
    json e{{"name", name}, {"exec", std::string(OPLAB_TEST_PYTHON) + " " + kScript + " f16out float32 false"}};
    if (!role.empty()) e["role"] = role;
    return write(name + ".json", json{{"backends", json::array({e})}}.dump());
  };
  const std::string fuzz = " --op roi_align --property differential --cases 20 --seed 3 --keep-going --out ";
  // Under --backend all (the main job's way) a seeded bug's failures are expected; named alone,
  // as any backend a user names, they count (README "Verdicts").
  const CliRun as_bug = run("fuzz --backends " + file_with("hbug", "seeded-bug") + " --backend all" + fuzz + path("a"));
  EXPECT_EQ(as_bug.code, 0) << as_bug.out << as_bug.err;
  EXPECT_TRUE(has(as_bug.out, "0 of implementations") && has(as_bug.out, "on seeded bugs (caught)")) << as_bug.out;
  const CliRun as_kernel = run("fuzz --backends " + file_with("hkernel", "") + " --backend hkernel" + fuzz + path("b"));
  EXPECT_EQ(as_kernel.code, 1) << as_kernel.out << as_kernel.err;
  const CliRun bad = run("backends --backends " + file_with("hodd", "buggy"));
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_TRUE(has(bad.err, ".role must be")) << bad.err;
}

}  // namespace
}  // namespace oplab
