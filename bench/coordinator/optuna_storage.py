"""The reference for bench/coordinator/throughput.sh: Optuna's RDB storage on SQLite, driven the
way Sift's workers drive the coordinator. W processes share one study; each asks a trial, reports
EPOCHS intermediate values (trial.report, one storage write each, like a ReportProgress) and tells
it. Prints one table row: reports/s and trials told/s.

  python3 optuna_storage.py DB_PATH WORKERS TRIALS EPOCHS
"""
import multiprocessing as mp
import sys
import time

import optuna


def work(url, name, quota, epochs, out):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=name, storage=url)
    reports = 0
    for _ in range(quota):
        trial = study.ask()
        x = trial.suggest_float("x", 0.0, 1.0)
        for epoch in range(1, epochs + 1):
            trial.report(1.0 - 0.9 / (1.0 + x * epoch), epoch)
            reports += 1
        study.tell(trial, 1.0 - 0.9 / (1.0 + x * epochs))
    out.put(reports)


def main():
    path, workers, trials, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    url = "sqlite:///" + path
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # RandomSampler: the cheapest sampler, as random/fifo is on Sift's side.
    optuna.create_study(study_name="bench", storage=url, direction="maximize",
                        sampler=optuna.samplers.RandomSampler(seed=1))
    out = mp.Queue()
    quotas = [trials // workers + (1 if i < trials % workers else 0) for i in range(workers)]
    procs = [mp.Process(target=work, args=(url, "bench", q, epochs, out)) for q in quotas]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    reports = sum(out.get() for _ in procs)
    for p in procs:
        p.join()
    seconds = time.perf_counter() - t0  # includes each process's import and load_study
    print(f"| Optuna {optuna.__version__} RDB on SQLite, random | {workers} | {trials} | "
          f"{reports / seconds:.0f} | - | - | - | {reports} ({trials / seconds:.1f} trials/s) |")


if __name__ == "__main__":
    main()
