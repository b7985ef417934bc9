// The kernel of my_roi_align.h as an oplab::Backend, fuzzed in this test's process against
// oplab's double reference (include/oplab/oplab.h).
#include <gtest/gtest.h>

#include "my_roi_align.h"
#include "oplab/oplab.h"

namespace {

class MyRoiAlign : public oplab::Backend {
 public:
  std::string name() const override { return "my-roi-align"; }
  std::string description() const override { return "roi_align forward in double (consumer example)"; }
  std::optional<std::string> unsupported_reason(const oplab::Case& c) const override {
    if (c.op != "roi_align") return "only roi_align";
    if (c.grad_output) return "forward only";
    return std::nullopt;
  }
  bool computes_grads(const std::string&) const override { return false; }
  oplab::Result run(const oplab::Case& c, const oplab::ValidParams& vp) override {
    const oplab::Tensor& x = c.in("input");
    const oplab::Tensor& rois = c.in("rois");
    oplab::Tensor out(vp.output_shape);
    my::RoiAlignArgs a{x.dim(0), x.dim(1), x.dim(2), x.dim(3), rois.dim(0), out.dim(2), out.dim(3),
                       c.params.value("spatial_scale", 1.0), c.params.value("sampling_ratio", int64_t(-1)),
                       c.params.value("aligned", false), c.params.value("pool_mode", std::string("avg")) == "max"};
    my::roi_align_forward(a, x.data.data(), rois.data.data(), out.data.data());
    oplab::Result r;
    r.outputs["output"] = std::move(out);
    return r;
  }
};

TEST(MyRoiAlign, FuzzCampaignIsClean) {
  MyRoiAlign kernel;
  oplab::CampaignOptions o;
  o.ops = {"roi_align"};
  o.cases = 100;
  o.seconds = 30;
  const oplab::CampaignSummary s = oplab::run_campaign(kernel, o);
  EXPECT_GT(s.cases, 0);
  EXPECT_TRUE(s.clean()) << s.describe();
}

}  // namespace
