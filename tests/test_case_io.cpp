// The case and result JSON of SPEC §1: exact round trip of doubles (including values that
// need 17 significant digits), non-finite values as strings, malformed files rejected with
// one line naming what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "core/case_io.h"

namespace oplab {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(CaseIo, DoublesRoundTripBitExactThroughText) {
  std::mt19937_64 rng(7);
  Tensor t({1000});
  for (double& v : t.data) {
    uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) v = 1.0;
  }
  // Values whose shortest form needs all 17 digits, and extremes.
  t.data[0] = 0.1 + 0.2;  // 0.30000000000000004
  t.data[1] = std::nextafter(1.0, 2.0);
  t.data[2] = std::numeric_limits<double>::denorm_min();
  t.data[3] = std::numeric_limits<double>::max();
  t.data[4] = -0.0;
  const std::string text = tensor_to_json(t).dump();
  const Tensor back = tensor_from_json(json::parse(text), "t");
  ASSERT_EQ(back.shape, t.shape);
  for (size_t i = 0; i < t.data.size(); ++i) ASSERT_TRUE(same_bits(t.data[i], back.data[i])) << i;
  EXPECT_NE(text.find("0.30000000000000004"), std::string::npos);
}

TEST(CaseIo, NonFiniteValuesAreStrings) {
  Tensor t({4});
  t.data = {NAN, INFINITY, -INFINITY, 1.5};
  const json j = tensor_to_json(t);
  EXPECT_EQ(j.dump(), R"({"data":["nan","inf","-inf",1.5],"shape":[4]})");
  const Tensor back = tensor_from_json(j, "t");
  EXPECT_TRUE(std::isnan(back.data[0]));
  EXPECT_EQ(back.data[1], INFINITY);
  EXPECT_EQ(back.data[2], -INFINITY);
  EXPECT_EQ(back.data[3], 1.5);
}

TEST(CaseIo, CaseRoundTrip) {
  const char* text = R"({"op": "roi_align",
    "params": {"output_size": [7, 7], "spatial_scale": 0.25, "sampling_ratio": 2, "aligned": true, "pool_mode": "avg"},
    "inputs": {"input": {"shape": [1, 1, 2, 2], "data": [1, 2, "nan", 4]},
               "rois":  {"shape": [1, 5], "data": [0, 0.5, 0.5, 1.5, 1.5]}},
    "grad_output": {"shape": [1, 1, 7, 7], "data": [0,0,0,0,0,0,0, 0,0,0,0,0,0,0, 0,0,0,0,0,0,0, 0,0,0,0,0,0,0,
                                                    0,0,0,0,0,0,0, 0,0,0,0,0,0,0, 0,0,0,0,0,0,"-inf"]}})";
  const Case c = case_from_json(json::parse(text));
  EXPECT_EQ(c.op, "roi_align");
  EXPECT_EQ(c.params.at("output_size"), json({7, 7}));
  ASSERT_TRUE(c.grad_output.has_value());
  EXPECT_EQ(c.grad_output->data.back(), -INFINITY);
  const Case again = case_from_json(json::parse(case_to_json(c).dump()));
  EXPECT_EQ(case_to_json(again).dump(), case_to_json(c).dump());
  EXPECT_TRUE(std::isnan(again.in("input").data[2]));
}

TEST(CaseIo, ResultRoundTrip) {
  Result r;
  r.op = "interpolate";
  r.backend = "ref";
  Tensor o({1, 1, 2});
  o.data = {0.1, -INFINITY};
  r.outputs["output"] = o;
  r.grads["input"] = o;
  const Result back = result_from_json(json::parse(result_to_json(r).dump()));
  EXPECT_EQ(back.op, "interpolate");
  EXPECT_EQ(back.backend, "ref");
  EXPECT_EQ(back.outputs.at("output").data, o.data);
  EXPECT_EQ(back.grads.at("input").shape, o.shape);
}

TEST(CaseIo, MalformedTensorsAreRejectedWithOneLine) {
  auto msg = [](const char* text) {
    try {
      case_from_json(json::parse(text));
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(msg(R"({"op": "roi_pool", "inputs": {"rois": {"shape": [2, 5], "data": [1, 2, 3]}}})"),
            "roi_pool: inputs.rois.data has 3 values but shape [2, 5] needs 10");
  EXPECT_EQ(msg(R"({"op": "roi_pool", "inputs": {"input": {"shape": [1], "data": ["x"]}}})"),
            "roi_pool: inputs.input.data[0]=\"x\" is not a number (or \"nan\", \"inf\", \"-inf\")");
  EXPECT_EQ(msg(R"({"op": "roi_pool", "inputs": {"input": {"shape": [-1], "data": []}}})"),
            "roi_pool: inputs.input.shape has -1, not a non-negative integer");
  EXPECT_EQ(msg(R"({"inputs": {}})"), "case: \"op\" must be a string");
  EXPECT_EQ(msg(R"({"op": "roi_pool", "inputs": {}, "extra": 1})"), "roi_pool: unknown case field \"extra\"");
}

TEST(CaseIo, AtomicWriteLeavesNoTemporary) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "oplab_case_io_test";
  fs::create_directories(dir);
  const fs::path file = dir / "r.json";
  write_json_file_atomic(file.string(), json{{"a", 1}});
  EXPECT_EQ(read_json_file(file.string()), json({{"a", 1}}));
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oplab
