#!/bin/bash
# docs/shards/campaign.sbatch on a real Slurm cluster of one machine: installs Debian's Slurm
# (slurmctld, slurmd, the client commands) and munge when they are missing, starts munged,
# slurmctld and slurmd with a configuration of their own (in WORK, on ports of their own),
# submits the sbatch file with a small budget, waits for the array and the merge job it
# submits, and checks that the merged campaign equals the same campaign run in one process
# (same cases, same records, same verdicts, same failures). Stops the daemons it started.
#   bash tests/slurm/slurm_campaign.sh [OPLAB [WORK [CASES]]]
# Defaults: build/cli/oplab, a temporary folder, 6 cases per op. Needs root (apt-get, the
# daemons). Exit 0 equal, 1 not equal or the jobs failed, 77 cannot run here (not root, no
# package), which ctest reports as skipped.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OPLAB=$(realpath "${1:-$SRC/build/cli/oplab}")
WORK=${2:-$(mktemp -d /tmp/oplab_slurm.XXXXXX)}
CASES=${3:-6}
say() { echo "slurm test: $*"; }
fail() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || { say "needs root (apt-get, munged, slurmd)"; exit 77; }
missing=()
for p in slurmctld slurmd slurm-client munge; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { say "cannot install ${missing[*]}"; exit 77; }
fi

rm -rf "$WORK" && mkdir -p "$WORK"/{state,spool,out} || exit 1
WORK=$(realpath "$WORK")
host=$(hostname -s)
export SLURM_CONF=$WORK/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=oplab-test
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=oplab Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

# munged: the one of the machine if it runs, else one started here (as the munge user).
if ! munge -n >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge
  [ -s /etc/munge/munge.key ] || { mungekey --create >/dev/null 2>&1 && chown munge:munge /etc/munge/munge.key; }
  runuser -u munge -- /usr/sbin/munged || fail "munged did not start"
  started_munge=1
fi
munge -n | unmunge >/dev/null || fail "munge does not work"

cleanup() {
  [ -f "$WORK/slurmd.pid" ] && kill "$(cat "$WORK/slurmd.pid")" 2>/dev/null
  [ -f "$WORK/slurmctld.pid" ] && kill "$(cat "$WORK/slurmctld.pid")" 2>/dev/null
  [ "${started_munge:-0}" = 1 ] && pkill -u munge munged 2>/dev/null
  true
}
trap cleanup EXIT
/usr/sbin/slurmctld -f "$SLURM_CONF" -i || fail "slurmctld did not start: $(tail -n 3 "$WORK/slurmctld.log")"
/usr/sbin/slurmd -f "$SLURM_CONF" || fail "slurmd did not start: $(tail -n 3 "$WORK/slurmd.log")"
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
  sleep 1
done
sinfo -h -o %t | grep -qE '^(idle|mix|alloc)' || fail "the node never came up: $(sinfo 2>&1 | tail -n 2)"
say "cluster up: $(sinfo -h -o '%P %D %t %c')"

# The sbatch file as a user submits it, from the folder it writes into, with a small budget.
budget="--cases $CASES --shrink-time 0"
cd "$WORK" || exit 1
job=$(OPLAB="$OPLAB" OPLAB_OUT=out OPLAB_BUDGET="$budget" sbatch --parsable --cpus-per-task=1 "$SRC/docs/shards/campaign.sbatch") ||
  fail "sbatch refused the job"
say "submitted array job $job"
for _ in $(seq 600); do
  [ -f out/fuzz/merged/summary.json ] && [ -z "$(squeue -h 2>/dev/null)" ] && break
  sleep 1
done
[ -f out/fuzz/merged/summary.json ] || fail "no merged summary after 600 s: $(squeue 2>&1 | tail -n 3); $(tail -n 3 out/slurm-*.log 2>/dev/null)"
say "array and merge done: $(ls out/shards | wc -l) shards"

# The same campaign in one process.
# shellcheck disable=SC2086
"$OPLAB" fuzz --op all --backend all $budget --seed 1 --keep-going --out single >single.log 2>&1
python3 - out/fuzz/merged/summary.json single/summary.json <<'EOF' || exit 1
import json, sys
merged, single = (json.load(open(p)) for p in sys.argv[1:3])
# The seeded cheater whose answer depends on the call before it is the one backend whose values
# depend on which cases ran before, which sharding changes by design: its verdicts are
# compared, not its numbers.
HISTORY = "cheat-depends-on-previous-call"
def records(s):
    keep = ("cases", "verdicts", "divergences", "forward_only", "dtype", "role", "worst_agreeing")
    return {(r["op"], r["backend"], r["property"]): {k: r.get(k) for k in keep if r["backend"] != HISTORY or k != "worst_agreeing"}
            for r in s["records"]}
def failures(s):
    return sorted((f["id"], f["detail"] if f["backend"] != HISTORY else "", f.get("occurrences")) for f in s["failures"])
# (skip_reasons is left out: each process keeps its first 20 reasons per property, so the shards
# together keep more; the records' verdict counts hold every skip.)
checks = [
    ("status", merged["status"], "finished"),
    ("cases", merged["cases"], single["cases"]),
    ("records", records(merged), records(single)),
    ("failures", failures(merged), failures(single)),
    ("findings", merged["findings"], single["findings"]),
]
bad = [name for name, a, b in checks if a != b]
for name, a, b in checks:
    if a != b:
        print("slurm test: %s differ:\n  merged %s\n  single %s" % (name, str(a)[:600], str(b)[:600]))
if bad:
    sys.exit(1)
checks = sum(sum(r["verdicts"].values()) for r in merged["records"])
print("slurm test: merged equals single: %d cases, %d checks, %d records, %d failures" %
      (merged["cases"]["total"], checks, len(merged["records"]), len(merged["failures"])))
EOF
