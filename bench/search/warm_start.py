#!/usr/bin/env python3
"""Warm start on Fashion-MNIST (issue 27 section 3): per seed, a first study (the example as it
is: random search), then a second on the same space with TPE warm-started from the first's
database, and the same TPE study cold. Prints, per seed, the first's best validation accuracy
and CPU seconds, and the CPU seconds each second study took to reach that accuracy.

CPU seconds are the leased worker-seconds times each worker's threads (segments table): what the
trials held of the machine, whatever else ran on it.

  bench/search/warm_start.py --sift build/bin/sift --out /tmp/warm --seeds 7 8 9
"""
import argparse
import json
import os
import re
import sqlite3
import sys

from sift_runs import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "fashion_mnist_mlp.yaml")


def config(seed, searcher=None, warm_db=None):
    text = open(EXAMPLE).read()
    text = re.sub(r"^seed: \d+", "seed: %d" % seed, text, flags=re.M)
    if searcher:
        text = re.sub(r"^searcher: .*$", "searcher: {type: %s}" % searcher, text, flags=re.M)
    if warm_db:
        text += "\nwarm_start: {studies: [1], database: %s}\n" % warm_db
    # Data paths are absolute in the example, so the copy may live anywhere.
    return text


def cpu_seconds(db, until=None):
    con = sqlite3.connect(db)
    threads = dict(con.execute("SELECT id, threads FROM workers"))
    total = 0.0
    for worker, start, end in con.execute("SELECT worker_id, start, end FROM segments"):
        end = end if end is not None else start
        if until is not None:
            end = min(end, until)
        total += max(0.0, end - start) * max(1, threads.get(worker, 1))
    return total


def reports(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT created_at, metrics FROM reports ORDER BY created_at")
    return [(at, json.loads(m).get("val_accuracy")) for at, m in rows]


def first_reaching(db, target):
    for at, acc in reports(db):
        if acc is not None and acc >= target:
            return at, cpu_seconds(db, at)
    return None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default=os.path.join(ROOT, "build", "bin", "sift"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[7])
    ap.add_argument("--no-cold", action="store_true", help="skip the cold TPE study")
    a = ap.parse_args()
    print("seed | first: best acc, CPU s (to its best) | warm TPE: CPU s to it (ratio) |"
          " cold TPE: CPU s to it (ratio)")
    for seed in a.seeds:
        base = os.path.join(os.path.abspath(a.out), "seed%d" % seed)
        first = run(a.sift, config(seed), base + "-first")
        best = max(acc for _, acc in reports(first) if acc is not None)
        total = cpu_seconds(first)
        _, to_best = first_reaching(first, best)
        row = ["%d" % seed, "%.4f, %.0f (%.0f)" % (best, total, to_best)]
        studies = [("warm", "tpe", first)] + ([] if a.no_cold else [("cold", "tpe", None)])
        for name, searcher, warm_db in studies:
            db = run(a.sift, config(seed + 100, searcher, warm_db), base + "-" + name)
            _, cpu = first_reaching(db, best)
            if cpu is None:
                row.append("not reached in %.0f (best %.4f)" %
                           (cpu_seconds(db), max(x for _, x in reports(db) if x is not None)))
            else:
                row.append("%.0f (%.2fx)" % (cpu, cpu / total))
        print(" | ".join(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
