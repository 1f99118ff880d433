#!/usr/bin/python3
"""Optuna 3.1's multi-objective samplers on ZDT1, ZDT2 and DTLZ2 (two objectives, 10 variables)
and on ZDT1 over a mixed space (8 floats, an integer, a categorical).

Prints `mo.<problem>.<sampler>.<budget> <median hypervolume>` lines that mo_quality_bench reads
back (see run.sh). Hypervolume of every point evaluated so far, against the fixed reference
point of each problem (mo_quality_bench.cc has the same problems and references).
Usage: /usr/bin/python3 mo_reference.py [seeds] [problem,...]   (10 seeds and all problems
unless given)
"""
import math
import sys
import warnings

import numpy as np
import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)
warnings.simplefilter("ignore")

SEEDS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
ONLY = sys.argv[2].split(",") if len(sys.argv) > 2 else None
BUDGETS = (100, 200)
DIMS = 10


def zdt1(x):
    g = 1 + 9 * sum(x[1:]) / (len(x) - 1)
    return x[0], g * (1 - math.sqrt(x[0] / g))


def zdt2(x):
    g = 1 + 9 * sum(x[1:]) / (len(x) - 1)
    return x[0], g * (1 - (x[0] / g) ** 2)


def dtlz2(x):
    g = sum((xi - 0.5) ** 2 for xi in x[1:])
    return ((1 + g) * math.cos(x[0] * math.pi / 2), (1 + g) * math.sin(x[0] * math.pi / 2))


def cube(fn):
    return lambda t: fn([t.suggest_float(f"x{i}", 0, 1) for i in range(DIMS)])


def zdt1_mixed(t):
    """ZDT1 whose last two variables are an integer k (k / 9) and a categorical (0, 0.5, 1)."""
    x = [t.suggest_float(f"x{i}", 0, 1) for i in range(DIMS - 2)]
    x.append(t.suggest_int("k", 0, 9) / 9)
    x.append({"a": 0.0, "b": 0.5, "c": 1.0}[t.suggest_categorical("c", ["a", "b", "c"])])
    return zdt1(x)


# Both objectives minimized; the references bound every value the problem can take.
PROBLEMS = (("zdt1", cube(zdt1), (1.1, 11.0)), ("zdt2", cube(zdt2), (1.1, 11.0)),
            ("dtlz2", cube(dtlz2), (3.5, 3.5)), ("zdt1_mixed", zdt1_mixed, (1.1, 11.0)))


def hypervolume(points, ref):
    """Two minimized objectives: sort by the first, sweep the second."""
    inside = sorted(p for p in points if p[0] < ref[0] and p[1] < ref[1])
    volume, best2 = 0.0, ref[1]
    for f1, f2 in inside:
        if f2 < best2:
            volume += (ref[0] - f1) * (best2 - f2)
            best2 = f2
    return volume


SAMPLERS = {
    "optuna_tpe": lambda s: optuna.samplers.TPESampler(seed=s),
    "optuna_tpe_multivariate": lambda s: optuna.samplers.TPESampler(seed=s, multivariate=True),
    "optuna_motpe": lambda s: optuna.samplers.MOTPESampler(seed=s),
    "optuna_nsga2": lambda s: optuna.samplers.NSGAIISampler(seed=s),
}


def main():
    print(f"info.optuna {optuna.__version__}")
    for name, fn, ref in PROBLEMS:
        if ONLY and name not in ONLY:
            continue
        for sampler_name, make in SAMPLERS.items():
            volumes = {b: [] for b in BUDGETS}
            for seed in range(SEEDS):
                study = optuna.create_study(directions=["minimize", "minimize"], sampler=make(seed))
                study.optimize(fn, n_trials=max(BUDGETS))
                values = [tuple(t.values) for t in study.trials]
                for b in BUDGETS:
                    volumes[b].append(hypervolume(values[:b], ref))
            for b in BUDGETS:
                print(f"mo.{name}.{sampler_name}.{b} {np.median(volumes[b]):.6g}", flush=True)


if __name__ == "__main__":
    main()
