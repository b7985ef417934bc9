#pragma once
// Where every campaign case comes from. Case i of op `op` in a campaign with seed S is drawn
// from its own seed, derived from (S, op, i) alone, so a case does not depend on which other
// cases ran before it: a shard, a time-limited run and a replay all draw the same case i.
// Shard K/N owns the cases with i mod N == K; N machines together run one campaign.
#include <cstdint>
#include <optional>
#include <string>

#include <rapidcheck.h>

#include "core/case.h"

namespace oplab::fuzz {

// A 64-bit seed for case `index` of `op` (splitmix64 over the campaign seed, the op name's
// FNV-1a hash and the index).
uint64_t case_seed(uint64_t campaign_seed, const std::string& op, uint64_t index);

// RapidCheck size of that case, 0..100, also derived from the case seed: sizes are spread
// evenly whatever the shard count (a plain `index mod 101` would give a shard of 101 machines
// one size each).
int case_size(uint64_t seed);

// The case itself: gen at `size` with the first split of Random(seed), which is exactly what
// RapidCheck's own search draws for a property run with TestParams::seed = seed. That is
// what lets the shrinker (fuzz/shrink.h) regenerate the case and shrink it.
Case draw_case(const rc::Gen<Case>& gen, uint64_t seed, int size);

struct Shard {
  int64_t index = 0;  // K, 0-based
  int64_t count = 1;  // N
  bool owns(uint64_t case_index) const { return int64_t(case_index % uint64_t(count)) == index; }
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "K/N" with 0 <= K < N, or "auto": the shard of this task of a Slurm array job
// (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN) or of a Kubernetes
// Indexed Job (JOB_COMPLETION_INDEX, with the count in OPLAB_SHARD_COUNT); docs/shards/ has
// example job files. nullopt and a one-line reason otherwise.
std::optional<Shard> parse_shard(const std::string& text, std::string* error);

}  // namespace oplab::fuzz
