#!/usr/bin/env python3
"""The sqlrun benchmark harness (run it through bench/run.sh).

Every timed run gets a fresh copy of a seeded database (copied, fsynced, no -wal/-shm
beside it), the commands of a comparison run alternately (the order rotates every round),
and each comparison prints min/median/max per command and the ratio of the medians.
Nothing here is a test: the figures are reported, never asserted.
"""

import argparse
import datetime as dt
import hashlib
import json
import os
import glob
import re
import shutil
import statistics
import subprocess
import sys
import time

from harness import (RESULTS, RUNS, compare, date_millis, expect_dates, ratio,
                     run, say, stats)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "bench", "work")
SQLITE = os.environ.get("SQLITE3", "/usr/bin/sqlite3")
TIME = "/usr/bin/time"

SAME_ENGINE = os.environ.get("BENCH_SAME_ENGINE") == "1"
RSS_LONG = max(1, int(os.environ.get("BENCH_RSS_LONG", "2")))
RSS_SHORT = 5
SEED = int(os.environ.get("BENCH_SEED", "7"))
PER_DAY = 1000

# Every database ends on the same date, so "yesterday" is the same date everywhere.
END = dt.date(2025, 12, 31)
AS_OF = END + dt.timedelta(days=1)          # a regular run computes END
DBS = {"y1": 365, "y10": 3650, "d14": 14, "d60": 60}


def start_of(days):
    return END - dt.timedelta(days=days - 1)


def interval(days, end=END):
    return f"{end - dt.timedelta(days=days - 1)}..{end}"


# ---------------------------------------------------------------- databases and copies

def binary_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def remove_db(path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def checkpoint(path):
    """No -wal file may be left beside a database that gets copied."""
    subprocess.run([SQLITE, path, "PRAGMA wal_checkpoint(TRUNCATE);"], check=True,
                   stdout=subprocess.DEVNULL)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            if suffix == "-wal" and os.path.getsize(path + suffix) > 0:
                sys.exit(f"bench: {path}{suffix} is not empty after a checkpoint")
            os.remove(path + suffix)


def fresh_copy(src, dst):
    """A byte copy, fsynced, so that no run pays for flushing the copy's dirty pages
    (a checkpoint fsyncs the database file) and every run starts from the same state."""
    remove_db(dst)
    shutil.copyfile(src, dst)
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.sync()
    return dst


class Bench:
    def __init__(self, binary, prefix=""):
        self.bin = os.path.abspath(binary)
        # Another binary's databases (section h's "before") live beside, under a prefix.
        self.prefix = prefix
        # "init": generated databases get `sqlrun init` (the pipeline's objects) too.
        self.key = {"bin": binary_digest(self.bin), "seed": SEED, "per_day": PER_DAY,
                    "end": str(END), "init": True}

    def db(self, name):
        return os.path.join(WORK, self.prefix + name + ".db")

    def sqlrun(self, db, *args):
        return [self.bin, "--db", db, *args]

    def cached(self, name, extra=None):
        """True if WORK/name.db was made by this binary with these parameters."""
        key = dict(self.key, extra=extra)
        stamp = self.db(name) + ".key"
        if os.path.exists(self.db(name)) and os.path.exists(stamp):
            with open(stamp) as f:
                if json.load(f) == key:
                    return True
        return False

    def stamp(self, name, extra=None):
        with open(self.db(name) + ".key", "w") as f:
            json.dump(dict(self.key, extra=extra), f)

    def generate(self, name):
        days = DBS[name]
        path = self.db(name)
        if self.cached(name):
            return path
        remove_db(path)
        say(f"  generating {name}: {days} days x {PER_DAY}/day from {start_of(days)} (seed {SEED})")
        subprocess.run(self.sqlrun(path, "generate", "--start", str(start_of(days)),
                                   "--days", str(days), "--per-day", str(PER_DAY),
                                   "--seed", str(SEED)),
                       check=True, stdout=subprocess.DEVNULL)
        # The pipeline's objects (views such as orders_latest, the source triggers): the
        # sqlite3 baseline runs the rendered SQL on a copy and needs them as sqlrun does.
        subprocess.run(self.sqlrun(path, "init"), check=True, stdout=subprocess.DEVNULL)
        checkpoint(path)
        self.stamp(name)
        return path

    def computed(self, name):
        """name + 'c': the database after one backfill of all its dates (state history)."""
        cname = name + "c"
        if self.cached(cname, "computed"):
            return self.db(cname)
        src = self.generate(name)
        dst = fresh_copy(src, self.db(cname))
        say(f"  preparing {cname}: one backfill of all {DBS[name]} dates of {name}")
        run([*self.sqlrun(dst, "apply", "--interval", interval(DBS[name]))])
        checkpoint(dst)
        self.stamp(cname, "computed")
        return dst


# ---------------------------------------------------------------- workloads

EXEC_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include "sqlite3.h"
/* `sqlite3 -bail DB < script`, reduced to sqlite3_exec, on sqlrun's own SQLite version */
int main(int argc, char **argv) {
  sqlite3 *db; char *err = 0; size_t cap = 1 << 20, n = 0, r; char *buf = malloc(cap);
  while ((r = fread(buf + n, 1, cap - n - 1, stdin)) > 0) {
    n += r; if (cap - n < 2) { cap *= 2; buf = realloc(buf, cap); } }
  buf[n] = 0;
  if (argc != 2 || sqlite3_open(argv[1], &db)) { fprintf(stderr, "usage: exec DB < SQL\n"); return 2; }
  if (sqlite3_exec(db, buf, 0, 0, &err)) { fprintf(stderr, "%s\n", err); return 1; }
  return sqlite3_close(db) != SQLITE_OK;
}
"""


def same_engine_exec():
    """BENCH_SAME_ENGINE=1: compile the SQLite amalgamation sqlrun bundles (from the cargo
    registry, the libsqlite3-sys version in Cargo.lock) into a minimal script runner, so
    the baseline runs the same SQLite version as sqlrun (the Debian CLI is older)."""
    with open(os.path.join(ROOT, "Cargo.lock")) as f:
        m = re.search(r'name = "libsqlite3-sys"\nversion = "([^"]+)"', f.read())
    cargo_home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = glob.glob(os.path.join(cargo_home, "registry", "src", "*",
                                   f"libsqlite3-sys-{m.group(1)}", "sqlite3", "sqlite3.c")) if m else []
    cc = shutil.which("cc") or shutil.which("gcc")
    if not found or not cc:
        say("  BENCH_SAME_ENGINE: no bundled sqlite3.c in the cargo registry or no C compiler; skipped")
        return None
    exe = os.path.join(WORK, f"sqlite-exec-{m.group(1)}")
    if not os.path.exists(exe):
        say(f"  compiling the bundled SQLite (libsqlite3-sys {m.group(1)}) into {exe} (about a minute)")
        src = exe + ".c"
        with open(src, "w") as f:
            f.write(EXEC_C)
        subprocess.run([cc, "-O2", "-DSQLITE_THREADSAFE=1", "-I", os.path.dirname(found[0]), "-o", exe,
                        src, found[0], "-lpthread", "-lm", "-ldl"], check=True)
    return exe


def workload_a(b):
    """Backfill 365 days x 1,000/day: sqlrun vs sqlite3 running the rendered SQL."""
    src = b.generate("y1")
    dates = [start_of(365) + dt.timedelta(days=i) for i in range(365)]
    scripts = {}
    full = os.path.join(WORK, "a_baseline_full.sql")
    off = os.path.join(WORK, "a_baseline_off.sql")
    if not (b.cached("a_render") and os.path.exists(full) and os.path.exists(off)):
        say("  rendering 365 dates with `sqlrun render --date D` (untimed)")
        scratch = fresh_copy(src, os.path.join(WORK, "render.db"))
        bodies = []
        for d in dates:
            p = subprocess.run(b.sqlrun(scratch, "render", "--date", str(d)), check=True,
                               stdout=subprocess.PIPE)
            bodies.append(p.stdout.decode())
        remove_db(scratch)
        body = "".join(bodies)
        # The rendered record statement inserts run_partitions (run_id, ds): render shows
        # the id the next run would get (1 on this fresh database), the same one sqlrun's
        # own run gets, and (run_id, ds) is unique across the 365 dates: no conflicts.
        ids = set(re.findall(r"INSERT INTO run_partitions .*?\nVALUES \((\d+),", body, re.S))
        if ids != {"1"} or body.count("BEGIN IMMEDIATE;") != 365 or body.count("COMMIT;") != 365:
            sys.exit(f"bench: unexpected rendered SQL (run ids {ids}, "
                     f"{body.count('BEGIN IMMEDIATE;')} transactions)")
        with open(full, "w") as f:
            f.write("PRAGMA journal_mode=WAL;\nPRAGMA synchronous=FULL;\n" + body)
        with open(off, "w") as f:
            f.write("PRAGMA journal_mode=WAL;\nPRAGMA synchronous=OFF;\n" + body)
        with open(b.db("a_render"), "w") as f:
            f.write("")
        b.stamp("a_render")
    scripts["full"], scripts["off"] = full, off

    # One check, untimed: the baseline does the same work and does not fail.
    c1 = fresh_copy(src, os.path.join(WORK, "a_sqlrun.db"))
    c2 = fresh_copy(src, os.path.join(WORK, "a_sqlite.db"))
    run(b.sqlrun(c1, "apply", "--interval", interval(365)))
    _, err = run([SQLITE, "-bail", c2], stdin=full)
    if err.strip():
        sys.exit(f"bench: the baseline script failed:\n{err}")
    q = ("SELECT count(*), sum(revenue), sum(order_count), "
         "(SELECT count(*) FROM run_partitions WHERE status = 'success') FROM daily_revenue")
    r1 = subprocess.run([SQLITE, c1, q], check=True, stdout=subprocess.PIPE).stdout.decode().strip()
    r2 = subprocess.run([SQLITE, c2, q], check=True, stdout=subprocess.PIPE).stdout.decode().strip()
    say(f"  check: sqlrun rows|revenue|orders|partitions = {r1}; baseline = {r2}")
    if r1 != r2:
        sys.exit("bench: sqlrun and the baseline disagree")

    def sqlrun_case():
        db = fresh_copy(src, os.path.join(WORK, "a_sqlrun.db"))
        return b.sqlrun(db, "apply", "--interval", interval(365)), None, expect_dates(365)

    def sqlite_case(which):
        def prepare():
            db = fresh_copy(src, os.path.join(WORK, "a_sqlite.db"))

            def check(err):
                if err.strip():
                    sys.exit(f"bench: the baseline failed:\n{err}")
            return [SQLITE, "-bail", db], scripts[which], check
        return prepare

    cases = [
        ("sqlrun apply --interval (365 dates)", sqlrun_case),
        ("sqlite3 rendered SQL, synchronous=FULL", sqlite_case("full")),
        ("sqlite3 rendered SQL, synchronous=OFF", sqlite_case("off")),
    ]
    exe = same_engine_exec() if SAME_ENGINE else None
    if exe:
        def same_case(which):
            def prepare():
                db = fresh_copy(src, os.path.join(WORK, "a_sqlite.db"))
                return [exe, db], scripts[which], None
            return prepare
        cases += [("same SQLite as sqlrun, synchronous=FULL", same_case("full")),
                  ("same SQLite as sqlrun, synchronous=OFF", same_case("off"))]
    compare("a", "backfill 365 days x 1,000/day (fresh copy of y1 each run)", cases)
    ratio("a", "sqlrun apply --interval (365 dates)", "sqlite3 rendered SQL, synchronous=FULL", 1.10)
    if exe:
        ratio("a", "sqlrun apply --interval (365 dates)", "same SQLite as sqlrun, synchronous=FULL")
    for name in ("a_sqlrun.db", "a_sqlite.db"):
        remove_db(os.path.join(WORK, name))


def apply_case(b, src, copy_name, args, ndates):
    def prepare():
        db = fresh_copy(src, os.path.join(WORK, copy_name))
        return b.sqlrun(db, "apply", *args), None, expect_dates(ndates)
    return prepare


def workload_b(b):
    big, small = b.computed("y10"), b.computed("d14")
    args = ["--as-of", str(AS_OF)]
    compare("b", f"regular run (apply --as-of {AS_OF}: recomputes {END}) on computed copies", [
        ("10 years (y10c: 3,650 days computed)", apply_case(b, big, "b_big.db", args, 1)),
        ("14 days (d14c: 14 days computed)", apply_case(b, small, "b_small.db", args, 1)),
    ])
    ratio("b", "10 years (y10c: 3,650 days computed)", "14 days (d14c: 14 days computed)", 1.5)
    remove_db(os.path.join(WORK, "b_big.db"))
    remove_db(os.path.join(WORK, "b_small.db"))


def workload_c(b):
    big, small = b.computed("y10"), b.computed("d60")
    args = ["--interval", interval(30)]
    compare("c", f"backfill of 30 days ({interval(30)}) on computed copies", [
        ("10 years (y10c)", apply_case(b, big, "c_big.db", args, 30)),
        ("60 days (d60c)", apply_case(b, small, "c_small.db", args, 30)),
    ])
    ratio("c", "10 years (y10c)", "60 days (d60c)", 1.5)
    remove_db(os.path.join(WORK, "c_big.db"))
    remove_db(os.path.join(WORK, "c_small.db"))


def workload_d(b):
    big = b.computed("y10")
    ten = f"{start_of(3650)}..{END}"

    def reserve_case():
        db = fresh_copy(big, os.path.join(WORK, "d.db"))
        return b.sqlrun(db, "reserve", "--interval", ten, "--by", "bench"), None, None

    def status_case():
        db = fresh_copy(big, os.path.join(WORK, "d.db"))
        return b.sqlrun(db, "status"), None, None

    compare("d", f"reserve {ten} (3,650 dates); status over 10 years (y10c)", [
        ("sqlrun reserve --interval (3,650 dates)", reserve_case),
        ("sqlrun status (3,650 dates, summary and calendar to /dev/null)", status_case),
    ])
    remove_db(os.path.join(WORK, "d.db"))


def workload_f(b):
    """Late data: a regular run that looks back 30 days when nothing changed, against a
    plain regular run, both on the 10-year history."""
    big = b.computed("y10")
    args = ["--as-of", str(AS_OF)]
    look = "regular run --lookback 30 (y10c, nothing changed)"
    plain = "plain regular run (y10c)"
    compare("f", f"regular run with and without --lookback 30 (apply --as-of {AS_OF})", [
        (look, apply_case(b, big, "f_look.db", args + ["--lookback", "30"], 1)),
        (plain, apply_case(b, big, "f_plain.db", args, 1)),
    ])
    ratio("f", look, plain, 2.0)
    remove_db(os.path.join(WORK, "f_look.db"))
    remove_db(os.path.join(WORK, "f_plain.db"))


def workload_g(b):
    """The price of tracking late data on the loader: inserting one year of orders
    (sqlite3 CLI, one transaction) into a database whose orders table has sqlrun's change
    triggers, against the same insert with the triggers dropped."""
    src = b.generate("y1")
    load = os.path.join(WORK, "g_load.sql")
    with open(load, "w") as f:
        f.write(f"ATTACH {sql_text(src)} AS src;\nBEGIN;\n"
                "INSERT INTO orders SELECT * FROM src.orders ORDER BY rowid;\nCOMMIT;\n")
    untrack = os.path.join(WORK, "g_untrack.sql")
    with open(untrack, "w") as f:
        f.write("DROP TRIGGER sqlrun_orders_insert;\n")

    def case(tracked):
        def prepare():
            db = os.path.join(WORK, "g_tracked.db" if tracked else "g_plain.db")
            remove_db(db)
            run(b.sqlrun(db, "init"))
            if not tracked:
                run([SQLITE, "-bail", db], stdin=untrack)
            return [SQLITE, "-bail", db], load, None
        return prepare

    with_t, without = "insert 1 year of orders, tracked", "the same insert, triggers dropped"
    compare("g", "bulk insert of y1's orders (sqlite3 CLI, one transaction)", [
        (with_t, case(True)),
        (without, case(False)),
    ])
    ratio("g", with_t, without)
    for name in ("g_tracked.db", "g_plain.db"):
        remove_db(os.path.join(WORK, name))
    for name in ("g_load.sql", "g_untrack.sql"):
        os.remove(os.path.join(WORK, name))


def sql_text(value):
    return "'" + str(value).replace("'", "''") + "'"


def max_rss_kb(text):
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if not m:
        sys.exit(f"bench: no max RSS in /usr/bin/time -v output:\n{text}")
    return int(m.group(1))


def workload_e(b):
    """Peak RSS of a 3,650-day backfill vs a 14-day backfill (raw databases). The first
    3,650-day run also becomes y10c, the computed copy the other workloads use."""
    long_src, short_src = b.generate("y10"), b.generate("d14")
    say(f"\n== e: peak memory (max RSS, /usr/bin/time -v): 3,650-day backfill x{RSS_LONG} "
        f"vs 14-day backfill x{RSS_SHORT} (the long one is ~10 s a run, so it runs fewer times)")
    out = {"3650": [], "14": []}
    walls = {"3650": [], "14": []}
    for i in range(max(RSS_LONG, RSS_SHORT)):
        for key, src, days, n in (("3650", long_src, 3650, RSS_LONG), ("14", short_src, 14, RSS_SHORT)):
            if i >= n:
                continue
            db = fresh_copy(src, os.path.join(WORK, f"e_{key}.db"))
            tfile = os.path.join(WORK, "time.txt")
            secs, err = run([TIME, "-v", "-o", tfile,
                             *b.sqlrun(db, "apply", "--interval", interval(days))])
            with open(tfile) as f:
                out[key].append(max_rss_kb(f.read()))
            walls[key].append(secs)
            ms = date_millis(err)
            if len(ms) != days:
                sys.exit(f"bench: {days}-day backfill printed {len(ms)} date lines")
            if key == "3650" and i == 0 and not b.cached("y10c", "computed"):
                checkpoint(db)
                remove_db(b.db("y10c"))
                os.rename(db, b.db("y10c"))
                b.stamp("y10c", "computed")
            remove_db(db)
    res = {}
    for key in ("3650", "14"):
        s = stats(out[key])
        res[key] = dict(s, runs_kb=out[key], wall=walls[key])
        say(f"   {key:>4}-day backfill: max RSS min {s['min'] / 1024:7.1f} MB  median {s['median'] / 1024:7.1f} MB"
            f"  max {s['max'] / 1024:7.1f} MB  (n={s['n']}); wall median {statistics.median(walls[key]):.2f} s"
            f" = {statistics.median(walls[key]) / int(key) * 1000:.2f} ms/date")
    diff = (res["3650"]["median"] - res["14"]["median"]) / 1024
    worst = (res["3650"]["max"] - res["14"]["min"]) / 1024
    verdict = "PASS" if abs(worst) <= 10 else "MISS"
    say(f"   difference of medians {diff:+.1f} MB (worst case max-min {worst:+.1f} MB)   target within 10 MB: {verdict}")
    RESULTS["e"] = {"cases": res, "diff_mb_median": diff, "diff_mb_worst": worst}


def workload_profile(b):
    """Where a date's time goes."""
    src = b.generate("y1")

    def apply_on(days, extra=()):
        def prepare():
            db = fresh_copy(src, os.path.join(WORK, "p.db"))
            return b.sqlrun(db, "apply", "--interval", interval(days), *extra), None, None
        return prepare

    def reserve_on(days):
        def prepare():
            db = fresh_copy(src, os.path.join(WORK, "p.db"))
            return b.sqlrun(db, "reserve", "--interval", interval(days), "--by", "bench"), None, None
        return prepare

    compare("profile", "fixed and per-date costs on y1 (fresh copy each run)", [
        ("apply, 1 date", apply_on(1)),
        ("apply, 365 dates", apply_on(365)),
        ("apply --dry-run, 1 date", apply_on(1, ("--dry-run",))),
        ("apply --dry-run, 365 dates", apply_on(365, ("--dry-run",))),
        ("reserve, 1 date", reserve_on(1)),
        ("reserve, 365 dates", reserve_on(365)),
    ], runs=5)
    c = RESULTS["profile"]["cases"]
    a = RESULTS.get("a", {}).get("cases", {})

    def med(label, src=c):
        return src[label]["median"]

    per = {}
    per["sqlrun apply, per date ((365 - 1 dates) / 364)"] = (med("apply, 365 dates") - med("apply, 1 date")) / 364
    per["sqlrun apply, fixed per invocation (1 date minus one per-date)"] = med("apply, 1 date") - per["sqlrun apply, per date ((365 - 1 dates) / 364)"]
    per["render + date_states + print, per date (dry-run 365 - 1) / 364"] = (med("apply --dry-run, 365 dates") - med("apply --dry-run, 1 date")) / 364
    per["reserve + its state lookup, per date (reserve 365 - 1) / 364"] = (med("reserve, 365 dates") - med("reserve, 1 date")) / 364
    if a:
        per["sqlite3 baseline FULL, per date (/365)"] = med("sqlite3 rendered SQL, synchronous=FULL", a) / 365
        per["sqlite3 baseline OFF, per date (/365)"] = med("sqlite3 rendered SQL, synchronous=OFF", a) / 365
        per["=> fsync at commit (WAL), per date (FULL - OFF)"] = per["sqlite3 baseline FULL, per date (/365)"] - per["sqlite3 baseline OFF, per date (/365)"]
        per["=> sqlrun over the baseline, per date"] = per["sqlrun apply, per date ((365 - 1 dates) / 364)"] - per["sqlite3 baseline FULL, per date (/365)"]
        if "same SQLite as sqlrun, synchronous=FULL" in a:
            per["same SQLite as sqlrun FULL, per date (/365)"] = med("same SQLite as sqlrun, synchronous=FULL", a) / 365
            per["same SQLite as sqlrun OFF, per date (/365)"] = med("same SQLite as sqlrun, synchronous=OFF", a) / 365
            per["=> sqlrun over the same-SQLite baseline, per date"] = per["sqlrun apply, per date ((365 - 1 dates) / 364)"] - per["same SQLite as sqlrun FULL, per date (/365)"]
        ms = sorted(x for xs in a["sqlrun apply --interval (365 dates)"].get("extra", []) for x in xs)
        if ms:
            say(f"   per-date lines of `sqlrun apply` (ms, truncated to whole ms): "
                f"mean {statistics.mean(ms):.2f}, median {statistics.median(ms)}, "
                f"p95 {ms[int(len(ms) * 0.95)]}, max {ms[-1]} over {len(ms)} dates")
            RESULTS["profile"]["date_lines_ms"] = {"mean": statistics.mean(ms), "median": statistics.median(ms),
                                                   "p95": ms[int(len(ms) * 0.95)], "max": ms[-1]}
    for k, v in per.items():
        say(f"   {k:<66} {v * 1000:8.3f} ms")
    RESULTS["profile"]["derived_ms"] = {k: v * 1000 for k, v in per.items()}

    # fsync counts (not timed): what each side asks the disk for.
    if shutil.which("strace"):
        counts = {}
        for label, argv, stdin in (
            ("sqlrun apply 365", None, None),
            ("sqlite3 baseline FULL", None, os.path.join(WORK, "a_baseline_full.sql")),
        ):
            db = fresh_copy(src, os.path.join(WORK, "p.db"))
            if label.startswith("sqlrun"):
                argv = b.sqlrun(db, "apply", "--interval", interval(365))
            else:
                if not os.path.exists(stdin):
                    continue
                argv = [SQLITE, "-bail", db]
            sfile = os.path.join(WORK, "strace.txt")
            run(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", sfile, *argv], stdin=stdin)
            with open(sfile) as f:
                text = f.read()
            n = {m.group(2): int(m.group(1)) for m in
                 re.finditer(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)\s*$", text, re.M)}
            counts[label] = n
            say(f"   syscalls, {label:<22}: {n}")
        RESULTS["profile"]["sync_calls"] = counts
    remove_db(os.path.join(WORK, "p.db"))


# ---------------------------------------------------------------- query plans

def render_system(path, values):
    """A minimal renderer for the system templates the plans need (one model)."""
    with open(path) as f:
        text = f.read()
    text = "\n".join(l for l in text.splitlines() if not l.startswith("-- ") and l != "--"
                     and not l.startswith("{% import") and not l.startswith("{% macro"))
    # SQLite's dialect macros (templates/system/sqlite/dialect.sql), for these values.
    values = dict(values)
    values.setdefault("d.now()", "datetime('now')")
    if "start" in values:
        values["d.date_series(start, end)"] = (f"SELECT {values['start']} UNION ALL "
                                              f"SELECT date(ds, '+1 day') FROM dates WHERE ds < {values['end']}")
    if "selected" in values:
        values["d.dates(selected)"] = f"json_each({values['selected']})"
    values.setdefault("expiry(hold_seconds)", values.get("expires_at", "NULL"))
    text = re.sub(r"\{% for model in models %\}(.*?)\{% endfor %\}", r"\1", text, flags=re.S)
    # One source, orders (the built-in model's).
    text = re.sub(r"\{% for s in sources %\}.*?\{% endfor %\}", "'orders'", text, flags=re.S)
    text = re.sub(r"\{% for source in sources %\}(.*?)\{% endfor %\}", r"\1", text, flags=re.S)
    text = re.sub(r"\{% if sources %\}(.*?)\{% else %\}(.*?)\{% endif %\}", r"\1", text, flags=re.S)
    text = re.sub(r"\{% if start is none %\}(.*?)\{% else %\}(.*?)\{% endif %\}",
                  lambda m: m.group(2) if "start" in values else m.group(1), text, flags=re.S)

    def sub(m):
        expr = m.group(1).strip()
        if expr not in values:
            sys.exit(f"bench: cannot render {{{{ {expr} }}}} in {path}")
        return values[expr]
    text = re.sub(r"\{\{(.*?)\}\}", sub, text)
    if "{%" in text or "{{" in text:
        sys.exit(f"bench: {path} uses template syntax this plan printer does not know")
    return text


def statements(sql):
    sql = "\n".join(l for l in sql.splitlines() if not l.strip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*\n", sql + "\n") if s.strip()
            and s.strip().upper() not in ("BEGIN IMMEDIATE", "COMMIT", "COMMIT;")]


def workload_plans(b):
    big = b.computed("y10")
    db = fresh_copy(big, os.path.join(WORK, "plans.db"))
    ds = str(END)
    q = lambda s: "'" + s.replace("'", "''") + "'"
    say(f"\n== plans: EXPLAIN QUERY PLAN on y10c (sqlite3 CLI {sqlite_version()}; run id 2, date {ds})")
    items = []
    day = subprocess.run(b.sqlrun(db, "render", "--date", ds), check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    for s in statements(day):
        items.append(("per date (render --date)", s))
    with open(os.path.join(ROOT, "queries", "holder_of_date.sql")) as f:
        items.append(("per date (holder check)", f.read().replace(":ds", q(ds))))
    with open(os.path.join(ROOT, "queries", "is_sealed.sql")) as f:
        items.append(("per date (sealed?)", f.read().replace(":ds", q(ds))))
    with open(os.path.join(ROOT, "queries", "date_status_in_run.sql")) as f:
        items.append(("per date (status read back)", f.read().replace(":run_id", "2").replace(":ds", q(ds))))
    sysdir = os.path.join(ROOT, "templates", "system")
    model = {"model.corrections_table|ident": '"daily_revenue_corrections"',
             "model.date_column|ident": '"ds"'}
    items.append(("per run: date_states (30 dates)", render_system(
        os.path.join(sysdir, "date_states.sql"),
        dict(model, start=q(str(END - dt.timedelta(days=29))), end=q(ds)))))
    items.append(("status without --interval: known_span (first and last date known)", render_system(
        os.path.join(sysdir, "known_span.sql"),
        {"source.date_column|ident": '"order_date"', "source.table|ident": '"orders"',
         '("first_" ~ loop.index)|ident': '"first_1"', '("last_" ~ loop.index)|ident': '"last_1"'})))
    items.append(("status: date_states over its span (3,650 dates)", render_system(
        os.path.join(sysdir, "date_states.sql"),
        dict(model, start=q(str(END - dt.timedelta(days=3649))), end=q(ds)))))
    dates = json.dumps([str(END - dt.timedelta(days=i)) for i in range(29, -1, -1)])
    for s in statements(render_system(os.path.join(sysdir, "reserve.sql"),
                                      {"run_id": "2", "selected": q(dates),
                                       "expires_at": q("2099-01-01 00:00:00")})):
        items.append(("per run: reserve", s))
    for s in statements(render_system(os.path.join(sysdir, "release.sql"),
                                      {"run_id": "2", "why": q("run ended")})):
        items.append(("per run: release", s))
    for name in ("live_runs", "held_by_run", "skipped_of_run", "finish_run"):
        path = os.path.join(ROOT, "queries", name + ".sql")
        if not os.path.exists(path):
            say(f"   (queries/{name}.sql is gone; not planned)")
            continue
        with open(path) as f:
            text = f.read().replace(":run_id", "2").replace(":status", "'success'").replace(":error", "NULL")
        items.append((f"per run: {name}", text))
    plans = []
    for where, s in items:
        p = subprocess.run([SQLITE, db, "EXPLAIN QUERY PLAN " + s + ";"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        plan = p.stdout.decode().rstrip()
        if p.returncode != 0 and "ORDER" in plan and re.search(r"group_concat|string_agg", s):
            # string_agg / group_concat(... ORDER BY ...) need SQLite 3.44 (sqlrun bundles a
            # newer SQLite than Debian's CLI); the ordering inside the aggregate does not
            # change a lookup.
            s2 = re.sub(r"(?:group_concat|string_agg)\(([^()]*?),?\s*ORDER BY [^()]*\)",
                        r"group_concat(\1)", s)
            p = subprocess.run([SQLITE, db, "EXPLAIN QUERY PLAN " + s2 + ";"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            plan = ("(planned without the ORDER BY inside string_agg, which this sqlite3 CLI "
                    "cannot parse)\n" + p.stdout.decode().rstrip())
        first = re.sub(r"\s+", " ", s)[:110]
        say(f"\n-- {where}: {first}{'...' if len(s) > 110 else ''}")
        say(plan if plan else "(no plan: nothing to look up)")
        plans.append({"where": where, "sql": s, "plan": plan})
        if re.search(r"^\W*SCAN (o|orders|daily_revenue|run_partitions|reservations|runs|seals|p|r|bp|lp|s)\b(?! USING| VIRTUAL)", plan, re.M):
            say("   ^^^ full scan of a table that grows with history")
    RESULTS["plans"] = plans
    remove_db(db)


def templates_without_checks(b):
    """The built-in pipeline's models and views, without its checks: `sqlrun new` into
    bench/work, then checks/ removed (untimed)."""
    folder = os.path.join(WORK, "no_checks")
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([b.bin, "new", folder], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    shutil.rmtree(os.path.join(folder, "checks"))
    return folder


def workload_k(b):
    """The built-in checks' cost: a 365-day backfill with them against the same without."""
    src = b.generate("y1")
    bare = templates_without_checks(b)
    args = ["apply", "--interval", interval(365)]

    def case(copy, templates):
        def prepare():
            db = fresh_copy(src, os.path.join(WORK, copy))
            extra = ["--templates", templates] if templates else []
            return [b.bin, "--db", db, *extra, *args], None, expect_dates(365)
        return prepare

    with_checks = "sqlrun apply, built-in checks (365 dates)"
    without = "sqlrun apply, no checks (365 dates)"
    compare("k", "backfill 365 days x 1,000/day with and without the built-in checks",
            [(with_checks, case("k_checks.db", None)), (without, case("k_bare.db", bare))])
    ratio("k", with_checks, without, 1.3)
    for name in ("k_checks.db", "k_bare.db"):
        remove_db(os.path.join(WORK, name))


def workload_s(b):
    """A sealed year's cost: recomputing 365 sealed dates (compared, corrected if changed:
    correct.sql, with its seal lookups) against recomputing the same dates unsealed
    (replaced). Both on a copy of the computed year; the sealed copy is sealed untimed."""
    src = b.computed("y1")
    sealed_src = os.path.join(WORK, "s_sealed_src.db")
    if not b.cached("s_sealed_src", "sealed"):
        fresh_copy(src, sealed_src)
        run([*b.sqlrun(sealed_src, "seal", "--interval", interval(365), "--reason", "bench")])
        checkpoint(sealed_src)
        b.stamp("s_sealed_src", "sealed")
    args = ["--interval", interval(365)]
    sealed = "sqlrun apply, 365 sealed dates (compare)"
    plain = "sqlrun apply, 365 dates not sealed (replace)"
    compare("s", "recompute a computed year, sealed and not", [
        (sealed, apply_case(b, sealed_src, "s_sealed.db", args, 365)),
        (plain, apply_case(b, src, "s_plain.db", args, 365)),
    ])
    ratio("s", sealed, plain)
    for name in ("s_sealed.db", "s_plain.db"):
        remove_db(os.path.join(WORK, name))


def workload_h(b):
    """History's cost: recomputing a computed year (each date's replace keeps the row it
    takes out, and prunes) against the same with the binary from before history
    (BENCH_BEFORE_BIN: e.g. a build of 93827b1). Each binary makes its own databases."""
    before = os.environ.get("BENCH_BEFORE_BIN")
    if not before:
        say("\n== h: skipped: set BENCH_BEFORE_BIN to a sqlrun built before history "
            "(git worktree add /tmp/before 93827b1; cargo build --release there)")
        return
    old = Bench(before, prefix="before-")
    sources = {"with": b.computed("y1"), "without": old.computed("y1")}
    args = ["apply", "--interval", interval(365)]

    def case(side, binary):
        def prepare():
            db = fresh_copy(sources[side], os.path.join(WORK, f"h_{side}.db"))
            return [binary, "--db", db, *args], None, expect_dates(365)
        return prepare

    with_history = "sqlrun apply, history kept (365 dates recomputed)"
    without = "sqlrun apply before history (365 dates recomputed)"
    compare("h", "backfill 365 days x 1,000/day over computed dates, with and without history",
            [(with_history, case("with", b.bin)), (without, case("without", old.bin))])
    ratio("h", with_history, without, 1.15)
    for side in sources:
        remove_db(os.path.join(WORK, f"h_{side}.db"))


def workload_v(b):
    """The preview's cost: `apply --diff` over a computed year (each date computed into
    temporary tables, compared with the stored rows, rolled back) against the `apply` of
    the same 365 dates that it previews, side by side on fresh copies of y1c."""
    src = b.computed("y1")
    args = ["--interval", interval(365)]

    def preview_case():
        db = fresh_copy(src, os.path.join(WORK, "v_preview.db"))
        return b.sqlrun(db, "apply", "--diff", *args), None, None

    preview = "sqlrun apply --diff (365 dates previewed)"
    apply = "sqlrun apply (the same 365 dates)"
    compare("v", "preview a backfill of 365 days x 1,000/day over computed dates, against the backfill",
            [(preview, preview_case), (apply, apply_case(b, src, "v_apply.db", args, 365))])
    ratio("v", preview, apply, 1.1)
    for name in ("v_preview.db", "v_apply.db"):
        remove_db(os.path.join(WORK, name))


def sqlite_version():
    return subprocess.run([SQLITE, "--version"], stdout=subprocess.PIPE).stdout.decode().split()[0]


# ---------------------------------------------------------------- main

SECTIONS = {"e": workload_e, "a": workload_a, "b": workload_b, "c": workload_c,
            "d": workload_d, "f": workload_f, "g": workload_g, "k": workload_k, "s": workload_s, "h": workload_h,
            "v": workload_v,
            "profile": workload_profile, "plans": workload_plans}


def sections_of(names, pg_sections):
    """Section names, with the groups `sqlite` (a to plans) and `pg` (every pg-*)."""
    todo = []
    for name in names or ["sqlite", "pg"]:
        group = {"sqlite": list(SECTIONS), "pg": list(pg_sections)}.get(name, [name])
        for s in group:
            if s not in SECTIONS and s not in pg_sections:
                sys.exit(f"bench: unknown section {s}; sections: sqlite {' '.join(SECTIONS)} "
                         f"pg {' '.join(pg_sections)}")
            todo.append(s)
    return todo


def main():
    import pg       # after the alias below: pg.py's `import bench` is this module
    import lookups
    SECTIONS["lk"] = lookups.workload_lk
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("sections", nargs="*", help="sqlite pg " + " ".join([*SECTIONS, *pg.SECTIONS]))
    args = ap.parse_args()
    todo = sections_of(args.sections, pg.SECTIONS)
    os.makedirs(WORK, exist_ok=True)
    b = Bench(args.bin)
    version = subprocess.run([b.bin, "--version"], stdout=subprocess.PIPE).stdout.decode().strip()
    say(f"sqlrun benchmark: {version} ({b.key['bin']}), sqlite3 CLI {sqlite_version()}, "
        f"{os.cpu_count()} cores, {RUNS} runs per command, seed {SEED}, {PER_DAY} orders/day; "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    t0 = time.perf_counter()
    for name in DBS:
        b.generate(name)
    for s in SECTIONS:           # e first: its first 3,650-day run becomes y10c
        if s in todo:
            SECTIONS[s](b)
    if any(s in pg.SECTIONS for s in todo):
        pg.run_sections(b, todo)
    say(f"\nbench: done in {time.perf_counter() - t0:.0f} s; load average now "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    summary()
    with open(os.path.join(WORK, "results.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)


def summary():
    say("\nsummary")
    for key, r in RESULTS.items():
        for rt in (r.get("ratios", []) if isinstance(r, dict) else []):
            t = rt["target"]
            say(f"   {key}: {rt['num']} / {rt['den']} = {rt['median']:.3f}"
                + (f" (target <= {t}: {'PASS' if rt['median'] <= t else 'MISS'})" if t else ""))
    for key in ("d", "pg-d"):
        if key in RESULTS:
            for label, s in RESULTS[key]["cases"].items():
                say(f"   {key}: {label}: median {s['median'] * 1000:.0f} ms")
    for key in ("e", "pg-e"):
        if key in RESULTS:
            say(f"   {key}: max RSS 3,650-day minus 14-day backfill: "
                f"{RESULTS[key]['diff_mb_median']:+.1f} MB (medians)")


if __name__ == "__main__":
    sys.modules["bench"] = sys.modules["__main__"]
    main()
