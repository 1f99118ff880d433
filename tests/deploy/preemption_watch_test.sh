#!/usr/bin/env bash
# deploy/cloud-init/sift-preemption-watch against a fake metadata service of each cloud
# (tests/deploy/fake_metadata.py): it must find the cloud on its own, stay quiet while there is no
# notice, and on the notice SIGTERM the worker (here a stand-in that records the signal) once.
# Also checks the systemd units with systemd-analyze where it is installed, and that the cloud-init
# snippet parses.
#   preemption_watch_test.sh SOURCE_DIR       exit 0 pass, 1 fail, 77 skip (no curl or python3)
set -uo pipefail
SRC=$(cd "$1" && pwd)
WATCH=$SRC/deploy/cloud-init/sift-preemption-watch
for tool in curl python3; do command -v $tool >/dev/null || { echo "SKIP: $tool is missing"; exit 77; }; done
D=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [[ -n "${KEEP:-}" ]] || rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

for cloud in gce aws azure; do
  /usr/bin/python3 "$SRC/tests/deploy/fake_metadata.py" "$D/$cloud.port" "$cloud" --quiet-polls 3 &
  pids+=($!)
  for _ in $(seq 1 50); do [[ -s "$D/$cloud.port" ]] && break; sleep 0.1; done
  port=$(cat "$D/$cloud.port")
  # The worker stand-in: records each SIGTERM it receives, and leaves on the first.
  /usr/bin/python3 -c '
import signal, sys, time
def on_term(*_):
    open(sys.argv[1], "a").write("TERM\n"); sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
open(sys.argv[1] + ".ready", "w").close()
time.sleep(60)' "$D/$cloud.signals" &
  victim=$!
  pids+=($victim)
  for _ in $(seq 1 100); do [[ -e "$D/$cloud.signals.ready" ]] && break; sleep 0.1; done
  SIFT_METADATA_URL=http://127.0.0.1:$port SIFT_WATCH_INTERVAL=0.2 SIFT_ON_NOTICE="kill -TERM $victim" \
    timeout 30 "$WATCH" auto 2>"$D/$cloud.log"
  rc=$?
  wait "$victim" 2>/dev/null
  [[ $rc == 0 ]] || fail "$cloud: watcher exited $rc: $(cat "$D/$cloud.log")"
  grep -q "watching $cloud " "$D/$cloud.log" || fail "$cloud: detected as something else: $(cat "$D/$cloud.log")"
  [[ "$(cat "$D/$cloud.signals" 2>/dev/null)" == TERM ]] || fail "$cloud: the worker did not get exactly one SIGTERM"
  grep -q "did not answer" "$D/$cloud.log" && fail "$cloud: the watcher's requests were refused: $(cat "$D/$cloud.log")"
  echo "$cloud: notice seen after 3 quiet polls, worker got SIGTERM"
done

# No metadata service at all: the watcher says so and exits 2 instead of polling forever.
SIFT_METADATA_URL=http://127.0.0.1:9 timeout 30 "$WATCH" auto 2>"$D/none.log"
[[ $? == 2 ]] || fail "without a metadata service the watcher did not exit 2: $(cat "$D/none.log")"

# The systemd units parse and name only known settings (the binaries are the repo's stand-ins).
if command -v systemd-analyze >/dev/null; then
  mkdir "$D/units"
  for unit in "$SRC"/deploy/systemd/*.service; do
    sed -e "s|/usr/local/bin/sift-entrypoint|$SRC/deploy/bin/sift-entrypoint|" \
        -e "s|/usr/local/bin/sift-preemption-watch|$WATCH|" \
        -e "s|/usr/local/bin/sift-worker|/bin/true|; s|/usr/local/bin/sift |/bin/true |" "$unit" >"$D/units/$(basename "$unit")"
  done
  out=$(cd "$D/units" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify ./*.service 2>&1)
  [[ -z "$out" ]] || fail "systemd-analyze verify: $out"
  echo "systemd units: systemd-analyze verify clean"
fi
# The cloud-init snippet is YAML that cloud-init will take as a config (its first line says so).
[[ "$(head -n1 "$SRC/deploy/cloud-init/spot-worker.yaml")" == "#cloud-config" ]] || fail "spot-worker.yaml lacks #cloud-config"
/usr/bin/python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert {"write_files", "runcmd"} <= set(d), sorted(d)
assert any("sift-preemption-watch.service" in c for c in d["runcmd"] if isinstance(c, str))
' "$SRC/deploy/cloud-init/spot-worker.yaml" || fail "spot-worker.yaml does not parse or does not start the watcher"
echo PASS
