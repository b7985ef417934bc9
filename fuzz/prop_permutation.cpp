// permutation: relabelling what the op treats alike must relabel its answer and nothing else.
//   interpolate:  batch and channel permutations of input and grad_output.
//   RoI ops:      a batch permutation (rois' batch indices follow), a channel permutation,
//                 and a permutation of the rois (with their offsets and grad_output rows).
//   deform_conv2d: a batch permutation (offset, mask follow); input channels permuted within
//                 each (weight group, offset group) cell with the weight's input dimension;
//                 output channels permuted within each weight group with the weight's output
//                 dimension, the bias and grad_output.
// Every permutation is a rotation by one inside its blocks (deterministic, and never the
// identity on a block of two or more).
#include <functional>

#include "core/params.h"
#include "fuzz/case_edit.h"
#include "fuzz/properties.h"
#include "fuzz/tolerance.h"

namespace oplab::fuzz {

namespace {

bool any_op(const std::string&) { return true; }

using Perm = std::vector<int64_t>;

struct Permuted {
  Case c;
  std::function<Tensor(const std::string& key, const Tensor&)> map;  // "outputs.output", "grads.input", ...
};

Tensor permute2(const Tensor& t, const Perm& p0, const Perm& p1) { return permute_dim(permute_dim(t, 0, p0), 1, p1); }

Permuted permute_interpolate(const Case& c) {
  const Tensor& x = c.in("input");
  const Perm pn = rotate_all(x.dim(0)), pc = rotate_all(x.dim(1));
  Permuted out{c, nullptr};
  out.c.inputs["input"] = permute2(x, pn, pc);
  if (c.grad_output) out.c.grad_output = permute2(*c.grad_output, pn, pc);
  out.map = [pn, pc](const std::string&, const Tensor& t) { return permute2(t, pn, pc); };
  return out;
}

Permuted permute_roi(const Case& c) {
  const Tensor& x = c.in("input");
  const Tensor& rois = c.in("rois");
  const Perm pn = rotate_all(x.dim(0)), pc = rotate_all(x.dim(1)), pk = rotate_all(rois.dim(0));
  Permuted out{c, nullptr};
  out.c.inputs["input"] = permute2(x, pn, pc);
  Tensor r = rois;
  for (int64_t k = 0; k < r.dim(0); ++k) r.at(k, 0) = double(pn[size_t(int64_t(r.at(k, 0)))]);
  out.c.inputs["rois"] = permute_dim(r, 0, pk);
  if (c.has("offset")) out.c.inputs["offset"] = permute_dim(c.in("offset"), 0, pk);
  if (c.grad_output) out.c.grad_output = permute2(*c.grad_output, pk, pc);
  out.map = [pn, pc, pk](const std::string& key, const Tensor& t) {
    if (key == "outputs.output") return permute2(t, pk, pc);
    if (key == "grads.input") return permute2(t, pn, pc);
    return permute_dim(t, 0, pk);  // grads.offset
  };
  return out;
}

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

Permuted permute_deform_conv2d(const Case& c) {
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

CheckResult check(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  const Permuted pc = c.op == "interpolate"     ? permute_interpolate(c)
                      : c.op == "deform_conv2d" ? permute_deform_conv2d(c)
                                                : permute_roi(c);
  Backend& b = ctx.subject();
  const Tolerance tol = tolerance_for(b);
  CheckResult verdict;
  const auto base = ctx.try_eval(b, c, &verdict);
  if (!base) return verdict;
  const auto got = ctx.try_eval(b, pc.c, &verdict);
  if (!got) return verdict;
  auto compare_part = [&](const char* kind, const std::map<std::string, Tensor>& want,
                          const std::map<std::string, Tensor>& have) {
    for (const auto& [name, t] : want) {
      const std::string key = std::string(kind) + "." + name;
      auto it = have.find(name);
      if (it == have.end()) {
        if (!verdict.failed()) verdict = CheckResult::fail(key + " missing from the permuted case's result");
        continue;
      }
      ctx.expect_close(key + " (permuted case)", pc.map(key, t), it->second, tol, &verdict);
    }
  };
  compare_part("outputs", base->outputs, got->outputs);
  compare_part("grads", base->grads, got->grads);
  return verdict;
}

}  // namespace

Property permutation_property() {
  return {"permutation", "batch, channel and roi permutations commute with the op", false, any_op, check};
}

}  // namespace oplab::fuzz
