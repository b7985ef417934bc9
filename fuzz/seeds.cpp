#include "fuzz/seeds.h"

#include <cstdlib>

#include <cctype>

namespace oplab::fuzz {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

std::optional<int64_t> parse_count(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
  return std::stoll(s);
}

}  // namespace

uint64_t case_seed(uint64_t campaign_seed, const std::string& op, uint64_t index) {
  return splitmix64(splitmix64(splitmix64(campaign_seed) ^ fnv1a(op)) ^ index);
}

int case_size(uint64_t seed) { return int(splitmix64(seed ^ 0x5151u) % 101); }

Case draw_case(const rc::Gen<Case>& gen, uint64_t seed, int size) {
  rc::Random random(seed);
  return gen(random.split(), size).value();
}

namespace {

std::optional<int64_t> env_count(const char* name) {
  const char* v = std::getenv(name);
  return v ? parse_count(v) : std::nullopt;
}

// The shard a job array gives this task: Slurm's array job (task ids min..max, count tasks) or
// a Kubernetes Indexed Job (its completion index, and the count the Job passes as
// OPLAB_SHARD_COUNT, since Kubernetes does not expose .spec.completions to the pod).
std::optional<Shard> shard_from_environment(std::string* error) {
  if (const auto id = env_count("SLURM_ARRAY_TASK_ID")) {
    const auto count = env_count("SLURM_ARRAY_TASK_COUNT");
    const int64_t min = env_count("SLURM_ARRAY_TASK_MIN").value_or(0);
    if (count && *id >= min && *id - min < *count) return Shard{*id - min, *count};
    if (error)
      *error = "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT (and SLURM_ARRAY_TASK_MIN) "
               "do not make a shard of it (submit with --array=0-(N-1))";
    return std::nullopt;
  }
  if (const auto index = env_count("JOB_COMPLETION_INDEX")) {
    const auto count = env_count("OPLAB_SHARD_COUNT");
    if (count && *index < *count) return Shard{*index, *count};
    if (error) *error = "--shard auto: JOB_COMPLETION_INDEX is set but OPLAB_SHARD_COUNT (the Job's completions) is not above it";
    return std::nullopt;
  }
  if (error)
    *error = "--shard auto: neither a Slurm array task (SLURM_ARRAY_TASK_ID) nor a Kubernetes Indexed Job "
             "(JOB_COMPLETION_INDEX) is in the environment";
  return std::nullopt;
}

}  // namespace

std::optional<Shard> parse_shard(const std::string& text, std::string* error) {
  if (text == "auto") return shard_from_environment(error);
  const size_t slash = text.find('/');
  const auto k = slash == std::string::npos ? std::nullopt : parse_count(text.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : parse_count(text.substr(slash + 1));
  if (!k || !n || *n < 1 || *k >= *n) {
    if (error) *error = "--shard \"" + text + "\" must be K/N with 0 <= K < N (e.g. 0/4 .. 3/4)";
    return std::nullopt;
  }
  return Shard{*k, *n};
}

}  // namespace oplab::fuzz
