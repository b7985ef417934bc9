// interpolate cases: every mode at every rank PyTorch supports, size or scale_factor (scalar or
// per axis), recompute_scale_factor, align_corners; scale factors that are non-integer, < 1,
// or put in*sf within 1e-13 of an integer (the output size's floor on a knife edge); output
// sizes that divide the input (nearest and nearest-exact land on .5 ties and lattice points)
// or are 1; odd and prime input sizes.
#include <cmath>

#include "fuzz/generators.h"
#include "fuzz/gen_values.h"

namespace oplab::fuzz {

namespace {

// A scale factor for an axis of length `in`.
double pick_scale_factor(int64_t in) {
  switch (pick_one<int>({{5, 0}, {2, 1}, {2, 2}})) {
    case 0:
      return pick_of<double>({2.0, 0.5, 1.5, 2.1, 3.0, 1.0, 1.1, 0.3, 1.0 / 3.0, 0.75, 3.7, 1.25});
    case 1: {  // in*sf within a hair of an integer: the floor of the output size is on a knife edge
      const double target = double(pick_dim(1, 3 * in));
      return target / double(in) + pick_one<double>({{1, 0.0}, {1, 1e-13}, {1, -1e-13}});
    }
    default:  // smooth, between 0.25 and 4
      return 0.25 + std::abs(pick_real(3.75));
  }
}

// An output size for an axis of length `in`.
int64_t pick_size(int64_t in, int nd) {
  switch (pick_one<int>({{6, 0}, {2, 1}, {1, 2}})) {
    case 0: return pick_dim(1, nd == 3 ? 6 : 12);
    case 1: {  // a divisor or a multiple of the input: nearest's source index lands on ties
      const int64_t k = pick_dim(2, 3);
      return pick_one<int>({{1, 0}, {1, 1}}) ? std::max<int64_t>(1, in / k) : in * k;
    }
    default: return 1;
  }
}

}  // namespace

rc::Gen<Case> gen_interpolate() {
  return rc::gen::exec([] {
    Case c;
    c.op = "interpolate";
    const int nd = pick_one<int>({{3, 2}, {2, 1}, {1, 3}});
    std::vector<std::string> modes{"nearest", "nearest-exact", "area"};
    if (nd == 1) modes.push_back("linear");
    if (nd == 2) modes.insert(modes.end(), {"bilinear", "bicubic"});
    if (nd == 3) modes.push_back("trilinear");
    const std::string mode = pick_of(modes);
    const bool interpolating = mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear";

    Shape shape{pick_one<int64_t>({{8, 1}, {2, 2}, {1, 0}}), pick_dim(1, 2)};
    for (int i = 0; i < nd; ++i) shape.push_back(pick_extent(1, nd == 3 ? 4 : 7));
    c.params = json{{"mode", mode}};
    if (interpolating) c.params["align_corners"] = pick_of<json>({json(nullptr), json(false), json(true)});

    const bool scalar = *rc::gen::arbitrary<bool>();
    if (pick_one<int>({{1, 0}, {1, 1}}) == 0) {  // size
      json size = json::array();
      for (int i = 0; i < nd; ++i) size.push_back(pick_size(shape[size_t(2 + i)], nd));
      c.params["size"] = scalar ? size[0] : size;
    } else {  // scale_factor (the output size floor(in*sf) must stay positive)
      json sf = json::array();
      for (int i = 0; i < nd; ++i) {
        double s = pick_scale_factor(shape[size_t(2 + i)]);
        if (std::floor(double(shape[size_t(2 + i)]) * s) < 1) s = 1.0;
        sf.push_back(s);
      }
      if (scalar) {
        double s = sf[0].get<double>();
        for (int i = 0; i < nd; ++i)
          if (std::floor(double(shape[size_t(2 + i)]) * s) < 1) s = 1.0;
        c.params["scale_factor"] = s;
      } else {
        c.params["scale_factor"] = sf;
      }
      c.params["recompute_scale_factor"] = pick_of<json>({json(nullptr), json(false), json(true)});
    }
    c.inputs["input"] = pick_tensor(shape);
    // The output shape comes from the op description (validation computes it).
    return c;
  });
}

}  // namespace oplab::fuzz
