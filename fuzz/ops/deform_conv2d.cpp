// deform_conv2d in the fuzz layer (fuzz/op_fuzz.h). Cases: groups and offset groups, stride/padding/dilation, kernels 1-5,
// optional mask and bias, odd and prime image sizes, and offsets that put samples exactly on
// the bilinear cut-offs (-1, 0, H-1, H), on lattice points, a hair either side, far outside.
#include "core/params.h"
#include "fuzz/case_edit.h"
#include "fuzz/gen_values.h"
#include "fuzz/op_fuzz.h"
#include "fuzz/roi_family.h"

namespace oplab::fuzz {

namespace {

// Offset so that the sample lands on an edge-aimed coordinate, or a plain offset.
double pick_offset(double base, int64_t len) {
  switch (pick_one<int>({{2, 0}, {4, 1}, {4, 2}})) {
    case 0: return 0.0;
    case 1: return pick_real(3.0);
    default: return pick_coord(len) - base;
  }
}

rc::Gen<Case> gen() {
  return rc::gen::exec([] {
    Case c;
    c.op = "deform_conv2d";
    const int64_t N = pick_one<int64_t>({{8, 1}, {3, 2}, {1, 0}});
    const int64_t G = pick_dim(1, 2), D = pick_dim(1, 2);
    const int64_t C = (G == D ? G : G * D) * pick_dim(1, 2);
    const int64_t Co = G * pick_dim(1, 2);
    // Kernels 1-3, sometimes 4 or 5 (the sizes where the study variants shift, SPEC §2).
    auto kernel = [] { return pick_one<int>({{8, 0}, {1, 1}}) ? pick_of<int64_t>({4, 5}) : pick_dim(1, 3); };
    const int64_t kh = kernel(), kw = kernel();
    const int64_t sh = pick_dim(1, 2), sw = pick_dim(1, 2);
    const int64_t dh = pick_dim(1, 2), dw = pick_dim(1, 2);
    const int64_t H = pick_extent(1, 6), W = pick_extent(1, 6);
    int64_t ph = pick_dim(0, 2), pw = pick_dim(0, 2);
    // Grow the padding until the output is non-empty (Ho uses truncating division).
    auto out_len = [](int64_t in, int64_t p, int64_t d, int64_t k, int64_t s) { return (in + 2 * p - (d * (k - 1) + 1)) / s + 1; };
    while (out_len(H, ph, dh, kh, sh) <= 0) ++ph;
    while (out_len(W, pw, dw, kw, sw) <= 0) ++pw;
    const int64_t Ho = out_len(H, ph, dh, kh, sh), Wo = out_len(W, pw, dw, kw, sw);
    const int64_t K = kh * kw;

    c.params = json{{"stride", {sh, sw}}, {"padding", {ph, pw}}, {"dilation", {dh, dw}}};
    c.inputs["input"] = pick_tensor({N, C, H, W});
    c.inputs["weight"] = pick_tensor({Co, C / G, kh, kw});
    // One pick of its own (see pick_tensor): a smaller shape then leaves later picks alone.
    c.inputs["offset"] = *rc::gen::exec([=] {
      Tensor off({N, 2 * D * K, Ho, Wo});
      for (int64_t n = 0; n < N; ++n)
        for (int64_t d = 0; d < D; ++d)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              for (int64_t oy = 0; oy < Ho; ++oy)
                for (int64_t ox = 0; ox < Wo; ++ox) {
                  const int64_t k = i * kw + j;
                  off.at(n, 2 * (d * K + k), oy, ox) = pick_offset(double(oy * sh - ph + i * dh), H);
                  off.at(n, 2 * (d * K + k) + 1, oy, ox) = pick_offset(double(ox * sw - pw + j * dw), W);
                }
      return off;
    });
    if (*rc::gen::arbitrary<bool>()) c.inputs["mask"] = pick_tensor({N, D * K, Ho, Wo});
    if (*rc::gen::arbitrary<bool>()) c.inputs["bias"] = pick_tensor({Co});
    c.grad_output = pick_tensor({N, Co, Ho, Wo});
    return c;
  });
}


Shape with_last(Shape s, int64_t delta) {
  s.back() += delta;
  return s;
}

std::vector<Mutation> mutations() {
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

void features(const Case& c, std::set<std::string>& f) {
  const DeformConvParams p = parse_deform_conv2d(c);
  if (p.N == 0) f.insert("N=0");
  if (p.G > 1) f.insert("weight groups");
  if (p.D > 1) f.insert("offset groups");
  if (p.has_mask) f.insert("mask");
  if (p.has_bias) f.insert("bias");
  if (p.sh > 1 || p.sw > 1) f.insert("stride>1");
  if (p.dh > 1 || p.dw > 1) f.insert("dilation>1");
  if (p.ph == 0 && p.pw == 0) f.insert("padding 0");
  if (p.Ho == 1 && p.Wo == 1) f.insert("1x1 output");
  if (p.kh >= 4 || p.kw >= 4) f.insert("kernel 4 or 5");
  const Tensor& off = c.in("offset");
  const int64_t K = p.kh * p.kw;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t d = 0; d < p.D; ++d)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t oy = 0; oy < p.Ho; ++oy)
          for (int64_t ox = 0; ox < p.Wo; ++ox) {
            const double y = double(oy * p.sh - p.ph + (k / p.kw) * p.dh) + off.at(n, 2 * (d * K + k), oy, ox);
            const double x = double(ox * p.sw - p.pw + (k % p.kw) * p.dw) + off.at(n, 2 * (d * K + k) + 1, oy, ox);
            classify_coord(y, p.H, "sample y", f);
            classify_coord(x, p.W, "sample x", f);
          }
}

using Perm = std::vector<int64_t>;

Tensor permute2(const Tensor& t, const Perm& p0, const Perm& p1) { return permute_dim(permute_dim(t, 0, p0), 1, p1); }

// weight[o, l] of output channel o (group g) and input channel g*Cg + l moves to
// [tau[o], sigma[g*Cg + l] - g*Cg].
Tensor permute_weight(const Tensor& w, const Perm& tau, const Perm& sigma, int64_t Cg, int64_t Cog) {
  Tensor out(w.shape);
  const int64_t Co = w.dim(0), taps = w.dim(2) * w.dim(3);
  for (int64_t o = 0; o < Co; ++o) {
    const int64_t c0 = (o / Cog) * Cg;
    for (int64_t l = 0; l < Cg; ++l)
      for (int64_t t = 0; t < taps; ++t)
        out.data[size_t((tau[size_t(o)] * Cg + (sigma[size_t(c0 + l)] - c0)) * taps + t)] =
            w.data[size_t((o * Cg + l) * taps + t)];
  }
  return out;
}

Permuted permute(const Case& c) {
  const DeformConvParams p = parse_deform_conv2d(c);
  const int64_t Cg = p.C / p.G, Cd = p.C / p.D, Cog = p.Co / p.G;
  std::vector<int64_t> cell(size_t(p.C)), group(size_t(p.Co));
  for (int64_t ch = 0; ch < p.C; ++ch) cell[size_t(ch)] = (ch / Cg) * p.D + ch / Cd;
  for (int64_t o = 0; o < p.Co; ++o) group[size_t(o)] = o / Cog;
  const Perm pn = rotate_all(p.N), sigma = rotate_within(cell), tau = rotate_within(group);
  Permuted out{c, nullptr};
  out.c.inputs["input"] = permute2(c.in("input"), pn, sigma);
  out.c.inputs["offset"] = permute_dim(c.in("offset"), 0, pn);
  if (c.has("mask")) out.c.inputs["mask"] = permute_dim(c.in("mask"), 0, pn);
  out.c.inputs["weight"] = permute_weight(c.in("weight"), tau, sigma, Cg, Cog);
  if (c.has("bias")) out.c.inputs["bias"] = permute_dim(c.in("bias"), 0, tau);
  if (c.grad_output) out.c.grad_output = permute2(*c.grad_output, pn, tau);
  out.map = [=](const std::string& key, const Tensor& t) {
    if (key == "outputs.output") return permute2(t, pn, tau);
    if (key == "grads.input") return permute2(t, pn, sigma);
    if (key == "grads.weight") return permute_weight(t, tau, sigma, Cg, Cog);
    if (key == "grads.bias") return permute_dim(t, 0, tau);
    return permute_dim(t, 0, pn);  // grads.offset, grads.mask
  };
  return out;
}

const OpFuzzRegistrar kRegistrar{"deform_conv2d",
                                 {gen, mutations, features, permute, always_linear, {"input", "weight", "mask"}}};

}  // namespace

}  // namespace oplab::fuzz
