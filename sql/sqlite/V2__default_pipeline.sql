-- The default pipeline: orders in, daily revenue out.

CREATE TABLE orders (
    order_id    TEXT NOT NULL,
    order_date  TEXT NOT NULL,
    amount      INTEGER NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (datetime('now'))
);
-- A date's orders by their date, and the newest version of an order by its id:
-- both keep one date's work independent of how much history the table holds.
CREATE INDEX orders_by_date ON orders (order_date);
CREATE INDEX orders_by_id ON orders (order_id, created_at);

CREATE TABLE daily_revenue (
    ds           TEXT PRIMARY KEY,
    revenue      INTEGER NOT NULL,
    order_count  INTEGER NOT NULL,
    run_id       INTEGER NOT NULL
);

-- The same shape system/corrections_table.sql gives any model, with the
-- contract's column types.
CREATE TABLE daily_revenue_corrections (
    correction_id         INTEGER PRIMARY KEY,
    ds                    TEXT NOT NULL,
    revenue               INTEGER,
    order_count           INTEGER,
    previous_revenue      INTEGER,
    previous_order_count  INTEGER,
    removed               INTEGER NOT NULL DEFAULT 0,
    run_id                INTEGER NOT NULL,
    corrected_at          TEXT NOT NULL
);
CREATE INDEX daily_revenue_corrections_by_key ON daily_revenue_corrections (ds, correction_id);
