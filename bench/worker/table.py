"""Summarises run.sh's key=value lines: best and median samples/s per configuration, and ratios
against PyTorch as written (pt-fp32), with Sift's tricks (pt-tuned) and as shipped."""
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)
for line in open(sys.argv[1]):
    kv = dict(item.split("=", 1) for item in line.split() if "=" in item)
    rows[(kv["model"], kv["label"])].append(kv)


def best(model, label):
    runs = rows.get((model, label), [])
    return max((float(r["samples_per_second"]) for r in runs), default=float("nan"))


# Training FLOPs per sample, from the trainer's count for its CNN (the same model in both).
flops_per_sample = {}
for (model, label), runs in rows.items():
    for r in runs:
        if float(r.get("gflops", 0) or 0) > 0:
            flops_per_sample[model] = float(r["gflops"]) * 1e9 / float(r["samples_per_second"])

print()
print(f"{'model':5} {'configuration':26} {'best/s':>9} {'median/s':>9} {'runs':>4} "
      f"{'vs pt-fp32':>10} {'vs pt-tuned':>11} {'vs shipped pt':>13} {'data wait':>9} "
      f"{'GFLOP/s':>8} {'peak RSS':>9}")
for (model, label), runs in sorted(rows.items(), key=lambda kv: (kv[0][0] != "mlp", kv[0][1])):
    sps = [float(r["samples_per_second"]) for r in runs]
    top = max(runs, key=lambda r: float(r["samples_per_second"]))
    wait = top.get("data_wait_fraction")
    gflops = flops_per_sample.get(model, 0) * max(sps) / 1e9
    print(f"{model:5} {label:26} {max(sps):9.0f} {statistics.median(sps):9.0f} {len(sps):4d} "
          f"{max(sps) / best(model, 'pytorch-fp32'):10.2f} "
          f"{max(sps) / best(model, 'pytorch-fp32-tuned'):11.2f} "
          f"{max(sps) / best(model, 'pytorch-fp32-shipped-env'):13.1f} "
          f"{(f'{100 * float(wait):.2f}%' if wait else '-'):>9} "
          f"{(f'{gflops:.1f}' if gflops else '-'):>8} {float(top['peak_rss_mib']):7.0f}MiB")
print()
for model in ("mlp", "cnn"):
    if not any(m == model for m, _ in rows):  # MODELS= left it out
        continue
    f32, b16 = best(model, "sift-fp32"), best(model, "sift-bf16")
    print(f"{model}: sift fp32 / pytorch fp32 (same env) = {f32 / best(model, 'pytorch-fp32'):.2f}; "
          f"/ pytorch fp32 tuned = {f32 / best(model, 'pytorch-fp32-tuned'):.2f}; "
          f"/ pytorch fp32 (shipped env) = {f32 / best(model, 'pytorch-fp32-shipped-env'):.1f}; "
          f"sift bf16 / sift fp32 = {b16 / f32:.2f} "
          f"(pytorch tuned {best(model, 'pytorch-bf16-tuned') / best(model, 'pytorch-fp32-tuned'):.2f}); "
          f"4x64 / 1x256 (fp32) = {best(model, 'sift-fp32-4x64') / f32:.2f}")
