#!/usr/bin/python3
"""Several objectives end to end (issue 26 section 4): the Fashion-MNIST MLP space searched for
(val_accuracy up, dollars down), Sift's multi-objective TPE with MO-ASHA pruning against Optuna
3.1's TPESampler(multivariate=True) on the same two objectives, which cannot prune a
multi-objective study (Optuna refuses trial.report there), and Sift's own MO-TPE without pruning.

Every arm trains with the same LibTorch worker on the same data: Optuna's arm asks Optuna for a
configuration, runs it as a one-trial `sift run` (enqueue: that configuration) and tells Optuna
the trial's last report. The time axis is training seconds: the sum of the reported epoch_seconds
(one thread per worker), so the Optuna arm is not charged for starting a process per trial.
A trial's point is its last report's (val_accuracy, dollars), counted from the moment it ended;
the hypervolume of the ended trials' points is taken against the reference (val_accuracy 0.5,
1.1 x the dearest trial of the seed's arms).

Equal wall-clock: Optuna's arm runs 20 trials; the pruned Sift arm may run --sift-trials (its
pruned trials are cheaper, so it fits more in the same seconds) and is read at Optuna's final
training seconds; trials it ran after that count for nothing.

  bench/search/frontier_e2e.py --sift build/bin/sift --out /tmp/frontier --seeds 1 2 3 4 5
"""
import argparse
import json
import os
import re
import sqlite3
import sys
import warnings

import optuna

import sift_runs

optuna.logging.set_verbosity(optuna.logging.WARNING)
warnings.simplefilter("ignore")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "fashion_mnist_frontier.yaml")
TRIALS = 20


def config(seed, scheduler=None, enqueue=None, trials=TRIALS):
    text = open(EXAMPLE).read()
    text = re.sub(r"max_trials: \d+", "max_trials: %d" % trials, text)
    # The bench's objectives only: no constraint.
    text = re.sub(r"^constraints:\n(  - .*\n)+", "", text, flags=re.M)
    text = re.sub(r"^seed: \d+", "seed: %d" % seed, text, flags=re.M)
    if scheduler:
        text = re.sub(r"^scheduler: .*$", "scheduler: {type: %s}" % scheduler, text, flags=re.M)
    if enqueue is not None:
        text = re.sub(r"max_trials: \d+", "max_trials: 1", text)
        text += "enqueue:\n  - %s\n" % json.dumps(enqueue)
    return text


REUSE = False  # --reuse: read the databases an earlier run left instead of training again


def run(sift, text, out_dir):
    return sift_runs.run(sift, text, out_dir, REUSE)


def reports(db):
    """(trial, epoch_seconds, val_accuracy, dollars) per report, in the order they came."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT number, metrics FROM reports ORDER BY created_at, rowid")
    out = []
    for number, m in rows:
        m = json.loads(m)
        out.append((number, m.get("epoch_seconds", 0.0), m.get("val_accuracy"), m.get("dollars")))
    return out


def hypervolume(points, ref):
    """(accuracy up, dollars down) against ref (accuracy, dollars)."""
    inside = sorted((d, -a) for a, d in points if a > ref[0] and d < ref[1])
    volume, best = 0.0, -ref[0]
    for d, neg_a in inside:
        if neg_a < best:
            volume += (ref[1] - d) * (best - neg_a)
            best = neg_a
    return volume


def trace(report_rows):
    """[(training seconds so far, points so far)] after each report. A trial's point counts once
    it ended (its last report): a running trial's newest epoch is a model it will move past, and
    counting it would credit every arm with cheap points that vanish."""
    last = {}
    for i, (trial, _, _, _) in enumerate(report_rows):
        last[trial] = i
    seconds, ended, out = 0.0, [], []
    for i, (trial, s, acc, dollars) in enumerate(report_rows):
        seconds += s
        if last[trial] == i and acc is not None and dollars is not None:
            ended.append((acc, dollars))
        out.append((seconds, list(ended)))
    return out


def optuna_arm(sift, seed, base):
    study = optuna.create_study(directions=["maximize", "minimize"],
                                sampler=optuna.samplers.TPESampler(seed=seed, multivariate=True))
    rows = []
    for i in range(TRIALS):
        t = study.ask()
        p = {"lr": t.suggest_float("lr", 3.0e-4, 1.0e-2, log=True),
             "hidden": t.suggest_int("hidden", 32, 512, log=True),
             "depth": t.suggest_int("depth", 1, 3),
             "dropout": t.suggest_float("dropout", 0.0, 0.4),
             "batch_size": t.suggest_categorical("batch_size", [64, 128, 256])}
        db = run(sift, config(seed, "fifo", p), "%s-optuna-%02d" % (base, i))
        mine = [(i, s, a, d) for _, s, a, d in reports(db)]
        rows += mine
        study.tell(t, [mine[-1][2], mine[-1][3]])
    return rows


def volume_at(tr, seconds, ref):
    """Hypervolume of the points ended within `seconds` of training."""
    points = [p for s, p in tr if s <= seconds]
    return hypervolume(points[-1], ref) if points and points[-1] else 0.0


def seconds_to(tr, target):
    for seconds, points in tr:
        if points and target is not None and hypervolume(points, target[1]) >= target[0]:
            return seconds
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default=os.path.join(ROOT, "build", "bin", "sift"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--sift-trials", type=int, default=TRIALS,
                    help="trials of the pruned Sift arm (read at Optuna's final seconds)")
    ap.add_argument("--reuse", action="store_true",
                    help="read the databases a run into --out left, train nothing new")
    a = ap.parse_args()
    global REUSE
    REUSE = a.reuse
    print("seed | Optuna MO-TPE: final HV, train s | Sift MO-TPE + MO-ASHA: final HV, train s,"
          " train s to Optuna's final HV (ratio), HV at Optuna's train s |"
          " Sift MO-TPE, no pruning: same")
    for seed in a.seeds:
        base = os.path.join(os.path.abspath(a.out), "seed%d" % seed)
        arms = {"optuna": optuna_arm(a.sift, seed, base),
                "asha": reports(run(a.sift, config(seed, trials=a.sift_trials),
                                    base + "-asha%s" % ("" if a.sift_trials == TRIALS
                                                         else a.sift_trials))),
                "fifo": reports(run(a.sift, config(seed, "fifo"), base + "-fifo"))}
        dearest = max(d for rows in arms.values() for _, _, _, d in rows if d is not None)
        ref = (0.5, 1.1 * dearest)
        traces = {k: trace(v) for k, v in arms.items()}
        final = {k: (hypervolume(t[-1][1], ref), t[-1][0]) for k, t in traces.items()}
        row = ["%d" % seed, "%.3g, %.0f" % final["optuna"]]
        for k in ("asha", "fifo"):
            to = seconds_to(traces[k], (final["optuna"][0], ref))
            reach = ("not reached" if to is None else
                     "%.0f (%.2fx)" % (to, to / final["optuna"][1]))
            at = volume_at(traces[k], final["optuna"][1], ref)
            row.append("%.3g, %.0f, %s, %.3g" % (final[k][0], final[k][1], reach, at))
        print(" | ".join(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
