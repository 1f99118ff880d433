#!/usr/bin/python3
"""Records real learning curves for the curve-stopping replay (bench/search/curve_replay.cc).

Runs `sift run` with random search and no early stopping (fifo) on the four sklearn tables of
bench/tables (diabetes, breast cancer, wine, digits) and on a slice of Fashion-MNIST, over a
space wider than a user's first guess (learning rates from too small to too large, narrow to
wide layers, dropout, weight decay), so the curves cross: slow starters, early plateaus,
divergence. Every epoch of every trial is written, with its measured seconds, to
bench/search/curves/NAME.csv (trial,epoch,value,seconds; value in the objective's own units),
after a first line `# METRIC DIRECTION`.

    bench/search/record_curves.py [--sift build/bin/sift] [--trials 80] [--only wine,digits]
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tables"))
import run as tables_run  # noqa: E402  (bench/tables/run.py: the tables and their CSV writer)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SPACE = """search_space:
  lr: {type: float, low: 1.0e-5, high: 1.0e-1, scale: log}
  hidden: {type: int, low: 8, high: 512, scale: log}
  dropout: {type: float, low: 0.0, high: 0.5}
  weight_decay: {type: float, low: 1.0e-6, high: 1.0e-2, scale: log}
searcher: {type: random}
scheduler: {type: fifo}
"""


def table_config(name, task, label, trials, epochs):
    metric = "val_rmse" if task == "regression" else "val_accuracy"
    direction = "minimize" if task == "regression" else "maximize"
    return f"""name: curves-{name}
objective: {{metric: {metric}, direction: {direction}}}
{SPACE}trainer: {{model: mlp, optimizer: adam, precision: fp32}}
data: {{file: {name}.csv, label: {label}, split: {{val: 0.2, test: 0.2, seed: 1}}}}
budget: {{max_trials: {trials}, max_epochs: {epochs}}}
seed: 11
worker: {{instance_type: local-cpu, market: on-demand, price_per_hour: 0, threads: 1}}
""", metric, direction


def fashion_config(trials, epochs):
    return f"""name: curves-fashion-mnist-mlp
objective: {{metric: val_accuracy, direction: maximize}}
{SPACE}trainer: {{model: mlp, depth: 2, optimizer: adam, precision: fp32}}
data: {{dir: /usr/share/datasets/fashion-mnist, train_limit: 6144, val_size: 1024, test_limit: 1000}}
budget: {{max_trials: {trials}, max_epochs: {epochs}}}
seed: 11
worker: {{instance_type: local-cpu, market: on-demand, price_per_hour: 0, threads: 1}}
""", "val_accuracy", "maximize"


def record(sift, workdir, name, config, metric, direction):
    cfg = os.path.join(workdir, name + ".yaml")
    open(cfg, "w").write(config)
    out = os.path.join(workdir, "run-" + name)
    subprocess.run([sift, "run", cfg, "--out", out], check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(os.path.join(out, "sift.db"))
    rows = db.execute("SELECT number, epoch, metrics FROM reports ORDER BY number, epoch")
    path = os.path.join(HERE, "curves", name + ".csv")
    n = 0
    with open(path, "w") as f:
        f.write(f"# {metric} {direction}\ntrial,epoch,value,seconds\n")
        for number, epoch, metrics in rows:
            m = json.loads(metrics)
            value = m.get(metric, float("nan"))
            f.write(f"{number},{epoch},{value!r},{m['epoch_seconds']!r}\n")
            n += 1
    print(f"{name}: {n} epochs -> {os.path.relpath(path, ROOT)}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sift", default=os.path.join(ROOT, "build", "bin", "sift"))
    p.add_argument("--trials", type=int, default=80)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--only", default="")
    a = p.parse_args()
    only = set(filter(None, a.only.split(",")))
    with tempfile.TemporaryDirectory() as workdir:
        for name, (task, features, x, label, labels) in tables_run.tables().items():
            if only and name not in only:
                continue
            tables_run.write_csv(os.path.join(workdir, name + ".csv"), features, x, label, labels)
            record(a.sift, workdir, name, *table_config(name, task, label, a.trials, a.epochs))
        if not only or "fashion_mnist_mlp" in only:
            record(a.sift, workdir, "fashion_mnist_mlp", *fashion_config(a.trials // 2, a.epochs // 2))


if __name__ == "__main__":
    main()
