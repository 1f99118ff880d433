"""Gradient-boosted trees (Debian's python3-xgboost) tuned by Sift as a command trial: one Sift
epoch is `rounds_per_epoch` boosting rounds, so ASHA and plateau stopping prune a weak setting
after a few dozen trees. Each epoch saves the booster into SIFT_CHECKPOINT_DIR, then reports
val_rmse on a fixed validation split; a resumed lease continues from the saved booster.
The parameters come as JSON in SIFT_PARAMS; every one but rounds_per_epoch goes to xgboost as is.
By hand: SIFT_PARAMS='{"eta": 0.1}' /usr/bin/python3 train.py --data ../sklearn/data/diabetes.csv
"""

import argparse
import csv
import os
import signal
import sys

import numpy as np
import xgboost as xgb

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "command"))
import sift_report  # noqa: E402

MODEL = "model.ubj"


def load_split(path, label, seed=1):
    """The same 60/20/20 train/val/test rows for every trial (and for compare_defaults.py)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, data = rows[0], np.array(rows[1:], dtype=np.float64)
    y = data[:, header.index(label)]
    x = np.delete(data, header.index(label), axis=1)
    order = np.random.default_rng(seed).permutation(len(y))
    n_val = n_test = len(y) // 5
    val, test, train = np.split(order, [n_val, n_val + n_test])
    return [(x[i], y[i]) for i in (train, val, test)]


def rmse(booster, x, y, rounds):
    pred = booster.predict(xgb.DMatrix(x), iteration_range=(0, rounds))
    return float(np.sqrt(np.mean((pred - y) ** 2)))


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def xgb_params(params, seed, y_train):
    # base_score at the label mean (xgboost 2.0's default; 1.7's is 0.5): otherwise the first
    # epochs measure the distance to the mean, and ASHA's first rung would favour a large eta.
    p = {"objective": "reg:squarederror", "tree_method": "hist", "nthread": 1, "seed": seed,
         "base_score": float(np.mean(y_train))}
    p.update({k: v for k, v in params.items() if k != "rounds_per_epoch"})
    return p


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../sklearn/data/diabetes.csv")
    parser.add_argument("--label", default="progression")
    args, _ = parser.parse_known_args()  # Sift also passes each parameter as --name=value

    # SIGTERM (stopped, paused, preempted): finish the epoch in progress (milliseconds here; keep
    # an epoch well under trial.grace_seconds), save it, leave. A resumed lease reports it.
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))

    params = sift_report.params()
    per_epoch = int(params.get("rounds_per_epoch", 20))
    seed = int(os.environ.get("SIFT_SEED", "0")) % (2**31)
    (x_train, y_train), (x_val, y_val), _ = load_split(args.data, args.label)
    dtrain = xgb.DMatrix(x_train, label=y_train)
    # SIFT_SEED and SIFT_PARAMS reproduce the trial by hand.
    print("xgboost %s, seed %d, %d rounds per epoch" % (xgb.__version__, seed, per_epoch))
    saved = sift_report.checkpoint_path(MODEL)

    def report(epoch, booster):
        rounds = epoch * per_epoch
        sift_report.report(epoch=epoch, val_rmse=rmse(booster, x_val, y_val, rounds),
                           train_rmse=rmse(booster, x_train, y_train, rounds), trees=rounds)

    done = 0
    if os.path.exists(saved):
        booster = xgb.Booster(model_file=saved)
        done = booster.num_boosted_rounds() // per_epoch
        print("restored a booster of %d rounds (epoch %d)" % (done * per_epoch, done),
              file=sys.stderr)
        # Epochs the folder holds but Sift has not seen: one saved on SIGTERM, or one saved before
        # the worker paused us to pack the folder (a checkpoint can be an epoch ahead of its name).
        for epoch in range(sift_report.epoch_start() + 1, done + 1):
            report(epoch, booster)

    for epoch in range(done + 1, sift_report.max_epochs() + 1):
        # A fresh booster per epoch, seeded by the epoch: sampling (subsample, colsample_*) then
        # draws the same rows whether the trial ran straight through or resumed from the folder.
        booster = xgb.Booster(xgb_params(params, seed + epoch, y_train), [dtrain],
                              model_file=saved if epoch > 1 else None)
        for i in range(per_epoch):
            booster.update(dtrain, i)
        sift_report.save(MODEL, lambda path: write(path, booster.save_raw("ubj")))
        if stopping:
            sys.exit(0)
        report(epoch, booster)


if __name__ == "__main__":
    main()
