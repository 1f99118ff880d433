"""What the end-to-end search benches share: one `sift run` of a config text into a folder."""
import os
import subprocess


def run(sift, text, out_dir, reuse=False):
    """Writes `text` beside `out_dir` (OUT.yaml), runs it into `out_dir` (log in OUT.log) and
    returns its database. reuse: a database already there is returned without running again."""
    db = os.path.join(out_dir, "sift.db")
    if reuse and os.path.exists(db):
        return db
    os.makedirs(out_dir, exist_ok=True)
    path = out_dir + ".yaml"
    with open(path, "w") as f:
        f.write(text)
    with open(out_dir + ".log", "w") as log:
        subprocess.run([sift, "run", path, "--out", out_dir, "--new"], check=True, stdout=log,
                       stderr=subprocess.STDOUT)
    return db
