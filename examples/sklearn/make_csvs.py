#!/usr/bin/python3
"""Writes two of the data sets Debian's python3-sklearn ships as tidy CSV files with a header row.

    breast_cancer.csv  569 rows: 30 numeric measurements and `diagnosis` (malignant | benign)
    diabetes.csv       442 rows: age, sex, bmi, bp, s1..s6 (unscaled) and `progression`, a
                       disease progression score one year later (a regression target)

sklearn's loaders read the CSV files inside the package (no network). Usage:
    /usr/bin/python3 examples/sklearn/make_csvs.py [OUT_DIR]    (default: examples/sklearn/data)
"""
import csv
import os
import sys

from sklearn.datasets import load_breast_cancer, load_diabetes


def write(path, header, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)  # a half-written file never looks finished
    print(f"wrote {path}: {len(rows)} rows, {len(header)} columns")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "data")
    os.makedirs(out, exist_ok=True)

    cancer = load_breast_cancer()
    names = [str(n) for n in cancer.target_names]
    write(os.path.join(out, "breast_cancer.csv"),
          [str(n) for n in cancer.feature_names] + ["diagnosis"],
          [[repr(float(v)) for v in x] + [names[int(t)]] for x, t in zip(cancer.data, cancer.target)])

    diabetes = load_diabetes(scaled=False)
    write(os.path.join(out, "diabetes.csv"),
          [str(n) for n in diabetes.feature_names] + ["progression"],
          [[repr(float(v)) for v in x] + [repr(float(t))] for x, t in zip(diabetes.data, diabetes.target)])


if __name__ == "__main__":
    main()
