#!/usr/bin/env python3
"""Which translation units parse LibTorch, and what compiling some of them costs.

Usage: bench/build/tu_times.py BUILD_DIR [SOURCE ...]

Counts the translation units of BUILD_DIR (a configured and built tree) that parse LibTorch:
their recorded dependencies (ninja -t deps) name a torch/, ATen/ or c10/ header, or they use a
precompiled header that does. Then compiles each SOURCE (a path ending, as worker/main.cc) once
with its command from compile_commands.json, ccache off, the object written to a temporary file,
and prints the wall time. Reference in the same run: an empty file that includes only
<torch/torch.h>, compiled with sift_trainer's flags (the cost of parsing LibTorch once).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def torch_units(build, commands):
    deps = subprocess.run(['ninja', '-C', build, '-t', 'deps'], capture_output=True, text=True,
                          check=True).stdout
    torch, record = set(), None
    for line in deps.splitlines():
        if not line.startswith(' '):
            record = line.split(':')[0]
        elif re.search(r'/(torch|ATen|c10)/', line):
            torch.add(record)
    units = []
    for e in commands:
        obj = re.search(r' -o (\S+)', e['command']).group(1)
        pch = re.search(r'-include (\S+cmake_pch\.hxx)', e['command'])
        # GCC leaves a precompiled header's own includes out of the dependency list.
        via_pch = pch and any(t.endswith('.gch') and pch.group(1).endswith(t[:-4]) for t in torch)
        if obj in torch or via_pch:
            units.append(obj)
    return sorted(units)


def compile_seconds(entry, source=None):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = re.sub(r' -o \S+', f' -o {tmp}/unit.o', entry['command'])
        cmd = re.sub(r'^\S*ccache ', '', cmd)
        if source:
            cmd = re.sub(r' -include \S+', '', cmd).replace(entry['file'], source)
        t0 = time.monotonic()
        r = subprocess.run(cmd, shell=True, cwd=entry['directory'],
                           env=dict(os.environ, CCACHE_DISABLE='1'))
        return time.monotonic() - t0, r.returncode == 0


def main():
    build, sources = sys.argv[1], sys.argv[2:]
    commands = json.load(open(os.path.join(build, 'compile_commands.json')))
    units = torch_units(build, commands)
    print(f'{len(units)} of {len(commands)} translation units parse LibTorch:')
    for u in units:
        print(f'  {u}')
    print(f'CPU: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start')
    trainer = [e for e in commands
               if '/sift_trainer.dir/' in e['command'] and '-include' in e['command']]
    if trainer:
        with tempfile.NamedTemporaryFile('w', suffix='.cc') as f:
            f.write('#include <torch/torch.h>\n')
            f.flush()
            s, ok = compile_seconds(trainer[0], f.name)
            print(f'reference, <torch/torch.h> alone: {s:.1f} s{"" if ok else " FAILED"}')
    for src in sources:
        entry = [e for e in commands if e['file'].endswith('/' + src)]
        if not entry:
            print(f'{src}: not in compile_commands.json')
            continue
        s, ok = compile_seconds(entry[0])
        print(f'{src}: {s:.1f} s{"" if ok else " FAILED"}', flush=True)
    print(f'load average {os.getloadavg()[0]:.2f} at the end')


if __name__ == '__main__':
    main()
