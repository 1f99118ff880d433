#!/usr/bin/env bash
# A real single-node Slurm (Debian's slurmctld, slurmd and munge on 127.0.0.1, configured in a temp
# dir) runs a study's workers through deploy/slurm/sift-slurm.sh against a real `sift coordinator`.
# The coordinator has one token per role (--credentials-file): the study is submitted with the user
# token, the workers read the worker token on the node, and neither token is ever on a command line.
# Two array tasks get a preemption notice (SIGTERM), one is killed without notice (SIGKILL); the
# study must still complete with every trial terminal, the interrupted trials resumed from their
# checkpoints, every worker billed at its partition's price and the dollars adding up.
#   slurm_test.sh BUILD_DIR SOURCE_DIR     exit 0 pass, 1 fail, 77 skip (Slurm cannot start here)
set -uo pipefail

BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
SIFT=$BUILD/bin/sift
WORKER=$BUILD/bin/sift-worker
SPOT_PRICE=0.034 ONDEMAND_PRICE=0.085  # c6i.large in the built-in catalog, as partitions.conf maps

skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  for f in "$D"/coordinator.log "$D"/slurmctld.log "$D"/slurmd.log "$D"/worker-*.log; do
    [[ -f "$f" ]] && { echo "--- $f (last 30 lines)"; tail -n 30 "$f"; }
  done
  exit 1
}
sql() { sqlite3 -batch -noheader "$D/sift.db" "$1"; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  bash "$SRC/scripts/install-deps.sh" --slurm >/dev/null 2>&1 ||
    skip "slurmctld/slurmd/munge are not installed and scripts/install-deps.sh --slurm could not install them (no root, sudo or network)"
fi
for tool in slurmctld slurmd sbatch scancel squeue sinfo munged mungekey sqlite3 python3; do
  command -v "$tool" >/dev/null || skip "$tool is missing"
done

D=$(mktemp -d /tmp/sift-slurm-test.XXXXXX)
chmod 755 "$D"  # munged wants the socket's directory searchable by all
export SLURM_CONF=$D/slurm.conf
pids=()
cleanup() {
  # Jobs first (their slurmstepd outlive slurmd), then the daemons this test started, by pid.
  scancel --quiet --signal=KILL --full --partition=spot,normal 2>/dev/null
  for _ in $(seq 1 40); do
    [[ -z "$(squeue -h 2>/dev/null)" ]] && break
    sleep 0.25
  done
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  # slurmstepd daemonizes and outlives slurmd; ours (and anything left under them) carry this
  # cluster's SLURM_CONF in their environment.
  for env in /proc/[0-9]*/environ; do
    if { tr '\0' '\n' <"$env"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF"; then
      p=${env#/proc/}
      kill -9 "${p%/environ}" 2>/dev/null
    fi
  done
  [[ -n "${KEEP:-}" ]] || rm -rf "$D"
}
trap cleanup EXIT

# --- Slurm: munge, slurmctld, slurmd ---------------------------------------------------------
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
mungekey --create --keyfile="$D/munge.key" || skip "mungekey cannot create a key"
munged -F -f --socket="$D/munge.sock" --key-file="$D/munge.key" --pid-file="$D/munged.pid" \
  --log-file="$D/munged.log" --seed-file="$D/munged.seed" >"$D/munged.out" 2>&1 &
pids+=($!)
mkdir -p "$D/state" "$D/spool/node1"
# Containers (this one runs as root under gVisor) have no usable cgroups: track processes by
# /proc and bind no tasks; claim 8 CPUs on any machine so a few one-thread workers run at once.
cat >"$SLURM_CONF" <<EOF
ClusterName=sifttest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=30
MinJobAge=600
NodeName=node1 NodeAddr=127.0.0.1 NodeHostname=$host CPUs=8 RealMemory=16000 State=UNKNOWN
PartitionName=spot Nodes=node1 Default=YES MaxTime=INFINITE State=UP
PartitionName=normal Nodes=node1 MaxTime=INFINITE State=UP
EOF
for _ in $(seq 1 20); do
  [[ -S "$D/munge.sock" ]] && break
  sleep 0.25
done
[[ -S "$D/munge.sock" ]] || skip "munged did not start: $(cat "$D/munged.out")"
slurmctld -D -i >"$D/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N node1 >"$D/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 1 60); do
  state=$(sinfo -h -n node1 -o %T 2>/dev/null | head -n1)
  [[ "$state" == idle ]] && break
  sleep 0.5
done
[[ "$state" == idle ]] || skip "Slurm did not start here (node state '${state:-none}'): $(tail -n 3 "$D/slurmctld.log" "$D/slurmd.log" 2>/dev/null | tr '\n' ' ')"
echo "slurm: slurmctld :$ctld_port and slurmd :$slurmd_port up, node1 idle"

# --- Sift: a coordinator and a study whose trials outlast a preemption -----------------------
cat >"$D/study.yaml" <<'EOF'
name: slurm-test
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
  hidden: {type: int, low: 384, high: 512}
trainer: {model: mlp, depth: 2, batch_size: 64}
searcher: {type: random}
scheduler: {type: fifo}
budget: {max_trials: 5, max_epochs: 3}
seed: 5
data: {train_limit: 12000, val_size: 1000, test_limit: 500}
EOF
# One token per role, as docs/security.md makes them; only the coordinator reads the credentials.
(
  umask 077
  for role in worker user viewer; do
    python3 -c 'import secrets; print(secrets.token_hex(32))' >"$D/$role.token"
    echo "$role $(cat "$D/$role.token")"
  done >"$D/credentials"
)
"$SIFT" coordinator --listen 127.0.0.1:0 --db "$D/sift.db" --lease-timeout 4 --shutdown-when-idle \
  --credentials-file "$D/credentials" >"$D/coordinator.log" 2>&1 &
pids+=($!)
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$D/coordinator.log")
  [[ -n "$port" ]] && break
  sleep 0.1
done
[[ -n "$port" ]] || fail "sift coordinator did not start"

grep -q "tokens: one per role" "$D/coordinator.log" || fail "the coordinator did not load one token per role"

# Four spot workers and one on the normal partition, through the documented script: the study
# with the user token, the workers with the worker token. The submitter's SIFT_TOKEN is the user
# token too, which must not reach the workers (they would be refused).
export SIFT=$SIFT SIFT_WORKER=$WORKER
# The workers' temp folder (sbatch exports ALL): the task killed without notice leaves its
# scratch folder there, and it goes with $D.
export TMPDIR=$D/tmp
mkdir -p "$TMPDIR"
SIFT_TOKEN=$(cat "$D/user.token")
export SIFT_TOKEN
submit=(--coordinator "127.0.0.1:$port" --worker-token-file "$D/worker.token" --workers)
spot_job=$("$SRC/deploy/slurm/sift-slurm.sh" --config "$D/study.yaml" --token-file "$D/user.token" "${submit[@]}" 4 \
  --partition spot -- --cpus-per-task=1 --mem=1G --output="$D/worker-%A_%a.log") || fail "sift-slurm.sh (spot) failed"
normal_job=$("$SRC/deploy/slurm/sift-slurm.sh" "${submit[@]}" 1 --partition normal \
  -- --cpus-per-task=1 --mem=1G --output="$D/worker-%A_%a.log") || fail "sift-slurm.sh (normal) failed"
[[ "$spot_job" =~ ^[0-9]+$ && "$normal_job" =~ ^[0-9]+$ ]] || fail "sift-slurm.sh printed '$spot_job' / '$normal_job', not job ids"
echo "sbatch: spot array $spot_job (4 tasks), normal array $normal_job (1 task)"
unset SIFT_TOKEN

# Roles are enforced: a worker token cannot create a study, no token gets nothing, the viewer
# reads.
if "$SIFT" submit "$D/study.yaml" --coordinator "127.0.0.1:$port" --token-file "$D/worker.token" >"$D/denied.txt" 2>&1; then
  fail "sift submit with the worker token created a study"
fi
grep -q "worker token may not call" "$D/denied.txt" || fail "sift submit with the worker token: not refused for its role: $(cat "$D/denied.txt")"
if "$SIFT" status --coordinator "127.0.0.1:$port" >"$D/denied.txt" 2>&1; then
  fail "sift status without a token was answered"
fi
"$SIFT" status --coordinator "127.0.0.1:$port" --token-file "$D/viewer.token" >"$D/status.txt" 2>&1 ||
  fail "sift status with the viewer token: $(cat "$D/status.txt")"

# --- Interruptions: each of three spot workers, once its trial has reported an epoch -----------
# (so it has a checkpoint): the first two get a preemption notice as Slurm gives one, SIGTERM to
# the batch step, which is the worker (the script execs it); the third is killed without notice.
task_of() { local n=${1#slurm-"${spot_job}"_}; echo "${n%%-*}"; }
# Three different trials: a resumed trial on another spot worker is not interrupted again (the
# check below counts distinct interrupted trials).
term=() kill_task="" done_tasks=" " done_trials=" "
for _ in $(seq 1 480); do
  while read -r name number; do
    [[ -n "$name" ]] || continue
    t=$(task_of "$name")
    [[ "$done_tasks" == *" $t "* || "$done_trials" == *" $number "* ]] && continue
    if ((${#term[@]} < 2)); then
      scancel --batch --signal=TERM "${spot_job}_$t" || fail "scancel --batch --signal=TERM ${spot_job}_$t"
      term+=("$t")
    else
      scancel --batch --signal=KILL "${spot_job}_$t" || fail "scancel --batch --signal=KILL ${spot_job}_$t"
      kill_task=$t
    fi
    done_tasks+="$t " done_trials+="$number "
    [[ -n "$kill_task" ]] && break
  done < <(sql "SELECT w.name || ' ' || s.number FROM segments s JOIN workers w ON w.id = s.worker_id
    WHERE s.end IS NULL AND w.name LIKE 'slurm-${spot_job}\_%' ESCAPE '\\'
      AND EXISTS (SELECT 1 FROM reports r WHERE r.lease_id = s.lease_id) ORDER BY w.name")
  [[ -n "$kill_task" ]] && break
  sleep 0.25
done
[[ -n "$kill_task" ]] || fail "three spot workers never held a trial past its first epoch (interrupted: ${term[*]})"
# Workers are training now: no process's command line holds a token.
# (grep takes the token from its file: on its own command line it would find itself.)
for role in worker user viewer; do
  for c in /proc/[0-9]*/cmdline; do
    if { tr '\0' ' ' <"$c"; } 2>/dev/null | grep -qFf "$D/$role.token"; then
      fail "the $role token is on the command line of pid $(basename "$(dirname "$c")"): $(tr '\0' ' ' <"$c")"
    fi
  done
done
echo "interrupted: SIGTERM to tasks ${term[*]}, SIGKILL to task $kill_task of array $spot_job"

# --- The study ends, and so do the workers (--shutdown-when-idle + --exit-when-idle) ----------
study_state=""
for _ in $(seq 1 360); do
  study_state=$(sql "SELECT state FROM studies WHERE id = 1")
  [[ "$study_state" != RUNNING ]] && break
  sleep 0.5
done
[[ "$study_state" == COMPLETED ]] || fail "study state '$study_state', not COMPLETED"
for _ in $(seq 1 120); do
  [[ -z "$(squeue -h -j "$spot_job,$normal_job" 2>/dev/null)" ]] && break
  sleep 0.25
done
left=$(squeue -h -j "$spot_job,$normal_job" -o '%i %T' 2>/dev/null)
[[ -z "$left" ]] || fail "array tasks still queued or running after the study ended: $left"

# --- Checks ------------------------------------------------------------------------------------
# Every trial terminal, each with one report per epoch (no gap, no repeat).
[[ "$(sql "SELECT COUNT(*) FROM trials WHERE study_id = 1")" == 5 ]] || fail "not 5 trials"
bad=$(sql "SELECT number || ':' || state FROM trials WHERE state NOT IN ('COMPLETED','STOPPED')")
[[ -z "$bad" ]] || fail "trials not in a terminal state: $bad"
bad=$(sql "SELECT t.number FROM trials t WHERE (SELECT COUNT(DISTINCT epoch) FROM reports r
  WHERE r.study_id = 1 AND r.number = t.number) != 3")
[[ -z "$bad" ]] || fail "trials without exactly one report per epoch: $bad"

# The notices became hand-backs (exit 0 of the array task), the kill an expired lease.
for t in "${term[@]}"; do
  why=$(sql "SELECT s.end_reason FROM segments s JOIN workers w ON w.id = s.worker_id
    WHERE w.name LIKE 'slurm-${spot_job}\_${t}-%' ESCAPE '\\' AND s.end_reason != 'completed'")
  [[ "$why" == *preempted* ]] || fail "task $t got SIGTERM but its lease ended '${why:-completed}', not 'preempted'"
  grep -q "stopping on request" "$D/worker-${spot_job}_$t.log" || fail "task $t's worker did not stop cleanly"
done
why=$(sql "SELECT s.end_reason FROM segments s JOIN workers w ON w.id = s.worker_id
  WHERE w.name LIKE 'slurm-${spot_job}\_${kill_task}-%' ESCAPE '\\' AND s.end IS NOT NULL
  ORDER BY s.start DESC LIMIT 1")
[[ "$why" == expired ]] || fail "task $kill_task got SIGKILL but its lease ended '$why', not 'expired'"

# Each interrupted trial resumed from a checkpoint: a worker log says so, and the lease that
# followed the killed one started past epoch 0 (the trial had reported an epoch before the kill).
resumed=0
while read -r number; do
  grep -q "trial $number resumed from " "$D"/worker-*.log || fail "trial $number was interrupted but never resumed from a checkpoint"
  resumed=$((resumed + 1))
done < <(sql "SELECT DISTINCT number FROM segments WHERE end_reason IN ('preempted','expired')")
((resumed >= 3)) || fail "only $resumed interrupted trials, expected 3"
[[ "$(sql "SELECT COUNT(*) FROM segments n JOIN segments k ON k.number = n.number
  WHERE k.end_reason = 'expired' AND n.start > k.start AND n.start_epoch > 0")" -ge 1 ]] ||
  fail "the killed worker's trial did not resume past epoch 0"

# Prices from the partitions: spot workers at the spot price, the normal one on demand.
bad=$(sql "SELECT name || ' ' || market || ' ' || price_per_hour FROM workers WHERE
  NOT ((name LIKE 'slurm-${spot_job}\_%' ESCAPE '\\' AND market = 'spot' AND price_per_hour = $SPOT_PRICE)
    OR (name LIKE 'slurm-${normal_job}\_%' ESCAPE '\\' AND market = 'on-demand' AND price_per_hour = $ONDEMAND_PRICE))")
[[ -z "$bad" ]] || fail "workers billed at the wrong market or price: $bad"
[[ "$(sql "SELECT COUNT(*) FROM segments WHERE market = 'on-demand'")" -ge 1 ]] ||
  fail "the normal-partition worker never trained"

# Dollars add up: the ledger's segments, the report's per-trial dollars and its study total.
mkdir -p "$D/report"
"$SIFT" report --db "$D/sift.db" --out "$D/report" >"$D/report.txt" 2>&1 || fail "sift report failed: $(cat "$D/report.txt")"
ledger=$(sql "SELECT printf('%.9f', SUM((end - start) * price_per_hour / 3600)) FROM segments")
spot=$(sql "SELECT printf('%.9f', SUM((end - start) * price_per_hour / 3600)) FROM segments WHERE market = 'spot'")
python3 - "$D/report/results.json" "$ledger" "$spot" <<'EOF' || fail "dollars do not add up"
import json, sys
r = json.load(open(sys.argv[1]))
ledger, spot = float(sys.argv[2]), float(sys.argv[3])
total = r["study"]["dollars"]
trials = sum(t["dollars"] for t in r["trials"])
markets = r["study"]["dollars_by_market"]
print(f"dollars: ledger {ledger:.9f}, report total {total:.9f}, sum of trials {trials:.9f}, by market {markets}")
assert ledger > 0, "nothing was billed"
assert abs(total - ledger) < 1e-8, "the report's total is not the ledger's"
assert abs(trials - ledger) < 1e-8, "the trials' dollars do not sum to the total"
assert abs(markets.get("spot", 0) - spot) < 1e-8, "spot dollars differ from the spot segments"
assert abs(sum(markets.values()) - ledger) < 1e-8, "dollars by market do not sum to the total"
EOF

preempted=$(sql "SELECT COUNT(*) FROM segments WHERE end_reason = 'preempted'")
expired=$(sql "SELECT COUNT(*) FROM segments WHERE end_reason = 'expired'")
wasted=$(sql "SELECT printf('%.6f', SUM(wasted_seconds * price_per_hour / 3600)) FROM segments")
echo "PASS: study COMPLETED, 5 trials terminal, $preempted preempted + $expired expired leases, $resumed trials resumed from checkpoints, \$$ledger total (\$$wasted wasted)"
