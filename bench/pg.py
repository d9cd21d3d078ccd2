"""The PostgreSQL workloads of the sqlrun benchmark (run them through bench/run.sh pg).

A throwaway cluster of the bench's own, started as the tests start theirs (initdb as the
postgres user, a unix socket in a temp folder, listen_addresses='', stopped at the end),
with PostgreSQL's default settings: fsync, synchronous_commit and full_page_writes on, so
every figure is a durable commit. Its data folder is bench/work/pg/data, so that the
generated databases survive between runs (as bench/work/*.db do for SQLite).

Datasets are the SQLite ones (`sqlrun generate`, cached in bench/work/), copied into a
database each with `COPY` after `sqlrun init`, then VACUUM ANALYZE. A fresh copy of a
database is `CREATE DATABASE copy TEMPLATE src STRATEGY FILE_COPY` and a CHECKPOINT,
before the clock starts.
"""

import ctypes
import datetime as dt
import json
import os
import pwd
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import bench as sq
import lookups
from harness import RESULTS, Parallel, compare, expect_dates, ratio, run, run_parallel, say, stats

PG_WORK = os.path.join(sq.WORK, "pg")
DATA = os.path.join(PG_WORK, "data")
RAW = {"y1": 365, "y10": 3650, "d14": 14, "d60": 60}
# Settings beside PostgreSQL's defaults: no TCP, and UTC (sqlrun's dates are UTC days).
SETTINGS = ["listen_addresses=", "TimeZone=UTC", "log_timezone=UTC"]
PROFILE_SETTINGS = ["shared_preload_libraries=pg_stat_statements,auto_explain",
                    "pg_stat_statements.track=all", "pg_stat_statements.track_utility=on",
                    "pg_stat_statements.track_planning=on",
                    # the plan of any statement over 50 ms lands in the server log
                    "auto_explain.log_min_duration=50", "auto_explain.log_analyze=on",
                    "auto_explain.log_buffers=on", "auto_explain.log_nested_statements=on"]


# ---------------------------------------------------------------- the server

def bin_dir():
    """initdb and postgres: from PATH (following Debian's symlinks) or the newest
    /usr/lib/postgresql/*/bin."""
    found = []
    initdb = shutil.which("initdb")
    if initdb:
        found.append(os.path.dirname(os.path.realpath(initdb)))
    base = "/usr/lib/postgresql"
    versions = sorted((int(v) for v in os.listdir(base) if v.isdigit()), reverse=True) \
        if os.path.isdir(base) else []
    found += [os.path.join(base, str(v), "bin") for v in versions]
    for d in found:
        if all(os.path.isfile(os.path.join(d, p)) for p in ("initdb", "postgres", "psql")):
            return d
    sys.exit("bench: PostgreSQL is not installed (initdb, postgres and psql are needed): "
             "apt-get install postgresql (.ci/run does this when initdb is missing)")


def server_user():
    """initdb and postgres refuse root: as root they run as the postgres user."""
    if os.geteuid() != 0:
        return None
    try:
        p = pwd.getpwnam("postgres")
    except KeyError:
        sys.exit("bench: running as root, and there is no postgres user to run the server: "
                 "apt-get install postgresql creates it")
    return p.pw_uid, p.pw_gid


def as_user(user, deathsig=None):
    """preexec_fn: become the server user, then (credentials changes clear it) ask the
    kernel for a signal when the bench process dies."""
    def pre():
        if user:
            os.setgid(user[1])
            os.setuid(user[0])
        if deathsig:
            ctypes.CDLL(None, use_errno=True).prctl(1, deathsig, 0, 0, 0)   # PR_SET_PDEATHSIG
    return pre


class Server:
    def __init__(self, settings=()):
        self.bin = bin_dir()
        self.user = server_user()
        self.settings = SETTINGS + list(settings)
        self.proc = None
        # The socket's path must fit in 107 bytes: a short folder in /tmp.
        self.sock = tempfile.mkdtemp(prefix="sqlrun-bench-pg-", dir="/tmp")
        self.chown(self.sock)

    def chown(self, path):
        if self.user:
            os.chown(path, *self.user)

    def version(self):
        out = subprocess.run([os.path.join(self.bin, "postgres"), "--version"],
                             stdout=subprocess.PIPE, check=True).stdout.decode()
        return out.split()[2]       # "postgres (PostgreSQL) 15.18 (Debian ...)"

    def start(self):
        os.makedirs(PG_WORK, exist_ok=True)
        if not os.path.exists(os.path.join(DATA, "PG_VERSION")):
            shutil.rmtree(DATA, ignore_errors=True)
            os.makedirs(DATA, mode=0o700)
            self.chown(DATA)
            say(f"  initdb {DATA} ({self.version()})")
            subprocess.run([os.path.join(self.bin, "initdb"), "-D", DATA, "-U", "postgres",
                            "-A", "trust", "-E", "UTF8", "--no-locale", "--no-instructions"],
                           check=True, stdout=subprocess.DEVNULL, cwd="/",
                           env=dict(os.environ, LC_ALL="C"), preexec_fn=as_user(self.user))
        log = open(os.path.join(PG_WORK, "server.log"), "ab")
        argv = [os.path.join(self.bin, "postgres"), "-D", DATA, "-k", self.sock]
        for s in self.settings:
            argv += ["-c", s]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd="/",
                                     env=dict(os.environ, LC_ALL="C"),
                                     preexec_fn=as_user(self.user, signal.SIGQUIT))
        log.close()
        deadline = time.monotonic() + 120      # a crash recovery after a killed run takes a while
        while True:
            if self.proc.poll() is not None:
                sys.exit(f"bench: postgres exited at start ({self.proc.returncode}); "
                         f"see {os.path.join(PG_WORK, 'server.log')}")
            ok = subprocess.run([os.path.join(self.bin, "psql"), "-X", "-q", "-h", self.sock,
                                 "-U", "postgres", "-d", "postgres", "-c", "SELECT 1"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
            if ok:
                time.sleep(0.5)
                self.aux = len(self.children())     # checkpointer, walwriter, launchers...
                return
            if time.monotonic() > deadline:
                sys.exit("bench: postgres did not take connections within 120 s")
            time.sleep(0.1)

    def stop(self):
        """A fast shutdown (its checkpoint makes the next start quick)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGQUIT)
                self.proc.wait()
        self.proc = None
        shutil.rmtree(self.sock, ignore_errors=True)

    def restart(self, settings):
        self.stop()
        self.sock = tempfile.mkdtemp(prefix="sqlrun-bench-pg-", dir="/tmp")
        self.chown(self.sock)
        self.settings = SETTINGS + list(settings)
        self.start()

    def backends_cpu(self):
        """CPU seconds (user + sys) of the server's processes that have ended: every
        session's backend is a child of the postmaster, which reaps it, so a run's sessions
        are counted once they end (they end with the run)."""
        self.settle()
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")   # cutime, cstime

    def settle(self):
        """Waits (at most 2 s) until no session's backend is left from before, so that
        the next run's server CPU is only its own."""
        deadline = time.monotonic() + 2
        while len(self.children()) > self.aux and time.monotonic() < deadline:
            time.sleep(0.01)

    def children(self):
        path = f"/proc/{self.proc.pid}/task/{self.proc.pid}/children"
        with open(path) as f:
            return f.read().split()

    def url(self, db):
        return f"postgresql:///{db}?host={self.sock}&user=postgres"

    def psql_argv(self, db, *extra):
        return [os.path.join(self.bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
                "-h", self.sock, "-U", "postgres", "-d", db, *extra]

    def sql(self, db, *statements):
        """Runs statements (each its own -c); returns stdout, unaligned, no headers."""
        argv = self.psql_argv(db, "-A", "-t", "-F", "|")
        for s in statements:
            argv += ["-c", s]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit(f"bench: psql on {db} failed: {p.stderr.decode()[-2000:]}")
        return p.stdout.decode().strip()

    def exists(self, db):
        return self.sql("postgres", f"SELECT count(*) FROM pg_database WHERE datname = {lit(db)}") == "1"

    def drop(self, db):
        self.sql("postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')

    def copy(self, src, dst):
        """A fresh copy of src, checkpointed: no run pays for flushing what came before."""
        self.drop(dst)
        self.sql("postgres", f'CREATE DATABASE "{dst}" TEMPLATE "{src}" STRATEGY FILE_COPY', "CHECKPOINT")
        self.settle()
        return dst


def lit(value):
    return "'" + str(value).replace("'", "''") + "'"


# ---------------------------------------------------------------- datasets

class PgBench:
    def __init__(self, b, server, prefix=""):
        self.b = b
        # Another binary's databases (pg-h's "before") live beside, under a prefix.
        self.prefix = prefix
        self.pg = server
        self.key = dict(b.key, postgres=server.version())
        self.jobs = "--jobs" in subprocess.run([b.bin, "apply", "--help"], stdout=subprocess.PIPE).stdout.decode()

    def sqlrun(self, db, *args):
        return [self.b.bin, "--db", self.pg.url(db), *args]

    def stamp_path(self, name):
        return os.path.join(PG_WORK, name + ".key")

    def cached(self, name, extra=None):
        path = self.stamp_path(name)
        if not (os.path.exists(path) and self.pg.exists(name)):
            return False
        with open(path) as f:
            return json.load(f) == dict(self.key, extra=extra)

    def stamp(self, name, extra=None):
        with open(self.stamp_path(name), "w") as f:
            json.dump(dict(self.key, extra=extra), f)

    def raw(self, name):
        """The SQLite dataset's orders in a database of their own, after `sqlrun init`
        (a bulk load, as a loader does: the change triggers note each date once)."""
        days, name = RAW[name], self.prefix + name
        if self.cached(name):
            return name
        src = self.b.generate(name[len(self.prefix):])
        say(f"  loading {name} into PostgreSQL: sqlrun init, COPY of {days} days of orders, VACUUM ANALYZE")
        self.pg.drop(name)
        self.pg.sql("postgres", f'CREATE DATABASE "{name}"')
        run(self.sqlrun(name, "init"))
        dump = subprocess.Popen([sq.SQLITE, "-csv", src, "SELECT order_id, order_date, amount, created_at "
                                 "FROM orders ORDER BY rowid"], stdout=subprocess.PIPE)
        load = subprocess.run(self.pg.psql_argv(name, "-c", "SET TimeZone TO 'UTC'", "-c",
                                                "\\copy orders (order_id, order_date, amount, created_at) "
                                                "FROM STDIN WITH (FORMAT csv)"), stdin=dump.stdout)
        dump.stdout.close()
        if dump.wait() != 0 or load.returncode != 0:
            sys.exit(f"bench: copying the orders of {src} into PostgreSQL failed")
        self.pg.sql(name, "VACUUM ANALYZE")
        q = "SELECT count(*), sum(amount) FROM orders"
        a = subprocess.run([sq.SQLITE, src, q], stdout=subprocess.PIPE, check=True).stdout.decode().strip()
        if a != self.pg.sql(name, q):
            sys.exit(f"bench: {name} on PostgreSQL does not hold the orders of {src}")
        self.stamp(name)
        return name

    def computed(self, name):
        """name + 'c': after one backfill of all its dates (the state store has history)."""
        cname = self.prefix + name + "c"
        if self.cached(cname, "computed"):
            return cname
        self.pg.copy(self.raw(name), cname)
        say(f"  preparing {cname}: one backfill of all {RAW[name]} dates of {name}")
        run(self.sqlrun(cname, "apply", "--interval", sq.interval(RAW[name])))
        self.finish_computed(cname)
        return cname

    def finish_computed(self, cname):
        self.pg.sql(cname, "VACUUM ANALYZE", "CHECKPOINT")
        self.stamp(cname, "computed")

    def apply_case(self, src, copy, args, ndates, jobs=None):
        def prepare():
            self.pg.copy(src, copy)
            return self.sqlrun(copy, "apply", *self.jobs_args(jobs), *args), None, expect_dates(ndates)
        return prepare

    def jobs_args(self, jobs):
        return ["--jobs", str(jobs)] if jobs and self.jobs else []

    def wal_syncs(self):
        """How often the server has flushed the WAL to disk (pg_stat_wal.wal_sync): with
        several sessions committing at once one flush may cover several commits."""
        return int(self.pg.sql("postgres", "SELECT pg_stat_force_next_flush()",
                               "SELECT wal_sync FROM pg_stat_wal").split()[-1])

    def counting_syncs(self, prepare):
        """prepare, whose check also returns the WAL flushes of the run."""
        def wrapped():
            argv, stdin, check = prepare()
            before = self.wal_syncs()

            def counted(err):
                if check:
                    check(err)
                time.sleep(0.6)         # the WAL writer reports its flushes every 500 ms or so
                return self.wal_syncs() - before
            return argv, stdin, counted
        return wrapped

    def revenue(self, db):
        """The numbers a run leaves (daily_revenue) and how many dates it recorded."""
        return self.pg.sql(db, "SELECT count(*), sum(revenue), sum(order_count), "
                               "md5(string_agg(ds || ':' || revenue || ':' || order_count, ',' ORDER BY ds)) "
                               "FROM daily_revenue",
                           "SELECT count(*) FROM run_partitions WHERE status = 'success'")


# ---------------------------------------------------------------- a and jobs: psql and the floor

def rendered(p, src, days=365, name="a"):
    """The SQL each of the last `days` dates runs, from `sqlrun render --date D` on a
    scratch copy (untimed, cached): one `BEGIN ISOLATION LEVEL REPEATABLE READ ... COMMIT`
    per date."""
    path = os.path.join(PG_WORK, f"{name}_rendered.json")
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        if isinstance(saved, dict) and saved.get("key") == p.key:
            return saved["bodies"]
    say("  rendering 365 dates with `sqlrun render --date D` (untimed)")
    scratch = p.pg.copy(src, "pg_render")
    dates = [sq.start_of(days) + dt.timedelta(days=i) for i in range(days)]
    bodies = [subprocess.run(p.sqlrun(scratch, "render", "--date", str(d)), check=True,
                             stdout=subprocess.PIPE).stdout.decode() for d in dates]
    body = "".join(bodies)
    # The record statement inserts run_partitions (run_id, ds) with the id the next run gets
    # (1 on a fresh copy, as sqlrun's own run): (run_id, ds) is unique across the dates.
    ids = set(re.findall(r"INSERT INTO run_partitions .*?\nVALUES \((\d+),", body, re.S))
    begins = body.count("BEGIN ISOLATION LEVEL REPEATABLE READ;")
    if ids != {"1"} or begins != days or body.count("COMMIT;") != days:
        sys.exit(f"bench: unexpected rendered SQL (run ids {ids}, {begins} transactions)")
    with open(path, "w") as f:
        json.dump({"key": p.key, "bodies": bodies}, f)
    p.pg.drop(scratch)
    return bodies


def scripts(p, src, days=365, prefix="a"):
    """psql scripts: every date in one session; the odd and the even dates in two; each
    for sqlrun's rendered SQL and for the plain per-day SQL (PLAIN)."""
    bodies = rendered(p, src, days, prefix)
    dates = [sq.start_of(days) + dt.timedelta(days=i) for i in range(days)]
    plain = [PLAIN.format(ds=lit(d)) for d in dates]
    latest = [PLAIN_LATEST.format(ds=lit(d)) for d in dates]
    out = {}
    for kind, texts in (("", bodies), ("plain_", plain), ("latest_", latest)):
        for name, part in (("all", texts), ("odd", texts[0::2]), ("even", texts[1::2])):
            path = os.path.join(PG_WORK, f"{prefix}_{kind}{name}.sql")
            with open(path, "w") as f:
                f.write("".join(part))
            out[kind + name] = path
    floor = os.path.join(PG_WORK, "a_floor.sql")
    with open(floor, "w") as f:
        f.write(FLOOR.format(start=lit(sq.start_of(365)), end=lit(sq.END)))
    out["floor"] = floor
    return out


# The physical floor: the same rule (orders_latest) and the same table, for the whole
# interval in one statement and one transaction; no record, no reservation.
FLOOR = """BEGIN;
DELETE FROM daily_revenue WHERE ds BETWEEN DATE {start} AND DATE {end};
INSERT INTO daily_revenue (ds, revenue, order_count, run_id)
SELECT d.ds, coalesce(sum(o.amount), 0), count(o.order_id), 1
FROM (SELECT CAST(g AS date) AS ds
      FROM generate_series(DATE {start}, DATE {end}, interval '1 day') AS g) AS d
LEFT JOIN orders_latest AS o ON o.order_date = d.ds
GROUP BY d.ds;
COMMIT;
"""


# The plain per-day SQL a team would write by hand: the date's rows replaced, each order
# once in its latest version by row_number() within the day (not across history, as
# orders_latest does), one transaction a day, no record, no reservation.
PLAIN = """BEGIN;
DELETE FROM daily_revenue WHERE ds = DATE {ds};
INSERT INTO daily_revenue (ds, revenue, order_count, run_id)
SELECT DATE {ds}, coalesce(sum(v.amount), 0), count(*), 1
FROM (SELECT o.amount,
             row_number() OVER (PARTITION BY o.order_id
                                ORDER BY o.created_at DESC, o.rowid DESC) AS version
      FROM orders AS o
      WHERE o.order_date = DATE {ds}) AS v
WHERE v.version = 1;
COMMIT;
"""


# The same per-day SQL with the contract's rule: each order once, in its latest version
# across all of its rows (orders_latest, the view sqlrun's model reads), on that version's
# date. It leaves sqlrun's numbers (checked); what it lacks is the record, the reservation
# and the checks.
PLAIN_LATEST = """BEGIN;
DELETE FROM daily_revenue WHERE ds = DATE {ds};
INSERT INTO daily_revenue (ds, revenue, order_count, run_id)
SELECT DATE {ds}, coalesce(sum(o.amount), 0), count(*), 1
FROM orders_latest AS o
WHERE o.order_date = DATE {ds};
COMMIT;
"""


def psql_case(p, src, copy, script):
    def prepare():
        p.pg.copy(src, copy)
        return p.pg.psql_argv(copy, "-f", "-"), script, no_stderr
    return prepare


def psql_pair_case(p, src, copy, odd, even):
    def prepare():
        p.pg.copy(src, copy)
        return Parallel([p.pg.psql_argv(copy, "-f", "-")] * 2, [odd, even]), None, no_stderr_all
    return prepare


def no_stderr(err):
    if err.strip():
        sys.exit(f"bench: the baseline failed:\n{err}")


def no_stderr_all(outs):
    for _, err in outs:
        no_stderr(err)


def check_same(p, runs):
    """Untimed: each (label, database, prepare) runs once on its fresh copy; returns what
    each left (see PgBench.revenue)."""
    seen = {}
    for label, db, prepare in runs:
        argv, stdin, check = prepare()
        if isinstance(argv, Parallel):
            check(run_parallel(argv)[1])
        else:
            _, err = run(argv, stdin=stdin)
            if check:
                check(err)
        seen[label] = p.revenue(db)
    return seen


def show_check(seen, key_of=lambda v: v, differs=()):
    """Every case but those in `differs` must leave the first one's numbers; the plain
    per-day SQL dedups within the day, so an order re-sent onto another date counts on
    both (its numbers are shown, not compared)."""
    first = None
    for label, v in seen.items():
        say(f"  check: {label}: rows|revenue|orders|md5 / success records = {v.replace(chr(10), ' / ')}")
        if label in differs:
            continue
        k = key_of(v)
        if first is None:
            first = k
        elif k != first:
            sys.exit(f"bench: {label} leaves other numbers than the first")


def revenue_only(v):
    return v.split("\n")[0]


def show_syncs(key):
    for label, c in RESULTS[key]["cases"].items():
        if "extra" in c:
            say(f"   WAL flushes (pg_stat_wal.wal_sync) per run, {label}: median {statistics.median(c['extra']):.0f}")


def pg_a(p):
    """365 days x 1,000/day: sqlrun apply (--jobs 1) against psql running the rendered SQL,
    one transaction per date, and against the set-based floor."""
    src = p.raw("y1")
    sc = scripts(p, src)
    one = "sqlrun apply --jobs 1 (365 dates)" if p.jobs else "sqlrun apply (365 dates)"
    cases = [
        (one, p.apply_case(src, "pa_sqlrun", ["--interval", sq.interval(365)], 365, jobs=1)),
        ("psql, rendered SQL, a transaction per date", psql_case(p, src, "pa_psql", sc["all"])),
        ("set-based INSERT ... SELECT, one transaction", psql_case(p, src, "pa_floor", sc["floor"])),
        ("psql, plain per-day SQL, a transaction per date", psql_case(p, src, "pa_plain", sc["plain_all"])),
        ("psql, plain per-day SQL over orders_latest", psql_case(p, src, "pa_latest", sc["latest_all"])),
    ]
    dbs = ["pa_sqlrun", "pa_psql", "pa_floor", "pa_plain", "pa_latest"]
    seen = check_same(p, [(c[0], db, c[1]) for c, db in zip(cases[:2], dbs)])
    show_check(seen)
    seen.update(check_same(p, [(c[0], db, c[1]) for c, db in zip(cases[2:], dbs[2:])]))
    show_check(seen, revenue_only, differs=(cases[3][0],))
    compare("pg-a", "PostgreSQL: backfill 365 days x 1,000/day (fresh copy of y1 each run)",
            [(label, p.counting_syncs(prepare)) for label, prepare in cases], server_cpu=p.pg.backends_cpu)
    show_syncs("pg-a")
    ratio("pg-a", one, cases[3][0], 1.0)
    ratio("pg-a", one, cases[4][0], 1.0)
    ratio("pg-a", one, cases[1][0], 0.9)
    ratio("pg-a", one, cases[2][0])
    ratio("pg-a", cases[1][0], cases[2][0])
    ratio("pg-a", cases[1][0], cases[3][0])
    for copy in dbs:
        p.pg.drop(copy)


def pg_s(p):
    """Start-up: 14 dates (d14, fresh copy) with sqlrun against psql running the same 14
    dates, sqlrun's rendered SQL and the plain per-day SQL: a short run is mostly what a
    run costs before and after its dates."""
    src = p.raw("d14")
    sc = scripts(p, src, 14, "s")
    one = "sqlrun apply --jobs 1 (14 dates)"
    cases = [
        (one, p.apply_case(src, "ps_sqlrun", ["--interval", sq.interval(14)], 14, jobs=1)),
        ("psql, rendered SQL (14 dates)", psql_case(p, src, "ps_psql", sc["all"])),
        ("psql, plain per-day SQL (14 dates)", psql_case(p, src, "ps_plain", sc["plain_all"])),
    ]
    dbs = ["ps_sqlrun", "ps_psql", "ps_plain"]
    seen = check_same(p, [(c[0], db, c[1]) for c, db in zip(cases[:2], dbs)])
    show_check(seen)
    seen.update(check_same(p, [(cases[2][0], dbs[2], cases[2][1])]))
    show_check(seen, revenue_only, differs=(cases[2][0],))
    compare("pg-s", "PostgreSQL: 14 dates from a fresh copy of d14 (start-up)", cases,
            server_cpu=p.pg.backends_cpu)
    ratio("pg-s", one, cases[1][0], 1.2)
    ratio("pg-s", one, cases[2][0])
    for copy in dbs:
        p.pg.drop(copy)


def pg_k(p):
    """The built-in checks' cost on PostgreSQL: a 365-day backfill with them against the
    same without (--jobs 1)."""
    src = p.raw("y1")
    bare = sq.templates_without_checks(p.b)
    args = ["--interval", sq.interval(365)]

    def bare_case(copy):
        def prepare():
            p.pg.copy(src, copy)
            argv = [p.b.bin, "--db", p.pg.url(copy), "--templates", bare, "apply",
                    *p.jobs_args(1), *args]
            return argv, None, expect_dates(365)
        return prepare

    with_checks = "sqlrun apply, built-in checks (365 dates)"
    without = "sqlrun apply, no checks (365 dates)"
    compare("pg-k", "PostgreSQL: backfill 365 days x 1,000/day with and without the built-in checks",
            [(with_checks, p.apply_case(src, "pk_checks", args, 365, jobs=1)),
             (without, bare_case("pk_bare"))])
    ratio("pg-k", with_checks, without, 1.3)
    for copy in ("pk_checks", "pk_bare"):
        p.pg.drop(copy)


def pg_h(p):
    """History's cost on PostgreSQL: recomputing a computed year (each date's replace
    keeps the row it takes out, and prunes) against the binary from before history
    (BENCH_BEFORE_BIN), --jobs 1. Each binary makes its own databases."""
    before = os.environ.get("BENCH_BEFORE_BIN")
    if not before:
        say("\n== pg-h: skipped: set BENCH_BEFORE_BIN to a sqlrun built before history")
        return
    old = PgBench(sq.Bench(before, prefix="before-"), p.pg, prefix="before_")
    args = ["--interval", sq.interval(365)]
    with_history = "sqlrun apply, history kept (365 dates recomputed)"
    without = "sqlrun apply before history (365 dates recomputed)"
    compare("pg-h", "PostgreSQL: backfill 365 days x 1,000/day over computed dates, with and without history",
            [(with_history, p.apply_case(p.computed("y1"), "ph_with", args, 365, jobs=1)),
             (without, old.apply_case(old.computed("y1"), "ph_without", args, 365, jobs=1))])
    ratio("pg-h", with_history, without, 1.15)
    for copy in ("ph_with", "ph_without"):
        p.pg.drop(copy)


def pg_v(p):
    """The preview's cost on PostgreSQL: `apply --diff` over a computed year against the
    `apply` of the same 365 dates (--jobs 1), side by side on fresh copies of y1c."""
    src = p.computed("y1")
    args = ["--interval", sq.interval(365)]

    def preview_case():
        p.pg.copy(src, "pv_preview")
        return p.sqlrun("pv_preview", "apply", "--diff", *args), None, None

    preview = "sqlrun apply --diff (365 dates previewed)"
    apply = "sqlrun apply (the same 365 dates)"
    compare("pg-v", "PostgreSQL: preview a backfill of 365 days x 1,000/day over computed dates, against the backfill",
            [(preview, preview_case), (apply, p.apply_case(src, "pv_apply", args, 365, jobs=1))],
            server_cpu=p.pg.backends_cpu)
    ratio("pg-v", preview, apply, 1.1)
    for copy in ("pv_preview", "pv_apply"):
        p.pg.drop(copy)


def pg_jobs(p):
    """--jobs 2 against two psql sessions splitting the dates (odd and even), each a
    transaction per date; and what --jobs 1, 4 and 8 do on this machine."""
    if not p.jobs:
        say("\n== pg-jobs: skipped: this sqlrun has no `apply --jobs` (see `sqlrun apply --help`)")
        RESULTS["pg-jobs"] = {"skipped": "no --jobs in this binary"}
        return
    src = p.raw("y1")
    sc = scripts(p, src)
    args = ["--interval", sq.interval(365)]
    two = "sqlrun apply --jobs 2"
    pair = "2 psql sessions (odd / even dates)"
    plain_pair = "2 psql sessions, plain per-day SQL"
    latest_pair = "2 psql sessions, plain SQL over orders_latest"
    cases = [
        (two, p.apply_case(src, "pj_2", args, 365, jobs=2)),
        (pair, psql_pair_case(p, src, "pj_psql", sc["odd"], sc["even"])),
        (plain_pair, psql_pair_case(p, src, "pj_plain", sc["plain_odd"], sc["plain_even"])),
        (latest_pair, psql_pair_case(p, src, "pj_latest", sc["latest_odd"], sc["latest_even"])),
        ("sqlrun apply --jobs 1", p.apply_case(src, "pj_1", args, 365, jobs=1)),
        ("sqlrun apply --jobs 4", p.apply_case(src, "pj_4", args, 365, jobs=4)),
        ("sqlrun apply --jobs 8", p.apply_case(src, "pj_8", args, 365, jobs=8)),
    ]
    show_check(check_same(p, [(cases[0][0], "pj_2", cases[0][1]), (pair, "pj_psql", cases[1][1]),
                              (cases[6][0], "pj_8", cases[6][1])]))
    seen = check_same(p, [(two, "pj_2", cases[0][1]), (plain_pair, "pj_plain", cases[2][1]),
                          (latest_pair, "pj_latest", cases[3][1])])
    show_check(seen, revenue_only, differs=(plain_pair,))
    compare("pg-jobs", "PostgreSQL: backfill 365 days in parallel (fresh copy of y1 each run)",
            [(label, p.counting_syncs(prepare)) for label, prepare in cases], server_cpu=p.pg.backends_cpu)
    show_syncs("pg-jobs")
    ratio("pg-jobs", two, plain_pair, 1.0)
    ratio("pg-jobs", two, latest_pair, 1.0)
    ratio("pg-jobs", two, pair, 1.10)
    for label, _ in cases[4:]:
        ratio("pg-jobs", label, two)
    for copy in ("pj_2", "pj_psql", "pj_plain", "pj_latest", "pj_1", "pj_4", "pj_8"):
        p.pg.drop(copy)


# ---------------------------------------------------------------- b, c, d, e: history

def pg_b(p):
    big, small = p.computed("y10"), p.computed("d14")
    args = ["--as-of", str(sq.AS_OF)]
    cases = [("10 years (y10c: 3,650 days computed)", p.apply_case(big, "pb_big", args, 1)),
             ("14 days (d14c: 14 days computed)", p.apply_case(small, "pb_small", args, 1))]
    compare("pg-b", f"PostgreSQL: regular run (apply --as-of {sq.AS_OF}: recomputes {sq.END})", cases, server_cpu=p.pg.backends_cpu)
    ratio("pg-b", cases[0][0], cases[1][0], 1.5)
    p.pg.drop("pb_big")
    p.pg.drop("pb_small")


def pg_c(p):
    big, small = p.computed("y10"), p.computed("d60")
    args = ["--interval", sq.interval(30)]
    cases = [("10 years (y10c)", p.apply_case(big, "pc_big", args, 30)),
             ("60 days (d60c)", p.apply_case(small, "pc_small", args, 30))]
    compare("pg-c", f"PostgreSQL: backfill of 30 days ({sq.interval(30)}) on computed copies", cases, server_cpu=p.pg.backends_cpu)
    ratio("pg-c", cases[0][0], cases[1][0], 1.5)
    p.pg.drop("pc_big")
    p.pg.drop("pc_small")


def pg_d(p):
    big = p.computed("y10")
    ten = f"{sq.start_of(3650)}..{sq.END}"

    def reserve_case():
        p.pg.copy(big, "pd")
        return p.sqlrun("pd", "reserve", "--interval", ten, "--by", "bench"), None, None

    def status_case():
        p.pg.copy(big, "pd")
        return p.sqlrun("pd", "status"), None, None

    compare("pg-d", f"PostgreSQL: reserve {ten} (3,650 dates); status over 10 years (y10c)", [
        ("sqlrun reserve --interval (3,650 dates)", reserve_case),
        ("sqlrun status (3,650 dates, table to /dev/null)", status_case),
    ], server_cpu=p.pg.backends_cpu)
    p.pg.drop("pd")


def pg_e(p):
    """Peak RSS of a 3,650-day backfill against a 14-day one (raw databases). The first
    3,650-day run becomes y10c, the computed copy b, c and d use."""
    long_src, short_src = p.raw("y10"), p.raw("d14")
    say(f"\n== pg-e: PostgreSQL: peak memory of sqlrun (max RSS, /usr/bin/time -v): 3,650-day backfill "
        f"x{sq.RSS_LONG} vs 14-day backfill x{sq.RSS_SHORT}")
    out = {"3650": [], "14": []}
    walls = {"3650": [], "14": []}
    tfile = os.path.join(PG_WORK, "time.txt")
    for i in range(max(sq.RSS_LONG, sq.RSS_SHORT)):
        for key, src, days, n in (("3650", long_src, 3650, sq.RSS_LONG), ("14", short_src, 14, sq.RSS_SHORT)):
            if i >= n:
                continue
            db = p.pg.copy(src, f"pe_{key}")
            secs, err = run([sq.TIME, "-v", "-o", tfile,
                             *p.sqlrun(db, "apply", "--interval", sq.interval(days))])
            with open(tfile) as f:
                out[key].append(sq.max_rss_kb(f.read()))
            walls[key].append(secs)
            expect_dates(days)(err)
            if key == "3650" and i == 0 and not p.cached("y10c", "computed"):
                p.pg.drop("y10c")
                p.pg.sql("postgres", 'ALTER DATABASE "pe_3650" RENAME TO "y10c"')
                p.finish_computed("y10c")
            p.pg.drop(db)
    res = {}
    for key in ("3650", "14"):
        s = stats(out[key])
        res[key] = dict(s, runs_kb=out[key], wall=walls[key])
        w = statistics.median(walls[key])
        say(f"   {key:>4}-day backfill: max RSS min {s['min'] / 1024:7.1f} MB  median {s['median'] / 1024:7.1f} MB"
            f"  max {s['max'] / 1024:7.1f} MB  (n={s['n']}); wall median {w:.2f} s = {w / int(key) * 1000:.2f} ms/date")
    diff = (res["3650"]["median"] - res["14"]["median"]) / 1024
    worst = (res["3650"]["max"] - res["14"]["min"]) / 1024
    say(f"   difference of medians {diff:+.1f} MB (worst case max-min {worst:+.1f} MB)   "
        f"target within 10 MB: {'PASS' if abs(worst) <= 10 else 'MISS'}")
    RESULTS["pg-e"] = {"cases": res, "diff_mb_median": diff, "diff_mb_worst": worst}


# ---------------------------------------------------------------- l: loaders and statistics

ORDER_COLUMNS = "order_id, order_date, amount, created_at"


def pg_l(p):
    """What source tracking costs a loader, and generate straight into PostgreSQL:
    - COPY of y1's orders (383k rows) into sqlrun's tracked `orders`, emptied, against the
      same into a plain table of the same shape (LIKE orders INCLUDING ALL: its indexes);
    - 5,000 one-row INSERT transactions (psql, autocommit) into each, both holding y1;
    - `sqlrun generate` of the same 365 days x 1,000 into PostgreSQL and into SQLite
      (after `sqlrun init`, a fresh database each run): the same rows, so the ratio of
      the times is that of the rows per second."""
    src = p.raw("y1")
    csv = os.path.join(PG_WORK, "l_orders.csv")
    p.pg.sql(src, f"\\copy (SELECT {ORDER_COLUMNS} FROM orders ORDER BY rowid) TO {lit(csv)} WITH (FORMAT csv)")
    base = p.pg.copy(src, "pl_base")
    p.pg.sql(base, "CREATE TABLE plain (LIKE orders INCLUDING ALL)",
             f"INSERT INTO plain ({ORDER_COLUMNS}) SELECT {ORDER_COLUMNS} FROM orders ORDER BY rowid",
             "TRUNCATE source_changes", "VACUUM ANALYZE")
    rows = int(p.pg.sql(base, "SELECT count(*) FROM orders"))

    def copy_case(table):
        def prepare():
            db = p.pg.copy(base, "pl_copy")
            p.pg.sql(db, "TRUNCATE orders, plain, source_changes", "VACUUM ANALYZE", "CHECKPOINT")
            argv = p.pg.psql_argv(db, "-c", "SET TimeZone TO 'UTC'", "-c",
                                  f"\\copy {table} ({ORDER_COLUMNS}) FROM {lit(csv)} WITH (FORMAT csv)")

            def check(err):
                no_stderr(err)
                got = p.pg.sql(db, f"SELECT count(*) FROM {table}")
                if int(got) != rows:
                    sys.exit(f"bench: COPY into {table} left {got} rows, not {rows}")
            return argv, None, check
        return prepare

    one_rows = os.path.join(PG_WORK, "l_one_rows_{}.sql")
    for table in ("orders", "plain"):
        with open(one_rows.format(table), "w") as f:
            for i in range(5000):
                ds = sq.start_of(365) + dt.timedelta(days=i % 365)
                f.write(f"INSERT INTO {table} ({ORDER_COLUMNS}) VALUES "
                        f"('late-{i}', DATE '{ds}', {100 + i}, TIMESTAMPTZ '{ds} 12:00:00+00');\n")

    def one_row_case(table):
        def prepare():
            db = p.pg.copy(base, "pl_rows")
            argv = p.pg.psql_argv(db, "-f", "-")

            def check(err):
                no_stderr(err)
                if table == "orders":
                    noted = p.pg.sql(db, "SELECT count(DISTINCT ds) FROM source_changes")
                    if noted != "365":
                        sys.exit(f"bench: the tracked inserts noted {noted} dates, not 365")
            return argv, one_rows.format(table), check
        return prepare

    tracked, plain = "COPY into tracked orders", "COPY into a plain table"
    compare("pg-l", f"PostgreSQL: COPY of y1's {rows:,} orders into an empty table, tracked vs plain",
            [(tracked, copy_case("orders")), (plain, copy_case("plain"))], server_cpu=p.pg.backends_cpu)
    ratio("pg-l", tracked, plain, 1.3)
    copy_results = RESULTS["pg-l"]
    t1, p1 = "5,000 one-row INSERTs, tracked", "5,000 one-row INSERTs, plain"
    compare("pg-l", "PostgreSQL: 5,000 one-row INSERT transactions (autocommit) into a table holding y1",
            [(t1, one_row_case("orders")), (p1, one_row_case("plain"))], server_cpu=p.pg.backends_cpu)
    ratio("pg-l", t1, p1, 1.15)
    rows_results = RESULTS["pg-l"]
    generate_args = ["generate", "--start", str(sq.start_of(365)), "--days", "365",
                     "--per-day", str(sq.PER_DAY), "--seed", str(sq.SEED)]
    sqlite_db = os.path.join(PG_WORK, "l_generate.db")

    def generate_pg():
        p.pg.drop("pl_gen")
        p.pg.sql("postgres", 'CREATE DATABASE "pl_gen"')
        run(p.sqlrun("pl_gen", "init"))
        p.pg.sql("postgres", "CHECKPOINT")
        return p.sqlrun("pl_gen", *generate_args), None, None

    def generate_sqlite():
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(sqlite_db + suffix):
                os.remove(sqlite_db + suffix)
        run([p.b.bin, "--db", sqlite_db, "init"])
        return [p.b.bin, "--db", sqlite_db, *generate_args], None, None

    gp, gs = "sqlrun generate into PostgreSQL", "sqlrun generate into SQLite"
    compare("pg-l", "sqlrun generate, 365 days x 1,000/day, into PostgreSQL vs SQLite",
            [(gp, generate_pg), (gs, generate_sqlite)])
    ratio("pg-l", gp, gs, 3.0)
    q = "SELECT count(*), sum(amount) FROM orders"
    a = subprocess.run([sq.SQLITE, sqlite_db, q], stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    b = p.pg.sql("pl_gen", q)
    say(f"   check: generate left {b} (count|sum) on PostgreSQL, {a} on SQLite")
    if a != b:
        sys.exit("bench: generate left other orders on PostgreSQL than on SQLite")
    gen = RESULTS["pg-l"]
    RESULTS["pg-l"] = {"copy": copy_results, "one_row": rows_results, "generate": gen}
    for db in ("pl_base", "pl_copy", "pl_rows", "pl_gen"):
        p.pg.drop(db)


# ---------------------------------------------------------------- x: eight runners at once

def overlapping(n=8, length=120):
    """n intervals of `length` days whose union is the 365 days of y1, each overlapping
    the next by length - step days."""
    first, step = sq.start_of(365), (365 - length) // (n - 1)
    out = []
    for i in range(n):
        s = first + dt.timedelta(days=i * step)
        e = min(s + dt.timedelta(days=length - 1), sq.END) if i < n - 1 else sq.END
        out.append(f"{s}..{e}")
    return out


def pg_x(p):
    """8 runners started at the same instant on overlapping intervals of a 365-day history,
    against one runner doing the union alone. Each date goes to one runner at a time; a
    date another runner still holds is skipped (exit 99), one it already finished may be
    computed again by a later runner. Checked every round: the same daily_revenue as the
    one runner's, every date recorded."""
    src = p.raw("y1")
    intervals = overlapping()
    union = f"{sq.start_of(365)}..{sq.END}"
    ref = {}
    counts = []

    def eight():
        p.pg.copy(src, "px_8")
        argvs = [p.sqlrun("px_8", "apply", "--interval", i, "--by", f"runner{n}") for n, i in enumerate(intervals)]

        def check(outs):
            got = p.revenue("px_8").split("\n")
            if got[0] != ref["rows"]:
                sys.exit(f"bench: 8 runners left {got[0]}, one runner {ref['rows']}")
            skipped = sum(1 for code, _ in outs if code == 99)
            dates = p.pg.sql("px_8", "SELECT count(DISTINCT ds) FROM run_partitions WHERE status = 'success'")
            if dates != "365":
                sys.exit(f"bench: 8 runners recorded {dates} dates, not 365")
            counts.append((int(got[1]), skipped))
            return int(got[1])
        return Parallel(argvs, ok=(0, 99)), None, check

    def one():
        p.pg.copy(src, "px_1")

        def check(err):
            expect_dates(365)(err)
            got = p.revenue("px_1").split("\n")
            ref.setdefault("rows", got[0])
            if got[0] != ref["rows"]:
                sys.exit("bench: one runner's numbers changed between rounds")
        return p.sqlrun("px_1", "apply", "--interval", union), None, check

    argv, _, check = one()      # untimed: the reference numbers
    check(run(argv)[1])
    say(f"\n   intervals: {' '.join(intervals)}")
    eights = "8 runners, overlapping intervals"
    compare("pg-x", f"PostgreSQL: 8 runners at once on overlapping intervals of y1 vs one runner on {union}",
            [(eights, eight), ("1 runner, the union", one)], server_cpu=p.pg.backends_cpu)
    ratio("pg-x", eights, "1 runner, the union")
    computed = [c for c, _ in counts]
    say(f"   8 runners: dates computed per round (365 distinct) min {min(computed)} median "
        f"{statistics.median(computed)} max {max(computed)}; runners exiting 99 (skipped dates) per round: "
        f"{[s for _, s in counts]}")
    RESULTS["pg-x"]["computed"] = counts
    p.pg.drop("px_8")
    p.pg.drop("px_1")


# ---------------------------------------------------------------- plans

def statements(sql):
    sql = "\n".join(line for line in sql.splitlines() if not line.strip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*\n", sql + "\n") if s.strip()
            and not re.match(r"(?i)^(BEGIN|COMMIT)\b", s.strip())]


def explain_all(p, db, statements, begin="BEGIN ISOLATION LEVEL REPEATABLE READ", setup=()):
    """EXPLAIN (ANALYZE, BUFFERS) of each statement, in order, in one transaction that is
    rolled back (a later statement sees what an earlier one did, as in the date)."""
    argv = p.pg.psql_argv(db, "-A", "-t")
    for s in [begin, *setup]:
        argv += ["-c", s]
    for s in statements:
        argv += ["-c", "\\echo @@@", "-c", "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + s]
    argv += ["-c", "ROLLBACK"]
    out = subprocess.run(argv, stdout=subprocess.PIPE, check=True).stdout.decode()
    return [x.strip() for x in out.split("@@@\n")[1:]]


MODEL = ("SELECT $1 AS ds, coalesce(sum(o.amount), 0) AS revenue, count(*) AS order_count "
         "FROM orders_latest AS o WHERE o.order_date = $1")
# Two rewrites of orders_latest, the date filter pushed in by hand: per-order probes by id
# whatever the size of the table (see BENCHMARKS.md, "Query plans on PostgreSQL").
REWRITES = {
    "NOT EXISTS (... OFFSET 0): a subplan, not an anti-join (PostgreSQL only)":
        "SELECT $1, coalesce(sum(o.amount), 0), count(*) FROM orders AS o WHERE o.order_date = $1 "
        "AND NOT EXISTS (SELECT 1 FROM orders AS newer WHERE newer.order_id = o.order_id "
        "AND (newer.created_at > o.created_at OR (newer.created_at = o.created_at "
        "AND newer.rowid > o.rowid)) OFFSET 0)",
    "rowid = (SELECT the latest rowid of the order ... LIMIT 1) (both backends)":
        "SELECT $1, coalesce(sum(o.amount), 0), count(*) FROM orders AS o WHERE o.order_date = $1 "
        "AND o.rowid = (SELECT newer.rowid FROM orders AS newer WHERE newer.order_id = o.order_id "
        "ORDER BY newer.created_at DESC, newer.rowid DESC LIMIT 1)",
}


def generic_plan(p, db, sql, ds):
    """The plan a prepared statement (sqlrun binds $1) gets once PostgreSQL settles on a
    generic plan, which it may after five executions."""
    return p.pg.sql(db, "SET plan_cache_mode = force_generic_plan", f"PREPARE q(date) AS {sql}",
                    f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE q(DATE {lit(ds)})")


def pg_plans(p):
    """EXPLAIN (ANALYZE, BUFFERS) of a date's statements on y10c (3.65 million orders), as
    rendered (literals: custom plans); the model as sqlrun runs it (bound: the generic plan
    a prepared statement settles on) on 10 years and on 60 days of orders, with two
    rewrites of orders_latest; and the floor's plan on y1."""
    db = p.pg.copy(p.computed("y10"), "pp")
    ds = str(sq.END)
    day = subprocess.run(p.sqlrun(db, "render", "--date", ds), check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    say(f"\n== pg-plans: EXPLAIN (ANALYZE, BUFFERS) on y10c, date {ds} (one transaction, rolled back)")
    plans = []
    for s, plan in zip(statements(day), explain_all(p, db, statements(day))):
        first = re.sub(r"\s+", " ", s)[:110]
        say(f"\n-- {first}{'...' if len(s) > 110 else ''}\n{plan}")
        plans.append({"sql": s, "plan": plan})
    small = p.pg.copy(p.computed("d60"), "pp_small")
    for name, sql in [("the model over orders_latest", MODEL), *REWRITES.items()]:
        for where in (db, small):
            plan = generic_plan(p, where, sql, ds)
            say(f"\n-- generic plan, {'10 years' if where == db else '60 days'}: {name}\n{plan}")
            plans.append({"sql": f"generic on {where}: {sql}", "plan": plan})
    y1 = p.pg.copy(p.raw("y1"), "pp_floor")
    floor = FLOOR.format(start=lit(sq.start_of(365)), end=lit(sq.END))
    insert = [s for s in statements(floor) if s.startswith("INSERT")]
    plan = explain_all(p, y1, insert, begin="BEGIN")[0]
    say(f"\n-- the floor on y1 (365 dates in one statement)\n{plan}")
    plans.append({"sql": "floor: " + insert[0], "plan": plan})
    RESULTS["pg-plans"] = plans
    for copy in (db, small, y1):
        p.pg.drop(copy)


# ---------------------------------------------------------------- profile

def pg_profile(p):
    """Where the time goes on PostgreSQL: the server restarted with pg_stat_statements
    and auto_explain; each command once on a fresh copy: calls, planning and execution
    time per statement, against the command's wall time. What is neither is the
    client, the round trips and the commits' WAL flushes."""
    y1, big, small = p.raw("y1"), p.computed("y10"), p.computed("d14")
    sc = scripts(p, y1)
    items = [
        ("sqlrun apply, 365 dates of y1", y1, lambda db: p.sqlrun(db, "apply", *p.jobs_args(1), "--interval", sq.interval(365)), None),
        ("psql baseline, 365 dates of y1", y1, lambda db: p.pg.psql_argv(db, "-f", "-"), sc["all"]),
        ("sqlrun regular run on d14c (1 date: the fixed cost)", small, lambda db: p.sqlrun(db, "apply", "--as-of", str(sq.AS_OF)), None),
        ("sqlrun status on y10c", big, lambda db: p.sqlrun(db, "status"), None),
    ]
    p.pg.restart(PROFILE_SETTINGS)
    log = os.path.join(PG_WORK, "server.log")
    try:
        say("\n== pg-profile: server time per statement (pg_stat_statements; plans over 50 ms by auto_explain)")
        out = {}
        for label, src, argv_of, stdin in items:
            db = p.pg.copy(src, "pf")
            p.pg.sql(db, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements", "SELECT pg_stat_statements_reset()")
            mark = os.path.getsize(log)
            wall, _ = run(argv_of(db), stdin=stdin)
            out[label] = statement_times(p, db, label, wall)
            with open(log, errors="replace") as f:
                f.seek(mark)
                slow = [x for x in f.read().split("LOG:  duration: ")[1:] if "pg_stat_statements" not in x]
            for x in slow:
                say("   auto_explain: duration: " + x.rstrip().replace("\n", "\n   "))
            out[label]["slow_plans"] = slow
            p.pg.drop(db)
        RESULTS["pg-profile"] = out
    finally:
        p.pg.restart([])


def statement_times(p, db, label, wall):
    rows = p.pg.sql(db, "SELECT calls, round(total_plan_time::numeric, 1), round(total_exec_time::numeric, 1), "
                        "round((total_exec_time / calls)::numeric, 3), "
                        "left(regexp_replace(query, '\\s+', ' ', 'g'), 80) "
                        "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
                        "WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%' "
                        "ORDER BY total_plan_time + total_exec_time DESC")
    lines = [r.split("|", 4) for r in rows.splitlines()]
    plan = sum(float(r[1]) for r in lines)
    exe = sum(float(r[2]) for r in lines)
    calls = sum(int(r[0]) for r in lines)
    say(f"\n   {label}: wall {wall * 1000:.0f} ms; {calls} statements; server: planning {plan:.0f} ms, "
        f"execution {exe:.0f} ms; the rest {wall * 1000 - plan - exe:.0f} ms")
    say(f"   {'calls':>6} {'plan ms':>8} {'exec ms':>8} {'mean ms':>8}  statement")
    for r in lines[:12]:
        say(f"   {r[0]:>6} {r[1]:>8} {r[2]:>8} {r[3]:>8}  {r[4]}")
    return {"wall_ms": wall * 1000, "statements": calls, "plan_ms": plan, "exec_ms": exe, "top": lines[:20]}


SECTIONS = {"pg-e": pg_e, "pg-a": pg_a, "pg-s": pg_s, "pg-k": pg_k, "pg-h": pg_h, "pg-v": pg_v, "pg-jobs": pg_jobs, "pg-b": pg_b, "pg-c": pg_c,
            "pg-d": pg_d, "pg-x": pg_x, "pg-plans": pg_plans, "pg-profile": pg_profile, "pg-l": pg_l,
            "pg-lk": lookups.pg_lk}
# The datasets a section reads where it is not all of them (made before any clock starts).
NEEDS = {"pg-l": ("y1",), "pg-h": ("y1",), "pg-v": ("y1",), "pg-lk": ()}


def run_sections(b, todo):
    """Starts the cluster, runs the PostgreSQL sections asked for (in SECTIONS order),
    stops the cluster."""
    server = Server()
    server.start()
    try:
        p = PgBench(b, server)
        say(f"\nPostgreSQL {server.version()} (default settings, durable commits; socket {server.sock}); "
            f"apply --jobs {'available' if p.jobs else 'not in this binary: --jobs sections skipped'}")
        for name in sorted(set().union(*(NEEDS.get(s, RAW) for s in todo if s in SECTIONS))):
            p.raw(name)
        for s, fn in SECTIONS.items():
            if s in todo:
                fn(p)
    finally:
        server.stop()
