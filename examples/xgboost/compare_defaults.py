"""The best trial of a finished xgboost.yaml run against XGBRegressor() with xgboost's defaults, on
train.py's split: val RMSE (what the search minimised) and test RMSE (rows no trial saw).
The best trial's booster is the one Sift kept (`sift export`), not a retrained copy.
    /usr/bin/python3 examples/xgboost/compare_defaults.py RUN_DIR [--sift build/bin/sift]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import xgboost as xgb

import train

HERE = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("run")
parser.add_argument("--sift", default=os.path.join(HERE, "..", "..", "build", "bin", "sift"))
parser.add_argument("--data", default=os.path.join(HERE, "..", "sklearn", "data", "diabetes.csv"))
parser.add_argument("--label", default="progression")
args = parser.parse_args()

results = json.load(open(os.path.join(args.run, "results.json")))
best = next(t for t in results["trials"] if t["number"] == results["study"]["best_trial"])
trees = int(best["curve"][-1]["metrics"]["trees"])
with tempfile.TemporaryDirectory() as out:
    subprocess.run([args.sift, "export", "--run", args.run, "--trial", str(best["number"]),
                    "--out", out], check=True, stdout=subprocess.DEVNULL)
    booster = xgb.Booster(model_file=os.path.join(out, train.MODEL))

(x_train, y_train), val, test = train.load_split(args.data, args.label)
default = xgb.XGBRegressor(random_state=0, n_jobs=1).fit(x_train, y_train).get_booster()
rows = [("sift best trial %d (%d trees)" % (best["number"], trees), booster, trees),
        ("XGBRegressor() defaults (100 trees)", default, default.num_boosted_rounds())]
print("%-36s %9s %9s" % ("", "val_rmse", "test_rmse"))
for name, model, rounds in rows:
    print("%-36s %9.4f %9.4f" % (name, train.rmse(model, *val, rounds), train.rmse(model, *test, rounds)))
if abs(train.rmse(booster, *val, trees) - best["objective"]) > 1e-6:
    sys.exit("the exported booster does not reproduce the trial's reported val_rmse")
