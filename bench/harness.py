"""Timing and reporting shared by the SQLite (bench.py) and PostgreSQL (pg.py) workloads.

The commands of a comparison run alternately (the order rotates every round), each
comparison prints min/median/max per command and the ratio of the medians, and every
figure lands in RESULTS (written to bench/work/results.json at the end).
"""

import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = max(5, int(os.environ.get("BENCH_RUNS", "9")))
RESULTS = {}


def say(text=""):
    print(text, flush=True)


LAST_CPU = [0.0]


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(argv, stdin=None, ok=(0,), stdout=subprocess.DEVNULL):
    """Runs a command, returns (wall seconds, stderr text); its CPU seconds (user + sys)
    land in LAST_CPU. Fails loudly on an unexpected exit."""
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    try:
        c0 = cpu_children()
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdin=fin, stdout=stdout, stderr=subprocess.PIPE)
        t1 = time.perf_counter()
        LAST_CPU[0] = cpu_children() - c0
    finally:
        if stdin:
            fin.close()
    err = p.stderr.decode(errors="replace")
    if p.returncode not in ok:
        sys.exit(f"bench: {' '.join(argv)} exited {p.returncode}:\n{err[-2000:]}")
    return t1 - t0, err


class Parallel:
    """Commands that start together (each with its stdin file or None); the wall time ends
    when the last one exits. The check of such a case gets [(exit code, stderr), ...]."""

    def __init__(self, argvs, stdins=None, ok=(0,)):
        self.argvs = argvs
        self.stdins = stdins or [None] * len(argvs)
        self.ok = ok


def run_parallel(group):
    """Runs a Parallel group; returns (wall seconds, [(exit code, stderr text), ...])."""
    files, procs = [], []
    c0 = cpu_children()
    t0 = time.perf_counter()
    try:
        for argv, stdin in zip(group.argvs, group.stdins):
            fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
            ferr = tempfile.TemporaryFile()
            files += [f for f in (fin, ferr) if f is not subprocess.DEVNULL]
            procs.append((subprocess.Popen(argv, stdin=fin, stdout=subprocess.DEVNULL, stderr=ferr), ferr))
        codes = [p.wait() for p, _ in procs]
        t1 = time.perf_counter()
        LAST_CPU[0] = cpu_children() - c0
        outs = []
        for (argv, code, (_, ferr)) in zip(group.argvs, codes, procs):
            ferr.seek(0)
            err = ferr.read().decode(errors="replace")
            if code not in group.ok:
                sys.exit(f"bench: {' '.join(argv)} exited {code}:\n{err[-2000:]}")
            outs.append((code, err))
    finally:
        for f in files:
            f.close()
    return t1 - t0, outs


# ---------------------------------------------------------------- timing and reporting

def stats(xs):
    return {"n": len(xs), "min": min(xs), "median": statistics.median(xs), "max": max(xs)}


def fmt_s(x):
    return f"{x * 1000:9.1f} ms" if x < 10 else f"{x:9.2f} s "


def compare(key, title, cases, runs=RUNS, server_cpu=None):
    """cases: list of (label, prepare) where prepare() returns (argv, stdin, check);
    prepare makes the fresh copy (untimed); check(stderr) is called after the run.
    argv may be a Parallel group (then stdin is None and check gets its outcomes).
    The cases run alternately; the order rotates every round. server_cpu, if given, is a
    function that returns the CPU seconds a server has used so far (read before and
    after each run: the server's share of the run)."""
    say(f"\n== {key}: {title}")
    times = {label: [] for label, _ in cases}
    cpus = {label: [] for label, _ in cases}
    servers = {label: [] for label, _ in cases}
    extras = {label: [] for label, _ in cases}
    for i in range(runs):
        order = cases[i % len(cases):] + cases[:i % len(cases)]
        for label, prepare in order:
            argv, stdin, check = prepare()
            s0 = server_cpu() if server_cpu else 0.0
            if isinstance(argv, Parallel):
                secs, err = run_parallel(argv)
            else:
                secs, err = run(argv, stdin=stdin)
            if server_cpu:
                servers[label].append(server_cpu() - s0)
            if check:
                extra = check(err)
                if extra is not None:
                    extras[label].append(extra)
            times[label].append(secs)
            cpus[label].append(LAST_CPU[0])
    result = {}
    for label, _ in cases:
        s = stats(times[label])
        s["runs"] = times[label]
        s["cpu"] = cpus[label]
        s["cpu_median"] = statistics.median(cpus[label])
        server = ""
        if servers[label]:
            s["server_cpu"] = servers[label]
            s["server_cpu_median"] = statistics.median(servers[label])
            server = f"; server cpu median {fmt_s(s['server_cpu_median']).strip()}"
        if extras[label]:
            s["extra"] = extras[label]
        result[label] = s
        say(f"   {label:<44} min {fmt_s(s['min'])}  median {fmt_s(s['median'])}  max {fmt_s(s['max'])}  "
            f"(n={s['n']}; cpu median {fmt_s(s['cpu_median']).strip()}{server})")
    RESULTS[key] = {"title": title, "cases": result}
    return result


def ratio(key, num, den, target=None):
    cases = RESULTS[key]["cases"]
    a, b = cases[num], cases[den]
    r = a["median"] / b["median"]
    rmin = a["min"] / b["min"]
    rmax = a["max"] / b["max"]
    verdict = ""
    if target is not None:
        verdict = f"   target <= {target:.2f}: {'PASS' if r <= target else 'MISS'}"
    say(f"   ratio {num} / {den}: median {r:.3f}  (min/min {rmin:.3f}, max/max {rmax:.3f}){verdict}")
    RESULTS[key].setdefault("ratios", []).append(
        {"num": num, "den": den, "median": r, "min": rmin, "max": rmax, "target": target})
    return r


DATE_LINE = re.compile(r"^(\d{4}-\d{2}-\d{2})  (\w+)  \((\d+) ms\)", re.M)


def date_millis(err):
    return [int(m.group(3)) for m in DATE_LINE.finditer(err)]


def expect_dates(n):
    def check(err):
        ms = date_millis(err)
        if len(ms) != n:
            sys.exit(f"bench: expected {n} per-date lines on stderr, got {len(ms)}:\n{err[-2000:]}")
        return ms
    return check


