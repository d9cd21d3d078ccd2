"""Lookups (issue 35): what tracking a lookup table costs, on SQLite (section `lk`) and on
PostgreSQL (`pg-lk`). Run them through bench/run.sh: `bench/run.sh lk pg-lk`.

The pipeline is the one the issue's example builds: `sqlrun new`, orders with a
customer_id column, the lookup sources/customers.sql (key customer_id, latest by
updated_at) and the model segment_revenue, which reaches customers `via
orders.customer_id`. The data: y1's orders (365 days x 1,000, 383,486 rows), each given one
of 10,000 customers (c00000..c09999, by its row number), and the 10,000 customers, every
date computed. A change of a customer notes, under customers, the dates of the current
orders holding its key (about 38 orders each).

Two questions, side by side on fresh copies:

1. A loader's cost: inserting into customers with its triggers against the same with the
   triggers dropped, beside the same for orders (the issue: a lookup costs a loader at
   most what orders' tracking costs). One-row transactions on both backends; one
   transaction (SQLite) and COPY (PostgreSQL) of 10,000 rows.
2. Finding the dates of 1,000 changed customers: one UPDATE of 1,000 customers, and one
   INSERT of 1,000 new versions; the statement's own time (sqlite3 `.timer`, psql
   `\\timing`) with tracking, against the same statement with the triggers dropped.
   Target: under 100 ms on both.
"""

import datetime as dt
import hashlib
import os
import re
import shutil
import subprocess
import sys

import bench as sq
from harness import RESULTS, compare, ratio, run, say

WORK = os.path.join(sq.WORK, "lookups")
CUSTOMERS = 10_000
CHANGED = 1_000
ONE_ROWS = int(os.environ.get("BENCH_LK_ONE_ROWS", "200"))
BULK = 10_000

# The declaration, with the index a `_latest` view probes by (key, latest_by), as
# sources/orders.sql has one: without it each date of segment_revenue scans customers once
# per order (about 0.5 s a date here instead of milliseconds).
CUSTOMERS_SQL = """-- name: customers
-- version: 1
-- key: customer_id
-- latest_by: updated_at
CREATE TABLE customers (customer_id TEXT NOT NULL, segment TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL);
CREATE INDEX customers_by_id ON customers (customer_id, updated_at);
"""

SEGMENT_REVENUE_SQL = """-- name: segment_revenue
-- version: 1
-- key: ds, segment
-- values: revenue, order_count
-- sources: orders, customers(via orders.customer_id)
-- create: CREATE TABLE segment_revenue (ds DATE NOT NULL, segment TEXT NOT NULL,
--     revenue BIGINT NOT NULL, order_count BIGINT NOT NULL, PRIMARY KEY (ds, segment))
SELECT {{ ds }} AS ds, coalesce(c.segment, 'unknown') AS segment,
       sum(o.amount) AS revenue, count(*) AS order_count
FROM orders_latest AS o
LEFT JOIN customers_latest AS c ON c.customer_id = o.customer_id
WHERE o.order_date = {{ ds }}
GROUP BY coalesce(c.segment, 'unknown')
"""

# What the cached databases were made from (bench/work/lk_*.db, pk_* on PostgreSQL).
STAMP = "lookups-" + hashlib.sha256((CUSTOMERS_SQL + SEGMENT_REVENUE_SQL).encode()).hexdigest()[:12]

SEGMENTS = ("gold", "silver", "bronze")
# The changed customers: 1,000 of the 10,000 (every tenth), each with about 38 orders.
CHANGED_WHERE = "substr(customer_id, 6, 1) = '0'"


def templates(b):
    """The issue's shop: `sqlrun new`, orders.customer_id, customers, segment_revenue."""
    folder = os.path.join(WORK, "tpl")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(WORK, exist_ok=True)
    subprocess.run([b.bin, "new", folder], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    orders = os.path.join(folder, "sources", "orders.sql")
    with open(orders) as f:
        text = f.read()
    amount = "    amount      BIGINT NOT NULL,\n"
    if amount not in text:
        sys.exit("bench: sources/orders.sql of `sqlrun new` has no amount line to add customer_id after")
    with open(orders, "w") as f:
        f.write(text.replace(amount, amount + "    customer_id TEXT,\n", 1))
    with open(os.path.join(folder, "sources", "customers.sql"), "w") as f:
        f.write(CUSTOMERS_SQL)
    with open(os.path.join(folder, "models", "segment_revenue.sql"), "w") as f:
        f.write(SEGMENT_REVENUE_SQL)
    return folder


def customer_of(rowid_expr):
    """The customer of an order: by its row number, spread over the 10,000."""
    return f"printf('c%05d', ({rowid_expr} * 7919) % {CUSTOMERS})"


def customers_select():
    return ("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < "
            f"{CUSTOMERS - 1}) SELECT printf('c%05d', i), "
            f"CASE i % 3 WHEN 0 THEN 'gold' WHEN 1 THEN 'silver' ELSE 'bronze' END, "
            "'2025-01-01 00:00:00' FROM n")


def loader_files():
    """The loads, the same rows on both backends: one-row INSERTs and bulk rows (CSV)."""
    files = {}
    for table in ("customers", "orders"):
        path = os.path.join(WORK, f"one_rows_{table}.sql")
        with open(path, "w") as f:
            for i in range(ONE_ROWS):
                c = f"c{(i * 37) % CUSTOMERS:05d}"
                if table == "customers":
                    f.write(f"INSERT INTO customers (customer_id, segment, updated_at) VALUES "
                            f"('{c}', '{SEGMENTS[i % 3]}', '2026-01-01 00:00:{i % 60:02d}');\n")
                else:
                    ds = sq.start_of(365) + dt.timedelta(days=i % 365)
                    f.write(f"INSERT INTO orders (order_id, order_date, amount, customer_id, created_at) "
                            f"VALUES ('late-{i}', '{ds}', {100 + i}, '{c}', '{ds} 12:00:00');\n")
        files[("one", table)] = path
        csv = os.path.join(WORK, f"bulk_{table}.csv")
        with open(csv, "w") as f:
            for i in range(BULK):
                c = f"c{i % CUSTOMERS:05d}"
                if table == "customers":
                    f.write(f"{c},{SEGMENTS[(i + 1) % 3]},2026-01-01 00:00:00\n")
                else:
                    ds = sq.start_of(365) + dt.timedelta(days=i % 365)
                    f.write(f"bulk-{i},{ds},{100 + i},c{(i * 7) % CUSTOMERS:05d},{ds} 13:00:00\n")
        files[("bulk", table)] = csv
        # The same rows as one INSERT in one transaction, for the sqlite3 CLI.
        script = os.path.join(WORK, f"bulk_{table}.sql")
        with open(csv) as rows, open(script, "w") as f:
            values = ",\n".join("(" + ", ".join(sq.sql_text(v) for v in line.rstrip("\n").split(",")) + ")"
                                 for line in rows)
            f.write(f"BEGIN;\nINSERT INTO {table} ({COLUMNS[table]}) VALUES\n{values};\nCOMMIT;\n")
        files[("bulk-sql", table)] = script
    return files


COLUMNS = {"customers": "customer_id, segment, updated_at",
           "orders": "order_id, order_date, amount, customer_id, created_at"}

CHANGES = {
    "update": f"UPDATE customers SET segment = 'moved' WHERE {CHANGED_WHERE};",
    "versions": ("INSERT INTO customers (customer_id, segment, updated_at) "
                 f"SELECT customer_id, 'moved', '2026-06-01 00:00:00' FROM customers WHERE {CHANGED_WHERE};"),
}


# ---------------------------------------------------------------- SQLite

def sqlite_base(b, tpl):
    """lk_base.db: the shop, y1's orders with customers, every date computed (cached)."""
    path = b.db("lk_base")
    if b.cached("lk_base", STAMP):
        return path
    src = b.generate("y1")
    sq.remove_db(path)
    say(f"  preparing lk_base: the shop pipeline, y1's orders with {CUSTOMERS:,} customers, 365 dates computed")
    run([b.bin, "--db", path, "--templates", tpl, "init"])
    script = os.path.join(WORK, "fill.sql")
    with open(script, "w") as f:
        f.write(f"ATTACH {sq.sql_text(src)} AS src;\nBEGIN;\n"
                f"INSERT INTO customers (customer_id, segment, updated_at) {customers_select()};\n"
                "INSERT INTO orders (order_id, order_date, amount, customer_id, created_at) "
                f"SELECT order_id, order_date, amount, {customer_of('rowid')}, created_at "
                "FROM src.orders ORDER BY rowid;\nCOMMIT;\nDETACH src;\nANALYZE;\n")
    run([sq.SQLITE, "-bail", path], stdin=script)
    run([b.bin, "--db", path, "--templates", tpl, "apply", "--interval", sq.interval(365)])
    sq.checkpoint(path)
    b.stamp("lk_base", STAMP)
    return path


def sqlite_untracked(b, base, table):
    """A copy of the base with `table`'s sqlrun triggers dropped (cached)."""
    name = f"lk_plain_{table}"
    path = b.db(name)
    if b.cached(name, STAMP):
        return path
    sq.fresh_copy(base, path)
    names = subprocess.run([sq.SQLITE, path, "SELECT name FROM sqlite_schema WHERE type = 'trigger' "
                            f"AND tbl_name = '{table}' AND name LIKE 'sqlrun_%'"],
                           stdout=subprocess.PIPE, check=True).stdout.decode().split()
    if not names:
        sys.exit(f"bench: no sqlrun triggers on {table} in {base}")
    drop = "".join(f'DROP TRIGGER "{n}";\n' for n in names)
    subprocess.run([sq.SQLITE, "-bail", path, drop], check=True)
    sq.checkpoint(path)
    b.stamp(name, STAMP)
    return path


def shell(argv, stdin):
    """argv with its stdout sent to stderr, where a case's check reads it."""
    return ["sh", "-c", '"$@" 1>&2', "sh", *argv], stdin


TIMER = re.compile(r"Run Time: real ([0-9.]+)")


def timer_of(nth):
    """A check that returns the nth `.timer` figure (ms) of a sqlite3 script."""
    def check(err):
        times = [float(x) * 1000 for x in TIMER.findall(err)]
        if len(times) <= nth:
            sys.exit(f"bench: no .timer line {nth} in:\n{err[-2000:]}")
        return times[nth]
    return check


def medians_of_extra(key):
    out = {}
    for label, s in RESULTS[key]["cases"].items():
        extra = sorted(s.get("extra", []))
        if extra:
            out[label] = extra[len(extra) // 2]
    return out


def workload_lk(b):
    """Lookups on SQLite: a loader's cost with customers' and orders' tracking, and the
    statement that finds the dates of 1,000 changed customers."""
    tpl = templates(b)
    base = sqlite_base(b, tpl)
    plain = {t: sqlite_untracked(b, base, t) for t in ("customers", "orders")}
    files = loader_files()
    noted = f"SELECT count(*) FROM source_changes WHERE source = 'customers'"
    check_base = subprocess.run([sq.SQLITE, base, noted], stdout=subprocess.PIPE,
                                check=True).stdout.decode().strip()
    if check_base != "0":
        sys.exit(f"bench: lk_base has {check_base} customers notes before any change")

    def load_case(kind, table, tracked):
        def prepare():
            src = base if tracked else plain[table]
            db = sq.fresh_copy(src, os.path.join(sq.WORK, f"lk_{kind}.db"))
            if kind == "one":
                return [sq.SQLITE, "-bail", db], files[("one", table)], None
            return [sq.SQLITE, "-bail", db], files[("bulk-sql", table)], None
        return prepare

    labels = {}
    for kind, what in (("one", f"{ONE_ROWS} one-row transactions"), ("bulk", f"{BULK:,} rows, one transaction")):
        cases = []
        for table in ("customers", "orders"):
            for tracked in (True, False):
                label = f"{what}: {table}, {'tracked' if tracked else 'triggers dropped'}"
                labels[(kind, table, tracked)] = label
                cases.append((label, load_case(kind, table, tracked)))
        key = f"lk-{kind}"
        compare(key, f"SQLite: a loader's {what} into customers and into orders, tracked and not", cases)
        for table in ("customers", "orders"):
            ratio(key, labels[(kind, table, True)], labels[(kind, table, False)])

    def change_case(change, tracked):
        def prepare():
            src = base if tracked else plain["customers"]
            db = sq.fresh_copy(src, os.path.join(sq.WORK, "lk_change.db"))
            script = os.path.join(WORK, f"change_{change}.sql")
            with open(script, "w") as f:
                f.write(f".timer on\nBEGIN;\n{CHANGES[change]}\nCOMMIT;\n.timer off\n{noted};\n")
            argv, stdin = shell([sq.SQLITE, "-bail", db], script)
            timed = timer_of(1)

            def check(err):
                ms = timed(err)
                dates = err.strip().splitlines()[-1]
                want = "365" if tracked else "0"
                if dates != want:
                    sys.exit(f"bench: {change} noted {dates} customers dates, not {want}")
                return ms
            return argv, stdin, check
        return prepare

    for change, what in (("update", f"one UPDATE of {CHANGED:,} customers"),
                         ("versions", f"one INSERT of {CHANGED:,} new versions")):
        t, p = f"{what}, tracked", f"{what}, triggers dropped"
        key = f"lk-{change}"
        compare(key, f"SQLite: {what} (of {CUSTOMERS:,}; about 38 current orders each) over 365 x 1,000",
                [(t, change_case(change, True)), (p, change_case(change, False))])
        stmt = medians_of_extra(key)
        RESULTS[key]["statement_ms"] = stmt
        say(f"   the statement (sqlite3 .timer), median: tracked {stmt[t]:.1f} ms, "
            f"triggers dropped {stmt[p]:.1f} ms; target tracked < 100 ms: "
            f"{'PASS' if stmt[t] < 100 else 'MISS'}")
    for name in ("lk_one.db", "lk_bulk.db", "lk_change.db"):
        sq.remove_db(os.path.join(sq.WORK, name))


# ---------------------------------------------------------------- PostgreSQL

PSQL_TIME = re.compile(r"^Time: ([0-9.]+) ms", re.M)


def pg_base(p, tpl):
    """pk_base: the same rows as lk_base (copied from it as CSV), every date computed."""
    name = "pk_base"
    if p.cached(name, STAMP):
        return name
    src = sqlite_base(p.b, tpl)
    say(f"  preparing {name} on PostgreSQL: the shop pipeline, lk_base's orders and customers, 365 dates computed")
    p.pg.drop(name)
    p.pg.sql("postgres", f'CREATE DATABASE "{name}"')
    run(p.sqlrun(name, "--templates", tpl, "init"))
    for table, order in (("customers", "rowid"), ("orders", "rowid")):
        dump = subprocess.Popen([sq.SQLITE, "-csv", src, f"SELECT {COLUMNS[table]} FROM {table} ORDER BY {order}"],
                                stdout=subprocess.PIPE)
        load = subprocess.run(p.pg.psql_argv(name, "-c", "SET TimeZone TO 'UTC'", "-c",
                                             f"\\copy {table} ({COLUMNS[table]}) FROM STDIN WITH (FORMAT csv)"),
                              stdin=dump.stdout)
        dump.stdout.close()
        if dump.wait() != 0 or load.returncode != 0:
            sys.exit(f"bench: copying {table} of {src} into PostgreSQL failed")
    p.pg.sql(name, "VACUUM ANALYZE")
    run(p.sqlrun(name, "--templates", tpl, "apply", "--interval", sq.interval(365)))
    q = ("SELECT count(*), sum(revenue), sum(order_count) FROM segment_revenue")
    a = subprocess.run([sq.SQLITE, src, q], stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    if a != p.pg.sql(name, q):
        sys.exit(f"bench: segment_revenue on PostgreSQL ({p.pg.sql(name, q)}) is not SQLite's ({a})")
    p.pg.sql(name, "VACUUM ANALYZE", "CHECKPOINT")
    p.stamp(name, STAMP)
    return name


def pg_untracked(p, base, table):
    name = f"pk_plain_{table}"
    if p.cached(name, STAMP):
        return name
    p.pg.copy(base, name)
    names = p.pg.sql(name, "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal "
                           f"AND tgrelid = '{table}'::regclass").split()
    if not names:
        sys.exit(f"bench: no sqlrun triggers on {table} in {base}")
    p.pg.sql(name, *[f'DROP TRIGGER "{n}" ON {table}' for n in names])
    p.pg.sql(name, "CHECKPOINT")
    p.stamp(name, STAMP)
    return name


def pg_lk(p):
    """Lookups on PostgreSQL: the same as `lk`, with COPY for the bulk load."""
    tpl = templates(p.b)
    base = pg_base(p, tpl)
    plain = {t: pg_untracked(p, base, t) for t in ("customers", "orders")}
    files = loader_files()
    noted = "SELECT count(*) FROM source_changes WHERE source = 'customers'"
    if p.pg.sql(base, noted) != "0":
        sys.exit("bench: pk_base has customers notes before any change")

    def load_case(kind, table, tracked):
        def prepare():
            db = p.pg.copy(base if tracked else plain[table], "pk_load")
            if kind == "one":
                return p.pg.psql_argv(db, "-f", "-"), files[("one", table)], None
            argv = p.pg.psql_argv(db, "-c", "SET TimeZone TO 'UTC'", "-c",
                                  f"\\copy {table} ({COLUMNS[table]}) FROM {sq.sql_text(files[('bulk', table)])} WITH (FORMAT csv)")
            return argv, None, None
        return prepare

    labels = {}
    for kind, what in (("one", f"{ONE_ROWS} one-row transactions"), ("bulk", f"COPY of {BULK:,} rows")):
        cases = []
        for table in ("customers", "orders"):
            for tracked in (True, False):
                label = f"{what}: {table}, {'tracked' if tracked else 'triggers dropped'}"
                labels[(kind, table, tracked)] = label
                cases.append((label, load_case(kind, table, tracked)))
        key = f"pg-lk-{kind}"
        compare(key, f"PostgreSQL: a loader's {what} into customers and into orders, tracked and not", cases,
                server_cpu=p.pg.backends_cpu)
        for table in ("customers", "orders"):
            ratio(key, labels[(kind, table, True)], labels[(kind, table, False)])

    def change_case(change, tracked):
        def prepare():
            db = p.pg.copy(base if tracked else plain["customers"], "pk_change")
            argv = p.pg.psql_argv(db, "-c", "\\timing on", "-c", "BEGIN", "-c", CHANGES[change],
                                  "-c", "COMMIT", "-c", "\\timing off", "-A", "-t", "-c", noted)
            argv, stdin = shell(argv, None)

            def check(err):
                times = [float(x) for x in PSQL_TIME.findall(err)]
                if len(times) < 3:
                    sys.exit(f"bench: no \\timing lines in:\n{err[-2000:]}")
                dates = err.strip().splitlines()[-1]
                want = "365" if tracked else "0"
                if dates != want:
                    sys.exit(f"bench: {change} noted {dates} customers dates, not {want}")
                return times[1]
            return argv, stdin, check
        return prepare

    for change, what in (("update", f"one UPDATE of {CHANGED:,} customers"),
                         ("versions", f"one INSERT of {CHANGED:,} new versions")):
        t, pl = f"{what}, tracked", f"{what}, triggers dropped"
        key = f"pg-lk-{change}"
        compare(key, f"PostgreSQL: {what} (of {CUSTOMERS:,}; about 38 current orders each) over 365 x 1,000",
                [(t, change_case(change, True)), (pl, change_case(change, False))],
                server_cpu=p.pg.backends_cpu)
        stmt = medians_of_extra(key)
        RESULTS[key]["statement_ms"] = stmt
        say(f"   the statement (psql \\timing), median: tracked {stmt[t]:.1f} ms, "
            f"triggers dropped {stmt[pl]:.1f} ms; target tracked < 100 ms: "
            f"{'PASS' if stmt[t] < 100 else 'MISS'}")
    for db in ("pk_load", "pk_change"):
        p.pg.drop(db)
