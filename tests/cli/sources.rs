//! Declared sources and lookups (issue 35), in the project `sqlrun new` makes: orders gets
//! a customer_id column before anything is loaded (the empty table is made again), a
//! lookup `sources/customers.sql` (key customer_id, latest by updated_at, no dates) and a
//! model `segment_revenue` that reaches it `via orders.customer_id`. Both sources come in
//! from CSV. A change of a customer (a new version, an UPDATE, a delete, a customer that
//! arrives after its orders) marks `changed` exactly the dates that hold current orders of
//! that customer, `apply --only changed` rebuilds exactly those, and every number equals
//! what this file computes on its own from the rows it loaded. Also: a model that reads the
//! lookup without declaring it is refused at its line; a new version of a declaration is
//! migrated once and recorded; the built-in orders is adopted as it was.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::*;

/// The lookup, as the example declares it.
const CUSTOMERS_V1: &str = "\
-- name: customers
-- version: 1
-- key: customer_id
-- latest_by: updated_at
-- create: CREATE TABLE customers (customer_id TEXT NOT NULL, segment TEXT NOT NULL,
--     updated_at TIMESTAMP NOT NULL)
";

/// Version 2: a column more, and the SQL that brings version 1's table there.
const CUSTOMERS_V2: &str = "\
-- name: customers
-- version: 2
-- key: customer_id
-- latest_by: updated_at
-- migrate: ALTER TABLE customers ADD COLUMN region TEXT
-- create: CREATE TABLE customers (customer_id TEXT NOT NULL, segment TEXT NOT NULL,
--     updated_at TIMESTAMP NOT NULL, region TEXT)
";

/// The model that reads orders and, through their customer_id, customers.
const SEGMENT_REVENUE: &str = "\
-- name: segment_revenue
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
";

/// A model that reads customers_latest (line 10) but declares only orders.
const PEEK: &str = "\
-- name: peek
-- version: 1
-- key: ds
-- values: n
-- sources: orders
-- create: CREATE TABLE peek (ds DATE NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT {{ ds }} AS ds, count(*) AS n
FROM orders_latest AS o
-- a comment that names customers_latest is no read of it
JOIN customers_latest AS c ON c.customer_id = o.customer_id
WHERE o.order_date = {{ ds }}
";

const DAYS: [&str; 6] = [
    "2026-03-01",
    "2026-03-02",
    "2026-03-03",
    "2026-03-04",
    "2026-03-05",
    "2026-03-06",
];
const ALL: &str = "2026-03-01..2026-03-06";

fn d(i: usize) -> String {
    DAYS[i - 1].to_string()
}

fn dates(list: &[usize]) -> BTreeSet<String> {
    list.iter().map(|i| d(*i)).collect()
}

/// One row of customers, as loaded (the arrival order is the vector's).
#[derive(Debug, Clone)]
struct Customer {
    id: String,
    segment: String,
    updated_at: String,
}

/// One row of orders, as loaded.
#[derive(Debug, Clone)]
struct Order {
    id: String,
    date: String,
    amount: i64,
    customer: Option<String>,
    created_at: String,
}

fn customer(id: &str, segment: &str, updated_at: &str) -> Customer {
    Customer {
        id: id.into(),
        segment: segment.into(),
        updated_at: updated_at.into(),
    }
}

fn order(id: &str, day: usize, amount: i64, customer: &str, created_at: &str) -> Order {
    Order {
        id: id.into(),
        date: d(day),
        amount,
        customer: (!customer.is_empty()).then(|| customer.to_string()),
        created_at: created_at.into(),
    }
}

/// The first customers: c2 has two versions (gold wins), c6 has no orders, c7 (whose
/// orders are loaded) is not a customer yet.
fn first_customers() -> Vec<Customer> {
    vec![
        customer("c1", "gold", "2026-01-01 00:00:00"),
        customer("c2", "silver", "2026-01-01 00:00:00"),
        customer("c2", "gold", "2026-01-02 00:00:00"),
        customer("c3", "bronze", "2026-01-01 00:00:00"),
        customer("c4", "gold", "2026-01-01 00:00:00"),
        customer("c5", "silver", "2026-01-01 00:00:00"),
        customer("c6", "bronze", "2026-01-01 00:00:00"),
    ]
}

/// Orders with versions: o12 moves from c3 to c1 (day 5 keeps no current c3 order), o16
/// moves from day 2 to day 6, o17 has a stale re-send on day 2 for c3 that loses; o6 has
/// no customer, o9 and o15 one that is not loaded yet.
fn first_orders() -> Vec<Order> {
    let t = "2026-03-10 08:00:00";
    vec![
        order("o1", 1, 100, "c1", t),
        order("o2", 1, 200, "c2", t),
        order("o3", 1, 300, "c3", t),
        order("o4", 2, 400, "c1", t),
        order("o5", 2, -50, "c4", t),
        order("o6", 2, 600, "", t),
        order("o7", 3, 700, "c3", t),
        order("o8", 3, 800, "c5", t),
        order("o9", 3, 900, "c7", t),
        order("o10", 4, 1000, "c2", t),
        order("o11", 4, 1100, "c4", t),
        order("o12", 5, 1200, "c3", t),
        order("o13", 5, 1300, "c5", t),
        order("o14", 6, 1400, "c1", t),
        order("o15", 6, 1500, "c7", t),
        order("o16", 2, 1600, "c3", t),
        order("o17", 4, 1700, "c5", t),
        // later versions
        order("o12", 5, 1250, "c1", "2026-03-11 08:00:00"),
        order("o16", 6, 1650, "c3", "2026-03-11 08:00:00"),
        // a stale re-send: older created_at, it loses
        order("o17", 2, 9999, "c3", "2026-03-09 08:00:00"),
    ]
}

/// The winning row per key: the greatest `order_by`, ties to the row that came last.
fn latest<T>(
    rows: &[T],
    key: impl Fn(&T) -> &str,
    order_by: impl Fn(&T) -> &str,
) -> BTreeMap<String, &T> {
    let mut win: BTreeMap<String, &T> = BTreeMap::new();
    for r in rows {
        match win.get(key(r)) {
            Some(w) if order_by(r) < order_by(w) => {}
            _ => {
                win.insert(key(r).to_string(), r);
            }
        }
    }
    win
}

/// segment_revenue as it should be, computed here: (ds, segment, revenue, order_count),
/// sorted.
fn expected(orders: &[Order], customers: &[Customer]) -> Vec<Vec<String>> {
    let current = latest(customers, |c| &c.id, |c| &c.updated_at);
    let mut sums: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
    for o in latest(orders, |o| &o.id, |o| &o.created_at).values() {
        let segment = o
            .customer
            .as_ref()
            .and_then(|c| current.get(c))
            .map_or("unknown".to_string(), |c| c.segment.clone());
        let e = sums.entry((o.date.clone(), segment)).or_default();
        e.0 += o.amount;
        e.1 += 1;
    }
    sums.into_iter()
        .map(|((ds, seg), (rev, n))| vec![ds, seg, rev.to_string(), n.to_string()])
        .collect()
}

/// The dates of the current orders of a customer, computed here.
fn dates_of(orders: &[Order], id: &str) -> BTreeSet<String> {
    latest(orders, |o| &o.id, |o| &o.created_at)
        .values()
        .filter(|o| o.customer.as_deref() == Some(id))
        .map(|o| o.date.clone())
        .collect()
}

fn customers_csv(rows: &[Customer]) -> String {
    let mut csv = "customer_id,segment,updated_at\n".to_string();
    for c in rows {
        csv += &format!("{},{},{}\n", c.id, c.segment, c.updated_at);
    }
    csv
}

fn orders_csv(rows: &[Order]) -> String {
    let mut csv = "order_id,order_date,amount,customer_id,created_at\n".to_string();
    for o in rows {
        csv += &format!(
            "{},{},{},{},{}\n",
            o.id,
            o.date,
            o.amount,
            o.customer.as_deref().unwrap_or(""),
            o.created_at
        );
    }
    csv
}

/// A `sqlrun new shop` project in the sandbox's folder, with the lookup and the model
/// added; every command runs with `--templates shop` on the sandbox's database.
struct Shop {
    sb: Sandbox,
}

impl Shop {
    /// The project, initialised, nothing loaded.
    fn new() -> Shop {
        let sb = Sandbox::empty();
        let made = Run::from(sb.cmd(&["new", "shop"]).output().unwrap());
        assert_eq!(made.code, 0, "sqlrun new shop: {made:?}");
        let shop = Shop { sb };
        let orders = shop.read("sources/orders.sql");
        let amount = "    amount      BIGINT NOT NULL,\n";
        assert!(
            orders.contains(amount),
            "orders.sql as `new` writes it:\n{orders}"
        );
        shop.write(
            "sources/orders.sql",
            &orders.replacen(amount, &format!("{amount}    customer_id TEXT,\n"), 1),
        );
        shop.write("sources/customers.sql", CUSTOMERS_V1);
        shop.write("models/segment_revenue.sql", SEGMENT_REVENUE);
        shop.ok(&["init"]);
        shop
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.sb.path().join("shop").join(rel)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).unwrap();
    }

    fn expect(&self, code: i32, args: &[&str]) -> Run {
        let mut all = vec!["--templates", "shop"];
        all.extend_from_slice(args);
        self.sb.expect(code, &all)
    }

    fn ok(&self, args: &[&str]) -> Run {
        self.expect(0, args)
    }

    /// `sqlrun load TABLE FILE` of `csv`, wanting `code`.
    fn load(&self, code: i32, table: &str, name: &str, csv: &str) -> Run {
        let file = self.sb.path().join(name);
        std::fs::write(&file, csv).unwrap();
        self.expect(code, &["load", table, file.to_str().unwrap()])
    }

    /// Both sources loaded from CSV and every date computed.
    fn loaded(orders: &[Order], customers: &[Customer]) -> Shop {
        let shop = Shop::new();
        shop.load(0, "customers", "c.csv", &customers_csv(customers));
        shop.load(0, "orders", "o.csv", &orders_csv(orders));
        shop.ok(&["apply", "--interval", ALL]);
        shop.assert_numbers(orders, customers);
        shop
    }

    fn segment_revenue(&self) -> Vec<Vec<String>> {
        let mut rows = self
            .sb
            .rows("SELECT ds, segment, revenue, order_count FROM segment_revenue");
        rows.sort();
        rows
    }

    fn assert_numbers(&self, orders: &[Order], customers: &[Customer]) {
        assert_eq!(
            self.segment_revenue(),
            expected(orders, customers),
            "segment_revenue against the numbers computed from the loaded rows"
        );
    }

    /// The dates noted changed under `source`.
    fn noted(&self, source: &str) -> BTreeSet<String> {
        self.sb
            .rows(&format!(
                "SELECT ds FROM source_changes WHERE source = '{source}'"
            ))
            .into_iter()
            .map(|r| r[0].clone())
            .collect()
    }

    /// The dates `sqlrun status --json` shows `changed`.
    fn status_changed(&self) -> BTreeSet<String> {
        let run = self.ok(&["--json", "status", "--interval", ALL]);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("status JSON");
        doc["dates"]
            .as_array()
            .expect("dates")
            .iter()
            .filter(|d| d["changed"] == serde_json::json!(true))
            .map(|d| d["ds"].as_str().unwrap().to_string())
            .collect()
    }

    /// Asserts that exactly `want` is noted and shown changed, then rebuilds the changed
    /// dates and asserts that the run wrote exactly those, and nothing is noted after.
    fn rebuild_exactly(&self, want: &BTreeSet<String>, why: &str) {
        assert_eq!(&self.noted("customers"), want, "{why}: the notes");
        assert!(self.noted("orders").is_empty(), "{why}: orders unchanged");
        assert_eq!(&self.status_changed(), want, "{why}: status");
        let before = self.sb.last_run_id();
        self.ok(&["apply", "--only", "changed", "--interval", ALL]);
        let run = self.sb.last_run_id();
        assert_eq!(run, before + 1, "{why}: one run");
        let written: BTreeSet<String> = self
            .sb
            .rows(&format!(
                "SELECT ds FROM run_partitions WHERE run_id = {run} AND status = 'success'"
            ))
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert_eq!(&written, want, "{why}: the dates the run rebuilt");
        assert_eq!(
            self.sb.count(&format!(
                "SELECT count(*) FROM run_partitions WHERE run_id = {run}"
            )),
            want.len() as i64,
            "{why}: no other run_partitions row"
        );
        let written_rows: BTreeSet<String> = self
            .sb
            .rows(&format!(
                "SELECT DISTINCT ds FROM segment_revenue WHERE run_id = {run}"
            ))
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert_eq!(
            &written_rows, want,
            "{why}: segment_revenue rows of the run"
        );
        assert!(self.noted("customers").is_empty(), "{why}: notes taken");
        assert!(
            self.status_changed().is_empty(),
            "{why}: nothing changed now"
        );
    }

    /// The columns of a table, in order.
    fn columns(&self, table: &str) -> Vec<String> {
        let sql = match BACKEND {
            Backend::Sqlite => {
                format!("SELECT name FROM pragma_table_info('{table}') ORDER BY cid")
            }
            Backend::Postgres => format!(
                "SELECT column_name FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = '{table}' \
                 ORDER BY ordinal_position"
            ),
        };
        self.sb
            .rows(&sql)
            .into_iter()
            .map(|r| r[0].clone())
            .filter(|c| c != "rowid")
            .collect()
    }

    fn declarations(&self) -> Vec<Vec<String>> {
        self.sb
            .rows("SELECT source, version, how FROM source_declarations ORDER BY source, version")
    }
}

fn row(fields: &[&str]) -> Vec<String> {
    fields.iter().map(|f| f.to_string()).collect()
}

/// Every row of the tables a refused command must not touch: the shared snapshot, and the
/// tables of this pipeline.
type State = (BTreeMap<String, Vec<Vec<String>>>, Vec<Vec<Vec<String>>>);

fn state(shop: &Shop) -> State {
    let own = [
        "SELECT * FROM customers ORDER BY customer_id, updated_at, segment",
        "SELECT source, version, checksum, how FROM source_declarations ORDER BY 1, 2",
        "SELECT * FROM segment_revenue ORDER BY ds, segment",
    ]
    .iter()
    .map(|sql| shop.sb.rows(sql))
    .collect();
    (snapshot(&shop.sb), own)
}

#[test]
fn both_sources_load_from_csv_and_a_wrong_header_loads_nothing() {
    let shop = Shop::new();
    assert_eq!(
        shop.declarations(),
        [
            row(&["customers", "1", "created"]),
            row(&["orders", "1", "remade"])
        ],
        "customers made, the empty orders made again with customer_id"
    );
    assert_eq!(
        shop.columns("orders"),
        [
            "order_id",
            "order_date",
            "amount",
            "customer_id",
            "created_at"
        ]
    );
    assert_eq!(
        shop.columns("customers"),
        ["customer_id", "segment", "updated_at"]
    );

    // Wrong headers first, on empty tables: each refused, naming the column.
    let empty = state(&shop);
    let bad = [
        (
            "customers",
            "customer_id,updated_at\nc1,2026-01-01 00:00:00\n",
            "segment",
        ),
        (
            "customers",
            "customer_id,segment,updated_at,region\nc1,gold,2026-01-01 00:00:00,eu\n",
            "region",
        ),
        (
            "orders",
            "order_id,order_date,customer_id\no1,2026-03-01,c1\n",
            "amount",
        ),
        (
            "orders",
            "order_id,order_date,amount,customer_id,colour\no1,2026-03-01,5,c1,red\n",
            "colour",
        ),
    ];
    for (table, csv, column) in bad {
        let run = shop.load(2, table, "bad.csv", csv);
        assert!(
            run.stderr.contains(column) && run.stderr.contains("bad.csv"),
            "the refusal names {column} and the file: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "nothing said loaded: {run:?}");
        assert_eq!(
            state(&shop),
            empty,
            "a refused load of {table} wrote nothing"
        );
    }

    // The right ones, each with its own columns.
    let (orders, customers) = (first_orders(), first_customers());
    let run = shop.load(0, "customers", "c.csv", &customers_csv(&customers));
    assert!(
        run.stdout.contains("loaded 7 rows into customers"),
        "{run:?}"
    );
    let run = shop.load(0, "orders", "o.csv", &orders_csv(&orders));
    assert!(run.stdout.contains("loaded 20 rows into orders"), "{run:?}");
    let mut got = shop
        .sb
        .rows("SELECT customer_id, segment, updated_at FROM customers");
    got.sort();
    let mut want: Vec<Vec<String>> = customers
        .iter()
        .map(|c| vec![c.id.clone(), c.segment.clone(), c.updated_at.clone()])
        .collect();
    want.sort();
    assert_eq!(got, want);
    let mut got = shop.sb.rows(
        "SELECT order_id, order_date, amount, coalesce(customer_id, ''), created_at FROM orders",
    );
    got.sort();
    let mut want: Vec<Vec<String>> = orders
        .iter()
        .map(|o| {
            vec![
                o.id.clone(),
                o.date.clone(),
                o.amount.to_string(),
                o.customer.clone().unwrap_or_default(),
                o.created_at.clone(),
            ]
        })
        .collect();
    want.sort();
    assert_eq!(got, want);

    // The latest views hold the rule: c2 is gold, o12 belongs to c1 on day 5.
    assert_eq!(
        shop.sb
            .rows("SELECT segment FROM customers_latest WHERE customer_id = 'c2'"),
        [["gold"]]
    );
    assert_eq!(
        shop.sb.rows(
            "SELECT order_date, amount, customer_id FROM orders_latest WHERE order_id = 'o12'"
        ),
        [row(&[&d(5), "1250", "c1"])]
    );
    assert_eq!(shop.sb.count("SELECT count(*) FROM orders_latest"), 17);

    shop.ok(&["apply", "--interval", ALL]);
    shop.assert_numbers(&orders, &customers);
    // daily_revenue reads the same orders.
    for (i, ds) in DAYS.iter().enumerate() {
        let (rev, n) = latest(&orders, |o| &o.id, |o| &o.created_at)
            .values()
            .filter(|o| o.date == *ds)
            .fold((0, 0), |(r, n), o| (r + o.amount, n + 1));
        assert_eq!(
            shop.sb.daily()[*ds],
            (rev, n),
            "daily_revenue of day {}",
            i + 1
        );
    }
}

#[test]
fn a_customers_new_segment_marks_exactly_the_dates_of_its_current_orders() {
    let orders = first_orders();
    let mut customers = first_customers();
    let shop = Shop::loaded(&orders, &customers);
    assert!(shop.noted("customers").is_empty() && shop.status_changed().is_empty());

    // A new version of c3 with a later updated_at, loaded from CSV. c3's current orders
    // are on days 1, 3 and 6; days 2 and 5 have only old versions of its orders.
    let c3 = dates_of(&orders, "c3");
    assert_eq!(c3, dates(&[1, 3, 6]));
    let newer = vec![customer("c3", "platinum", "2026-02-01 00:00:00")];
    let file = shop.sb.path().join("c3.csv");
    std::fs::write(&file, customers_csv(&newer)).unwrap();
    let run = shop.ok(&["--json", "load", "customers", file.to_str().unwrap()]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("load JSON");
    assert_eq!(
        doc,
        serde_json::json!({"table": "customers", "rows": 1,
                           "changed": ["2026-03-01", "2026-03-03", "2026-03-06"]}),
        "the load says which computed dates it changed"
    );
    customers.extend(newer);
    shop.rebuild_exactly(&c3, "a new version of c3");
    shop.assert_numbers(&orders, &customers);

    // An UPDATE of c4's segment in place.
    shop.sb
        .exec("UPDATE customers SET segment = 'silver' WHERE customer_id = 'c4'");
    customers
        .iter_mut()
        .filter(|c| c.id == "c4")
        .for_each(|c| c.segment = "silver".into());
    shop.rebuild_exactly(&dates_of(&orders, "c4"), "an UPDATE of c4");
    assert_eq!(dates_of(&orders, "c4"), dates(&[2, 4]));
    shop.assert_numbers(&orders, &customers);

    // An UPDATE that changes no value is no change.
    shop.sb
        .exec("UPDATE customers SET segment = segment WHERE customer_id IN ('c1', 'c5')");
    assert!(
        shop.noted("customers").is_empty(),
        "an update to the same values"
    );
    assert!(shop.status_changed().is_empty());

    // A tie on updated_at: the version that arrived last wins (c2's gold, then bronze).
    let tie = vec![customer("c2", "bronze", "2026-01-02 00:00:00")];
    shop.load(0, "customers", "c2.csv", &customers_csv(&tie));
    customers.extend(tie);
    shop.rebuild_exactly(&dates_of(&orders, "c2"), "a tie for c2");
    assert_eq!(dates_of(&orders, "c2"), dates(&[1, 4]));
    shop.assert_numbers(&orders, &customers);
    assert!(
        shop.segment_revenue()
            .iter()
            .any(|r| r[0] == d(4) && r[1] == "bronze" && r[2] == "1000"),
        "c2's order on day 4 counts as bronze: {:?}",
        shop.segment_revenue()
    );

    // An order moved to another customer is the orders' own change (its dates noted under
    // orders), and the customer's later change then follows the order.
    let mut orders = orders;
    let moved = order("o7", 3, 700, "c1", "2026-03-12 08:00:00");
    shop.load(
        0,
        "orders",
        "o7.csv",
        &orders_csv(std::slice::from_ref(&moved)),
    );
    orders.push(moved);
    assert_eq!(shop.noted("orders"), dates(&[3]));
    assert!(shop.noted("customers").is_empty());
    shop.ok(&["apply", "--only", "changed", "--interval", ALL]);
    shop.assert_numbers(&orders, &customers);
    assert_eq!(dates_of(&orders, "c3"), dates(&[1, 6]));
    shop.sb
        .exec("UPDATE customers SET segment = 'gold' WHERE customer_id = 'c3'");
    customers
        .iter_mut()
        .filter(|c| c.id == "c3")
        .for_each(|c| c.segment = "gold".into());
    shop.rebuild_exactly(&dates(&[1, 6]), "c3 after its day-3 order moved to c1");
    shop.assert_numbers(&orders, &customers);
}

#[test]
fn a_deleted_an_added_and_an_orderless_customer() {
    let orders = first_orders();
    let mut customers = first_customers();
    let shop = Shop::loaded(&orders, &customers);

    // Deleted: every version of c5. Its orders fall to 'unknown'.
    let c5 = dates_of(&orders, "c5");
    assert_eq!(c5, dates(&[3, 4, 5]));
    shop.sb
        .exec("DELETE FROM customers WHERE customer_id = 'c5'");
    customers.retain(|c| c.id != "c5");
    shop.rebuild_exactly(&c5, "c5 deleted");
    shop.assert_numbers(&orders, &customers);
    let unknown: Vec<Vec<String>> = shop
        .segment_revenue()
        .into_iter()
        .filter(|r| r[1] == "unknown")
        .collect();
    assert_eq!(
        unknown,
        [
            row(&[&d(2), "unknown", "600", "1"]),
            row(&[&d(3), "unknown", "1700", "2"]),
            row(&[&d(4), "unknown", "1700", "1"]),
            row(&[&d(5), "unknown", "1300", "1"]),
            row(&[&d(6), "unknown", "1500", "1"]),
        ],
        "o6 (no customer), c7's orders (not a customer yet) and c5's"
    );

    // Added after its orders: c7, whose orders are on days 3 and 6.
    let c7 = dates_of(&orders, "c7");
    assert_eq!(c7, dates(&[3, 6]));
    let added = vec![customer("c7", "gold", "2026-01-03 00:00:00")];
    shop.load(0, "customers", "c7.csv", &customers_csv(&added));
    customers.extend(added);
    shop.rebuild_exactly(&c7, "c7 added");
    shop.assert_numbers(&orders, &customers);

    // A customer with no orders, added, changed and deleted: no date changes.
    let lonely = vec![customer("c8", "gold", "2026-01-03 00:00:00")];
    shop.load(0, "customers", "c8.csv", &customers_csv(&lonely));
    shop.sb
        .exec("UPDATE customers SET segment = 'silver' WHERE customer_id IN ('c6', 'c8')");
    shop.sb
        .exec("DELETE FROM customers WHERE customer_id = 'c6'");
    assert!(shop.noted("customers").is_empty(), "no orders, no dates");
    assert!(shop.status_changed().is_empty());
    customers.retain(|c| c.id != "c6");
    customers.push(customer("c8", "silver", "2026-01-03 00:00:00"));
    shop.assert_numbers(&orders, &customers);

    // A change of key: c1's only version becomes c9 (no orders): c1's dates change.
    let c1 = dates_of(&orders, "c1");
    shop.sb
        .exec("UPDATE customers SET customer_id = 'c9' WHERE customer_id = 'c1'");
    customers
        .iter_mut()
        .filter(|c| c.id == "c1")
        .for_each(|c| c.id = "c9".into());
    shop.rebuild_exactly(&c1, "c1 renamed c9");
    shop.assert_numbers(&orders, &customers);
}

#[test]
fn a_model_that_reads_the_lookup_without_declaring_it_is_refused_at_its_line() {
    let orders = first_orders();
    let shop = Shop::loaded(&orders, &first_customers());
    let before = state(&shop);
    shop.write("models/peek.sql", PEEK);
    for args in [
        &["apply", "--interval", ALL][..],
        &["init"][..],
        &["status"][..],
    ] {
        let run = shop.expect(2, args);
        contains_all(
            &run.stderr,
            &["models/peek.sql:10", "customers_latest", "customers(via"],
        );
        assert!(
            !run.stderr.contains("peek.sql:9"),
            "the comment is no read: {}",
            run.stderr
        );
        assert_eq!(state(&shop), before, "`{}` wrote nothing", args.join(" "));
        assert!(!shop.sb.table_exists("peek"));
    }
    // Declared, it is taken.
    shop.write(
        "models/peek.sql",
        &PEEK.replace(
            "-- sources: orders\n",
            "-- sources: orders, customers(via orders.customer_id)\n",
        ),
    );
    shop.ok(&["apply", "--interval", ALL]);
    let mut got = shop.sb.rows("SELECT ds, n FROM peek");
    got.sort();
    let joined = latest(&orders, |o| &o.id, |o| &o.created_at)
        .values()
        .filter(|o| o.customer.as_deref().is_some_and(|c| c != "c7"))
        .fold(BTreeMap::<String, i64>::new(), |mut m, o| {
            *m.entry(o.date.clone()).or_default() += 1;
            m
        });
    let want: Vec<Vec<String>> = joined
        .into_iter()
        .map(|(ds, n)| vec![ds, n.to_string()])
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_new_version_of_a_declaration_is_migrated_once_and_an_edited_one_is_refused() {
    let orders = first_orders();
    let mut customers = first_customers();
    let shop = Shop::loaded(&orders, &customers);

    // Version 2 with its migration: applied by the next command, once.
    shop.write("sources/customers.sql", CUSTOMERS_V2);
    shop.ok(&["init"]);
    assert_eq!(
        shop.declarations(),
        [
            row(&["customers", "1", "created"]),
            row(&["customers", "2", "migrated"]),
            row(&["orders", "1", "remade"]),
        ]
    );
    assert_eq!(
        shop.columns("customers"),
        ["customer_id", "segment", "updated_at", "region"]
    );
    assert_eq!(
        shop.sb.count("SELECT count(*) FROM customers"),
        customers.len() as i64,
        "the rows stay"
    );
    assert!(
        shop.noted("customers").is_empty(),
        "a migration changes no value"
    );
    // Right after the migrating command, before any other: a change of the new column
    // alone is a change of the row (a model may read it).
    shop.sb
        .exec("UPDATE customers SET region = 'eu' WHERE customer_id = 'c4'");
    assert_eq!(
        shop.noted("customers"),
        dates_of(&orders, "c4"),
        "an UPDATE of region only, right after the migration"
    );
    shop.ok(&["apply", "--only", "changed", "--interval", ALL]);
    shop.ok(&["init"]);
    shop.ok(&["status"]);
    assert_eq!(
        shop.sb
            .count("SELECT count(*) FROM source_declarations WHERE source = 'customers'"),
        2,
        "migrated once"
    );
    // The new column loads, and the view has it.
    let with_region = "customer_id,segment,updated_at,region\nc1,gold,2026-02-02 00:00:00,asia\n";
    shop.load(0, "customers", "r.csv", with_region);
    customers.push(customer("c1", "gold", "2026-02-02 00:00:00"));
    assert_eq!(
        shop.sb
            .rows("SELECT region FROM customers_latest WHERE customer_id IN ('c1', 'c4') ORDER BY customer_id"),
        [["asia"], ["eu"]]
    );
    shop.rebuild_exactly(&dates_of(&orders, "c1"), "c1's new version, with a region");
    shop.assert_numbers(&orders, &customers);

    // The same version with other text: refused, nothing written.
    let before = state(&shop);
    let edited = CUSTOMERS_V2.replace("TEXT)\n", "TEXT)\n-- where the customer lives\n");
    assert_ne!(edited, CUSTOMERS_V2);
    shop.write("sources/customers.sql", &edited);
    let run = shop.expect(2, &["apply", "--interval", ALL]);
    contains_all(
        &run.stderr,
        &["sources/customers.sql", "changed", "version", "3"],
    );
    assert_eq!(state(&shop), before, "an edited version wrote nothing");

    // Version 3 without `-- migrate:`: refused, nothing written.
    let v3 = CUSTOMERS_V2
        .replace("-- version: 2", "-- version: 3")
        .replace(
            "-- migrate: ALTER TABLE customers ADD COLUMN region TEXT\n",
            "",
        )
        .replace("region TEXT)", "region TEXT, tier TEXT)");
    shop.write("sources/customers.sql", &v3);
    let run = shop.expect(2, &["init"]);
    contains_all(&run.stderr, &["sources/customers.sql", "-- migrate:"]);
    assert_eq!(
        state(&shop),
        before,
        "a version 3 without migrate wrote nothing"
    );
    assert_eq!(
        shop.columns("customers"),
        ["customer_id", "segment", "updated_at", "region"]
    );

    // Version 4 whose migration starts from 3: refused, nothing written.
    let v4 = CUSTOMERS_V2
        .replace("-- version: 2", "-- version: 4")
        .replace("ADD COLUMN region TEXT\n", "ADD COLUMN tier TEXT\n")
        .replace("region TEXT)", "region TEXT, tier TEXT)");
    shop.write("sources/customers.sql", &v4);
    let run = shop.expect(2, &["status"]);
    contains_all(&run.stderr, &["sources/customers.sql", "version 3"]);
    assert_eq!(
        state(&shop),
        before,
        "a migration from the wrong version wrote nothing"
    );

    // Back to version 2 as it was: everything works as before.
    shop.write("sources/customers.sql", CUSTOMERS_V2);
    shop.ok(&["apply", "--interval", ALL]);
    shop.assert_numbers(&orders, &customers);
}

#[test]
fn the_built_in_orders_is_adopted_and_its_latest_view_keeps_the_rule() {
    let sb = Sandbox::new();
    assert_eq!(
        sb.rows("SELECT source, version, how FROM source_declarations"),
        [["orders", "1", "adopted"]]
    );
    let data = Orders::new(35, "2026-02-01", 20, true);
    sb.insert_orders(&data.rows);
    let mut got = sb.rows("SELECT order_id, order_date, amount, created_at FROM orders_latest");
    got.sort();
    let mut want: Vec<Vec<String>> = data
        .latest()
        .into_values()
        .map(|r| vec![r.order_id, r.order_date, r.amount.to_string(), r.created_at])
        .collect();
    want.sort();
    assert_eq!(
        got, want,
        "orders_latest: the greatest created_at, ties to the last row"
    );
    sb.ok(&["apply", "--interval", &data.interval()]);
    assert_eq!(sb.daily(), data.expected());
    // Nothing declared again on the next commands.
    sb.ok(&["init"]);
    assert_eq!(
        sb.rows("SELECT source, version, how FROM source_declarations"),
        [["orders", "1", "adopted"]]
    );
}

/// A `sqlrun new shop` project as `new` writes it (no customer_id, no lookup), initialised.
fn bare_shop() -> Shop {
    let sb = Sandbox::empty();
    let made = Run::from(sb.cmd(&["new", "shop"]).output().unwrap());
    assert_eq!(made.code, 0, "sqlrun new shop: {made:?}");
    let shop = Shop { sb };
    shop.ok(&["init"]);
    shop
}

#[test]
fn a_dropped_source_table_comes_back_empty_and_every_date_built_from_it_shows_changed() {
    let shop = Shop::loaded(&first_orders(), &first_customers());
    let all = dates(&[1, 2, 3, 4, 5, 6]);
    assert!(shop.status_changed().is_empty(), "nothing changed yet");
    shop.sb.exec(match BACKEND {
        Backend::Sqlite => "DROP TABLE customers",
        Backend::Postgres => "DROP TABLE customers CASCADE",
    });
    // The next command makes it again from its declaration: empty, and the dates built
    // from its lost rows are changed (as when a source's triggers go missing).
    assert_eq!(shop.status_changed(), all, "every built date is changed");
    assert_eq!(shop.sb.count("SELECT count(*) FROM customers"), 0);
    assert_eq!(shop.noted("customers"), all);
    assert_eq!(
        shop.declarations(),
        vec![
            row(&["customers", "1", "created"]),
            row(&["orders", "1", "remade"])
        ],
        "no new declaration: the table is its version 1 again"
    );
}

#[test]
fn a_migration_and_the_lookup_that_needs_its_new_column_go_in_together() {
    let shop = bare_shop();
    let csv = "order_id,order_date,amount\no1,2026-03-01,100\no2,2026-03-02,200\n";
    shop.load(0, "orders", "o.csv", csv);
    assert_eq!(shop.declarations(), vec![row(&["orders", "1", "adopted"])]);
    // One change: orders version 2 adds customer_id by its migration, and the lookup and
    // the model that reaches it through that column arrive with it.
    let orders = shop.read("sources/orders.sql");
    let amount = "    amount      BIGINT NOT NULL,\n";
    let v2 = orders
        .replacen(
            "-- version: 1\n",
            "-- version: 2\n-- migrate: ALTER TABLE orders ADD COLUMN customer_id TEXT\n",
            1,
        )
        .replacen(amount, &format!("{amount}    customer_id TEXT,\n"), 1);
    shop.write("sources/orders.sql", &v2);
    shop.write("sources/customers.sql", CUSTOMERS_V1);
    shop.write("models/segment_revenue.sql", SEGMENT_REVENUE);
    shop.ok(&["apply", "--interval", "2026-03-01..2026-03-02"]);
    assert_eq!(
        shop.declarations(),
        vec![
            row(&["customers", "1", "created"]),
            row(&["orders", "1", "adopted"]),
            row(&["orders", "2", "migrated"]),
        ]
    );
    assert_eq!(shop.sb.count("SELECT count(*) FROM orders"), 2, "rows kept");
    // The new column is tracked at once: moving o1 to a customer changes its date.
    shop.load(
        0,
        "customers",
        "c.csv",
        "customer_id,segment,updated_at\nc1,retail,2026-01-01 00:00:00\n",
    );
    shop.sb
        .exec("UPDATE orders SET customer_id = 'c1' WHERE order_id = 'o1'");
    assert_eq!(shop.noted("orders"), dates(&[1]));
    shop.ok(&[
        "apply",
        "--only",
        "changed",
        "--interval",
        "2026-03-01..2026-03-02",
    ]);
    assert_eq!(
        shop.sb
            .rows("SELECT ds, segment, revenue FROM segment_revenue ORDER BY ds, segment"),
        vec![
            row(&["2026-03-01", "retail", "100"]),
            row(&["2026-03-02", "unknown", "200"]),
        ]
    );
}

#[test]
fn a_lookups_column_must_be_declared_in_its_facts_declaration_and_an_alias_is_no_read() {
    let shop = bare_shop();
    // The table has the column (added by hand), but the declaration does not: the
    // models read orders through orders_latest, which has the declared columns only.
    shop.sb
        .exec("ALTER TABLE orders ADD COLUMN customer_id TEXT");
    shop.write("sources/customers.sql", CUSTOMERS_V1);
    shop.write("models/segment_revenue.sql", SEGMENT_REVENUE);
    let before = snapshot(&shop.sb);
    let run = shop.expect(2, &["apply", "--interval", "2026-03-01"]);
    assert!(
        run.stderr.contains("segment_revenue.sql:5:")
            && run.stderr.contains("orders has no column customer_id"),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot(&shop.sb), before, "nothing written");
    // A column named like the lookup reads no table.
    std::fs::remove_file(shop.path("models/segment_revenue.sql")).unwrap();
    shop.write(
        "models/order_customers.sql",
        "-- name: order_customers\n-- version: 1\n-- key: ds\n-- values: customers\n\
         -- sources: orders\n-- create: CREATE TABLE order_customers (ds DATE NOT NULL PRIMARY KEY, customers BIGINT NOT NULL)\n\
         SELECT {{ ds }} AS ds, count(*) AS customers\nFROM orders_latest AS o\nWHERE o.order_date = {{ ds }}\n",
    );
    shop.ok(&["apply", "--interval", "2026-03-01"]);
    assert_eq!(
        shop.sb.rows("SELECT ds, customers FROM order_customers"),
        vec![row(&["2026-03-01", "0"])]
    );
}
