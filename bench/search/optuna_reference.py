"""Optuna 3.1 reference for bench/search: the same problems, seeds and budgets as the C++ bench.

Prints `key value` lines that quality_bench / speed_bench read back (see run.sh).
Usage: /usr/bin/python3 optuna_reference.py quality|speed [seeds]   (quality: 20 seeds unless given)
"""
import math
import sys
import time
import warnings

import numpy as np
import optuna
import optuna.samplers._tpe.parzen_estimator as parzen

optuna.logging.set_verbosity(optuna.logging.WARNING)
SEEDS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
BUDGETS = (25, 50, 100)


def branin(x1, x2):
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


ALPHA = [1.0, 1.2, 3.0, 3.2]
A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8],
     [17, 8, 0.05, 10, 0.1, 14]]
P = [[0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
     [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
     [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
     [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381]]


def hartmann6(x):
    return -sum(ALPHA[i] * math.exp(-sum(A[i][j] * (x[j] - P[i][j]) ** 2 for j in range(6)))
                for i in range(4))


def obj_branin(t):
    return branin(t.suggest_float("x1", -5, 10), t.suggest_float("x2", 0, 15))


def obj_hartmann6(t):
    return hartmann6([t.suggest_float(f"x{i}", 0, 1) for i in range(6)])


def obj_mixed(t):
    x1, x2 = t.suggest_float("x1", -5, 10), t.suggest_float("x2", 0, 15)
    k = t.suggest_int("k", 1, 10)
    c = t.suggest_categorical("c", ["a", "b", "c"])
    return branin(x1, x2) + 0.5 * (k - 3) ** 2 + {"a": 0.0, "b": 2.0, "c": 5.0}[c]


FUNCTIONS = [("branin", obj_branin, 0.397887357729739),
             ("hartmann6", obj_hartmann6, -3.32236801141551),
             ("mixed", obj_mixed, 0.397887357729739)]


SHIPPED_LOGPDF = parzen.truncnorm.logpdf


def fixed_logpdf(x, a, b, loc=0, scale=1):
    # Optuna 3.1.0's truncated-normal logpdf omits -log(scale) (optuna#5109, fixed in #5110).
    return SHIPPED_LOGPDF(x, a, b, loc, scale) - np.log(scale)


# The Optuna 3.1 variants: random, TPE as shipped, TPE multivariate (as shipped otherwise), TPE
# with its logpdf fixed (univariate). quality_bench prints them and the best TPE of the three.
SAMPLERS = ("optuna_random", "optuna_tpe", "optuna_tpe_multivariate", "optuna_tpe_logpdf_fixed")


def make_sampler(sampler_name, seed):
    if sampler_name == "optuna_random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed, multivariate=sampler_name.endswith("multivariate"))


def quality():
    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
    for name, fn, opt in FUNCTIONS:
        for sampler_name in SAMPLERS:
            parzen.truncnorm.logpdf = (fixed_logpdf if sampler_name.endswith("fixed")
                                       else SHIPPED_LOGPDF)
            regrets = {b: [] for b in BUDGETS}
            for seed in range(SEEDS):
                sampler = make_sampler(sampler_name, seed)
                study = optuna.create_study(sampler=sampler)
                study.optimize(fn, n_trials=max(BUDGETS))
                vals = [t.value for t in study.trials]
                for b in BUDGETS:
                    regrets[b].append(min(vals[:b]) - opt)
            for b in BUDGETS:
                print(f"quality.{name}.{sampler_name}.{b} {np.median(regrets[b]):.6g}", flush=True)


def speed():
    rng = np.random.RandomState(0)
    dists = {f"x{i}": optuna.distributions.FloatDistribution(0, 1) for i in range(6)}
    for n in (100, 1000, 5000):
        trials = []
        for _ in range(n):
            x = rng.rand(6)
            trials.append(optuna.trial.create_trial(
                params={f"x{i}": float(x[i]) for i in range(6)}, distributions=dists,
                value=hartmann6(x)))
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
        study.add_trials(trials)
        times = []
        for _ in range(5 if n >= 5000 else 10):
            t0 = time.perf_counter()
            trial = study.ask(fixed_distributions=dists)
            times.append(time.perf_counter() - t0)
            study.tell(trial, hartmann6([trial.params[f"x{i}"] for i in range(6)]))
        print(f"speed.optuna_tpe.{n} {np.median(times) * 1e3:.4g}", flush=True)


if __name__ == "__main__":
    print(f"info.optuna {optuna.__version__}")
    print(f"info.numpy {np.__version__}")
    {"quality": quality, "speed": speed}[sys.argv[1]]()
