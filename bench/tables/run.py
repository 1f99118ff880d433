#!/usr/bin/python3
"""Sift's first-guess search on four small tables against scikit-learn's defaults, same split.

For diabetes (regression), breast cancer, wine and digits (classification), all shipped with
Debian's python3-sklearn, this writes the table as a CSV and the few-line config a user writes
first (lr and width searched, nothing else set), runs `sift run` on it, and fits scikit-learn's
MLP with its defaults and the linear model on the very rows Sift trained on, scoring both on
Sift's validation and test rows. Sift's split is reproduced here (SplitRows in
common/data/dataset.cc) and checked label by label against the split the worker cached.

    bench/tables/run.py [--sift build/bin/sift] [--trials 12] [--epochs 30] [--out DIR]
                        [--only diabetes,wine]

Prints a Markdown table and the machine it ran on, and writes them to OUT/table.md.
"""
import argparse
import glob
import json
import math
import os
import platform
import shutil
import struct
import subprocess
import sys
import time

import numpy as np
from sklearn import datasets
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

M64 = (1 << 64) - 1
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- the tables ---------------------------------------------------------------------------------

def tables():
    """name -> (task, feature names, X, label column, label texts)."""
    d = datasets.load_diabetes(scaled=False)
    b = datasets.load_breast_cancer()
    w = datasets.load_wine()
    g = datasets.load_digits()
    return {
        "diabetes": ("regression", list(d.feature_names), d.data, "progression",
                     [repr(float(t)) for t in d.target]),
        "breast_cancer": ("classification", list(b.feature_names), b.data, "diagnosis",
                          [str(b.target_names[t]) for t in b.target]),
        "wine": ("classification", list(w.feature_names), w.data, "cultivar",
                 [str(w.target_names[t]) for t in w.target]),
        "digits": ("classification", [f"p{i}" for i in range(g.data.shape[1])], g.data, "digit",
                   [str(int(t)) for t in g.target]),
    }


def write_csv(path, features, x, label, labels):
    with open(path, "w") as f:
        f.write(",".join(features + [label]) + "\n")
        for row, y in zip(x, labels):
            f.write(",".join(repr(float(v)) for v in row) + "," + y + "\n")


def first_guess_config(name, task, label):
    metric = "val_rmse" if task == "regression" else "val_accuracy"
    return f"""name: tables-{name}
objective: {{metric: {metric}}}
search_space:
  lr: {{type: float, low: 1.0e-4, high: 3.0e-2, scale: log}}
  hidden: {{type: int, low: 16, high: 256, scale: log}}
trainer: {{model: mlp, optimizer: adam}}
data: {{file: {name}.csv, label: {label}, split: {{val: 0.2, test: 0.2, seed: 1}}}}
budget: {{max_trials: {{trials}}, max_epochs: {{epochs}}}}
"""


# ---- Sift's split, reproduced -------------------------------------------------------------------

def splitmix_permutation(n, state):
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        state = (state + 0x9e3779b97f4a7c15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
        z ^= z >> 31
        j = z % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def class_key(label):
    try:
        v = float(label)
    except ValueError:
        return label
    return str(int(v)) if v == math.floor(v) and abs(v) < 1e15 else repr(v)


def sift_split(labels, val, test, seed, stratify):
    groups = {}
    for i, y in enumerate(labels):
        groups.setdefault(class_key(y) if stratify else "", []).append(i)
    train, va, te = [], [], []
    group_seed = seed
    for key in sorted(groups, key=lambda k: k.encode()):  # std::map's byte order
        rows = groups[key]
        n = len(rows)
        n_val, n_test = math.floor(n * val + 0.5), math.floor(n * test + 0.5)  # llround
        while n_val + n_test >= n and n_test > 0:
            n_test -= 1
        while n_val + n_test >= n and n_val > 0:
            n_val -= 1
        order = splitmix_permutation(n, (group_seed * 0x9e3779b97f4a7c15 + 0x632be59bd9b4e019) & M64)
        group_seed += 1
        for k in range(n):
            (va if k < n_val else te if k < n_val + n_test else train).append(rows[order[k]])
    return sorted(train), sorted(va), sorted(te)


def cached_labels(cache_dir):
    """The worker's cache entry (worker/trainer/data.cc, version 4): class names, split labels."""
    (path,) = glob.glob(os.path.join(cache_dir, "sift", "data-*.sift"))
    b = open(path, "rb").read()[24:]  # magic, version, length, crc32
    pos = 0

    def i64():
        nonlocal pos
        pos += 8
        return struct.unpack_from("<q", b, pos - 8)[0]

    def text():
        nonlocal pos
        n = i64()
        pos += n
        return b[pos - n:pos].decode()

    text()  # task
    i64()  # outputs
    for _ in range(i64()):
        i64()
    names = [text() for _ in range(i64())]
    pos += 16  # target mean and deviation
    text()  # the input's preparation: format, columns (name, one-hot vocabulary), scales
    for _ in range(i64()):
        text()
        for _ in range(i64()):
            text()
    pos += 8  # divisor
    for _ in range(2):  # means, deviations
        n = i64()  # (not `pos += 8 * i64()`: that adds to pos as it was before the read)
        pos += 8 * n
    splits = []
    for _ in range(3):
        dims = [i64() for _ in range(i64())]
        pos += 4 * int(np.prod(dims))
        fmt = "f" if i64() == 1 else "q"
        splits.append(list(struct.unpack_from(f"<{dims[0]}{fmt}", b, pos)))
        pos += struct.calcsize(f"<{dims[0]}{fmt}")
    return names, splits


# ---- the runs -----------------------------------------------------------------------------------

def run_sift(sift, workdir, name, config, workers):
    cfg = os.path.join(workdir, name + ".yaml")
    open(cfg, "w").write(config)
    out = os.path.join(workdir, name + "-run")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(workdir, name + "-cache"))
    for stale in (out, env["XDG_CACHE_HOME"]):  # a fresh study, and only this run's cache entry
        shutil.rmtree(stale, ignore_errors=True)
    t0 = time.time()
    p = subprocess.run([sift, "run", cfg, "--out", out, "--workers", str(workers)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"sift run {cfg} failed ({p.returncode}):\n{p.stdout[-3000:]}")
    r = json.load(open(os.path.join(out, "results.json")))
    # The best trial's last epoch: what the study ranked it by, and the model its test score is of.
    metric = r["study"]["objective"]
    best = next(t for t in r["trials"] if t["number"] == r["study"]["best_trial"])
    batch = sorted({t["final_metrics"].get("batch_size") for t in r["trials"]} - {None})
    precision = sorted({k[len("precision_"):] for t in r["trials"] for k in t["final_metrics"]
                        if k.startswith("precision_")})
    return {"val": best["curve"][-1]["metrics"][metric], "test": best["test"]["scores"],
            "seconds": time.time() - t0, "batch": batch, "env": env, "precision": precision,
            "workers": r["environment"]}


def sklearn_scores(task, x, labels, split):
    train, val, test = (np.array(s) for s in split)
    if task == "regression":
        y = np.array([float(v) for v in labels])
        models = {"MLP defaults": MLPRegressor(random_state=0), "linear": LinearRegression()}
        score = lambda m, rows: math.sqrt(np.mean((m.predict(x[rows]) - y[rows]) ** 2))
    else:
        y = np.array(labels)
        models = {"MLP defaults": MLPClassifier(random_state=0),
                  "linear": LogisticRegression(max_iter=1000)}
        score = lambda m, rows: float(np.mean(m.predict(x[rows]) == y[rows]))
    out = {}
    for what, model in models.items():
        m = make_pipeline(StandardScaler(), model).fit(x[train], y[train])
        out[what] = (score(m, val), score(m, test))
    return out


def machine(sift, run):
    """The CPU, and how `sift run` set up its workers (results.json's environment)."""
    info = open("/proc/cpuinfo").read().split("\n\n")[0]
    field = lambda k: next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith(k)), "")
    cpu = field("model name") or platform.processor()
    flags = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in field("flags").split()]
    libs = subprocess.run(["ldd", os.path.join(os.path.dirname(sift), "sift-worker")],
                          stdout=subprocess.PIPE, text=True).stdout
    blas = [n for n in ("mkl", "openblas", "blis", "dnnl") if n in libs]
    env = run["workers"]
    preload = env.get("LD_PRELOAD", "")
    alloc = next((n for n in ("jemalloc", "tcmalloc", "mimalloc") if n in preload + libs),
                 "glibc malloc")
    try:
        from threadpoolctl import threadpool_info
        np_blas = ", ".join(sorted({f"{i['internal_api']} {i.get('version') or ''}".strip()
                                    for i in threadpool_info() if i["user_api"] == "blas"}))
    except ImportError:
        np_blas = "unknown (no threadpoolctl)"
    return (f"{cpu} ({', '.join(flags)}), {os.cpu_count()} hardware threads shared with other "
            f"work; sift run: {env.get('workers')} workers x {env.get('threads_per_worker')} "
            f"thread, precision auto resolved to {'/'.join(run['precision'])}; sift-worker links "
            f"{', '.join(blas) or 'no BLAS library by name'} (LibTorch; OPENBLAS_CORETYPE "
            f"{env.get('OPENBLAS_CORETYPE', 'unset')}), allocator {alloc}; "
            f"scikit-learn {__import__('sklearn').__version__}, numpy {np.__version__} with "
            f"BLAS {np_blas}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sift", default=os.path.join(ROOT, "build", "bin", "sift"))
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="/tmp/sift-bench-tables")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name, (task, features, x, label, labels) in tables().items():
        if args.only and name not in args.only.split(","):
            continue
        write_csv(os.path.join(args.out, name + ".csv"), features, x, label, labels)
        config = first_guess_config(name, task, label).replace("{trials}", str(args.trials))
        config = config.replace("{epochs}", str(args.epochs))
        s = run_sift(args.sift, args.out, name, config, args.workers)
        split = sift_split(labels, 0.2, 0.2, 1, stratify=task == "classification")
        names, cached = cached_labels(s["env"]["XDG_CACHE_HOME"])
        for rows_, got in zip(split, cached):
            want = ([float(np.float32(float(labels[i]))) for i in rows_] if task == "regression"
                    else [names.index(class_key(labels[i])) for i in rows_])
            if list(got) != want:
                sys.exit(f"{name}: the reproduced split differs from the one Sift cached")
        sk = sklearn_scores(task, x, labels, split)
        unit = "RMSE" if task == "regression" else "accuracy"
        test_key = "test_rmse" if task == "regression" else "test_accuracy"
        rows.append((name, unit, len(split[0]), len(split[1]), len(split[2]), s, sk, test_key))
        print(f"{name}: done in {s['seconds']:.0f} s", file=sys.stderr)
    lines = [f"`bench/tables/run.py --trials {args.trials} --epochs {args.epochs}` "
             f"({time.strftime('%Y-%m-%d')}; val / test, Sift's split checked against its cache)", "",
             "| table | metric | rows train/val/test | Sift best (batch) | sklearn MLP defaults | "
             "sklearn linear | Sift >= MLP defaults (val) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, unit, n_tr, n_va, n_te, s, sk, test_key in rows:
        better = s["val"] <= sk["MLP defaults"][0] if unit == "RMSE" else s["val"] >= sk["MLP defaults"][0]
        lines.append(
            f"| {name} | val {unit} | {n_tr}/{n_va}/{n_te} | {s['val']:.4g} / {s['test'][test_key]:.4g} "
            f"({'/'.join(str(int(b)) for b in s['batch'])}) | "
            f"{sk['MLP defaults'][0]:.4g} / {sk['MLP defaults'][1]:.4g} | "
            f"{sk['linear'][0]:.4g} / {sk['linear'][1]:.4g} | {'yes' if better else 'NO'} |")
    lines += ["", "Machine: " + machine(args.sift, rows[-1][5])]
    text = "\n".join(lines) + "\n"
    open(os.path.join(args.out, "table.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
