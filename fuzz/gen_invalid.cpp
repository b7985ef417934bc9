// Invalid cases: a valid case of the op (gen_case) with exactly one rule of SPEC §7 broken,
// chosen by RapidCheck (so it shrinks, towards the first mutation of the list and the
// simplest underlying case). The `rejects` property holds every backend to refusing them
// with the oracle's one-line error.
#include <functional>

#include "core/params.h"
#include "fuzz/gen_values.h"
#include "fuzz/generators.h"

namespace oplab::fuzz {

namespace {

using Mutation = std::function<void(Case&)>;

Shape with_last(Shape s, int64_t delta) {
  s.back() += delta;
  return s;
}

// Mutations every op can suffer.
std::vector<Mutation> common_mutations() {
  return {
      [](Case& c) { c.params["bogus"] = 1; },                          // unknown parameter
      [](Case& c) { c.inputs["bogus"] = Tensor({1}, 0.5); },           // unknown input
      [](Case& c) { c.inputs.erase("input"); },                        // missing input
      [](Case& c) {                                                    // wrong rank: spatial dims flattened
        const Shape s = c.in("input").shape;
        int64_t rest = 1;
        for (size_t i = 2; i < s.size(); ++i) rest *= s[i];
        c.inputs["input"] = Tensor({s[0], s[1] * rest}, 0.5);
      },
      [](Case& c) {                                                    // grad_output of the wrong shape
        if (c.grad_output) c.grad_output = Tensor(with_last(c.grad_output->shape, 1), 0.25);
      },
  };
}

// A roi row to break, adding one when the case has none (its grad_output then no longer fits
// either; the oracle names whichever rule it checks first, and every backend must agree).
int64_t some_roi(Case& c) {
  Tensor& rois = c.inputs["rois"];
  if (rois.dim(0) == 0) rois = Tensor({1, 5}, 0.0);
  return pick_dim(0, rois.dim(0) - 1);
}

std::vector<Mutation> roi_mutations(const std::string& op) {
  std::vector<Mutation> m = {
      [](Case& c) { c.inputs["rois"] = Tensor({c.in("rois").dim(0), 4}, 0.5); },  // rois not [K, 5]
      [](Case& c) {                                                                 // batch index out of range
        const int64_t k = some_roi(c);
        c.inputs["rois"].at(k, 0) = *rc::gen::element(double(c.in("input").dim(0)), -1.0, 0.5);
      },
      [](Case& c) {                                                                 // non-finite coordinate
        const int64_t k = some_roi(c);
        c.inputs["rois"].at(k, *rc::gen::inRange(1, 5)) = *rc::gen::element(double(NAN), double(INFINITY), -double(INFINITY));
      },
      [](Case& c) { c.params["spatial_scale"] = *rc::gen::element(0.0, -0.5); },  // spatial_scale <= 0
      [](Case& c) { c.params["output_size"] = *rc::gen::element(json{0, 2}, json{2, -1}, json(0)); },
      [](Case& c) { c.params.erase("output_size"); },
  };
  if (op == "roi_align") m.push_back([](Case& c) { c.params["pool_mode"] = "min"; });
  if (op == "roi_align") m.push_back([](Case& c) { c.params["aligned"] = 1; });
  if (op == "deform_roi_pool")
    m.push_back([](Case& c) {  // offset not [K, 2, PH, PW]
      const auto osz = c.params.at("output_size");
      c.inputs["offset"] = Tensor({c.in("rois").dim(0), 2, osz[0].get<int64_t>() + 1, osz[1].get<int64_t>()}, 0.0);
    });
  return m;
}

std::vector<Mutation> deform_conv2d_mutations() {
  return {
      [](Case& c) {  // weight.shape[1] does not divide C
        Shape s = c.in("weight").shape;
        s[1] = c.in("input").dim(1) + 1;
        c.inputs["weight"] = Tensor(s, 0.5);
      },
      [](Case& c) { c.inputs["offset"] = Tensor(with_last(c.in("offset").shape, 1), 0.0); },  // offset spatial size
      [](Case& c) {                                                                            // offset channels
        Shape s = c.in("offset").shape;
        s[1] += 1;
        c.inputs["offset"] = Tensor(s, 0.0);
      },
      [](Case& c) {  // mask shape
        Shape s = c.in("offset").shape;
        s[1] = s[1] / 2 + 1;
        c.inputs["mask"] = Tensor(s, 1.0);
      },
      [](Case& c) { c.inputs["bias"] = Tensor({c.in("weight").dim(0) + 1}, 0.5); },  // bias shape
      [](Case& c) { c.params["stride"] = *rc::gen::element(json{0, 1}, json{1, -1}); },
      [](Case& c) { c.params["padding"] = *rc::gen::element(json{-1, 0}, json{0, -2}); },
      [](Case& c) { c.params["dilation"] = *rc::gen::element(json{0, 1}, json(0)); },
      [](Case& c) {  // a kernel taller than the padded input: Ho <= 0
        Shape s = c.in("weight").shape;
        s[2] = c.in("input").dim(2) + 2 * c.params.at("padding")[0].get<int64_t>() + 2;
        c.inputs["weight"] = Tensor(s, 0.5);
      },
  };
}

std::vector<Mutation> interpolate_mutations() {
  return {
      [](Case& c) {  // both size and scale_factor
        c.params["size"] = 2;
        c.params["scale_factor"] = 2.0;
        c.params.erase("recompute_scale_factor");
      },
      [](Case& c) {  // neither
        c.params.erase("size");
        c.params.erase("scale_factor");
      },
      [](Case& c) {  // align_corners with a mode that has none
        c.params["mode"] = *rc::gen::element(std::string("nearest"), std::string("area"), std::string("nearest-exact"));
        c.params["align_corners"] = *rc::gen::arbitrary<bool>();
      },
      [](Case& c) {  // a mode for another rank
        const int nd = c.in("input").rank() - 2;
        c.params["mode"] = nd == 2 ? "trilinear" : "bilinear";
        c.params.erase("align_corners");
      },
      [](Case& c) { c.params["mode"] = "cubic"; },
      [](Case& c) {  // non-positive size
        c.params.erase("scale_factor");
        c.params.erase("recompute_scale_factor");
        c.params["size"] = *rc::gen::element(0, -3);
      },
      [](Case& c) {  // non-positive or too small scale factor
        c.params.erase("size");
        c.params["scale_factor"] = *rc::gen::element(0.0, -2.0, 1e-9);
      },
      [](Case& c) {  // recompute_scale_factor=true with size
        c.params.erase("scale_factor");
        c.params["size"] = 3;
        c.params["recompute_scale_factor"] = true;
      },
  };
}

}  // namespace

rc::Gen<Case> gen_invalid_case(const std::string& op) {
  const rc::Gen<Case> valid = gen_case(op);
  std::vector<Mutation> mutations = common_mutations();
  const std::vector<Mutation> specific = op == "deform_conv2d" ? deform_conv2d_mutations()
                                         : op == "interpolate" ? interpolate_mutations()
                                                               : roi_mutations(op);
  // The op's own rules first: shrinking moves towards index 0.
  mutations.insert(mutations.begin(), specific.begin(), specific.end());
  return rc::gen::exec([valid, mutations] {
    Case c = *valid;
    const size_t which = size_t(*rc::gen::inRange<int>(0, int(mutations.size())));
    mutations[which](c);
    return c;
  });
}

}  // namespace oplab::fuzz
