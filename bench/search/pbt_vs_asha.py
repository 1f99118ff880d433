#!/usr/bin/env python3
"""PBT against ASHA at equal dollars on the Fashion-MNIST CNN (issue 27 section 2): per seed, a
PBT study (4 members, lr and weight decay explored every 2 epochs, 8 epochs), then an ASHA study
(random search, stopping variant, eta 3) on the same space and data whose max_dollars is what
the PBT study spent. Prints, per seed and as medians, each one's best validation accuracy, the
held-out test accuracy of its best trial, its dollars and its trials.

  bench/search/pbt_vs_asha.py --sift build/bin/sift --out /tmp/pbt-vs-asha --seeds 1 2 3
"""
import argparse
import json
import os
import statistics

from sift_runs import run

CONFIG = """name: bench-{kind}-cnn
objective: {{metric: val_accuracy, direction: maximize}}
search_space:
  lr: {{type: float, low: 1.0e-4, high: 3.0e-2, scale: log}}
  weight_decay: {{type: float, low: 1.0e-5, high: 1.0e-2, scale: log}}
trainer: {{model: cnn, depth: 2, kernel_size: 3, channels: 16, batch_size: 128, optimizer: adamw,
          precision: fp32}}
searcher: {{type: random}}
scheduler: {scheduler}
budget: {budget}
seed: {seed}
data: {{dir: /usr/share/datasets/fashion-mnist, train_limit: 8000, val_size: 2000, test_limit: 2000}}
worker: {{instance_type: local-cpu, market: on-demand}}
"""

PBT = "{type: pbt, population: 4, interval_epochs: 2, quantile: 0.25, mutable: [lr, weight_decay]}"
ASHA = "{type: asha, eta: 3, min_resource: 1, variant: stopping}"


def outcome(out_dir):
    j = json.load(open(os.path.join(out_dir, "results.json")))
    best = j["study"]["best_trial"]
    trial = next(t for t in j["trials"] if t["number"] == best)
    test = trial.get("test", {}).get("scores", {}).get("test_accuracy", float("nan"))
    return {"val": trial["objective"], "test": test, "dollars": j["study"]["dollars"],
            "trials": j["study"]["trials"]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sift", default="build/bin/sift")
    p.add_argument("--out", default="/tmp/pbt-vs-asha")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    a = p.parse_args()
    rows = []
    for seed in a.seeds:
        pbt_dir = os.path.join(a.out, "pbt-%d" % seed)
        run(a.sift, CONFIG.format(kind="pbt", scheduler=PBT, budget="{max_epochs: 8}", seed=seed),
            pbt_dir)
        pbt = outcome(pbt_dir)
        asha_dir = os.path.join(a.out, "asha-%d" % seed)
        budget = "{max_trials: 60, max_epochs: 8, max_dollars: %.10f}" % pbt["dollars"]
        run(a.sift, CONFIG.format(kind="asha", scheduler=ASHA, budget=budget, seed=seed), asha_dir)
        asha = outcome(asha_dir)
        rows.append((seed, pbt, asha))
        print("seed %d: pbt val %.4f test %.4f $%.6f %d trials | asha val %.4f test %.4f $%.6f "
              "%d trials" % (seed, pbt["val"], pbt["test"], pbt["dollars"], pbt["trials"],
                             asha["val"], asha["test"], asha["dollars"], asha["trials"]),
              flush=True)
    for name, i in (("pbt", 1), ("asha", 2)):
        print("median %s: val %.4f test %.4f $%.6f" % (
            name, statistics.median(r[i]["val"] for r in rows),
            statistics.median(r[i]["test"] for r in rows),
            statistics.median(r[i]["dollars"] for r in rows)))


if __name__ == "__main__":
    main()
