-- name: orders
-- version: 1
-- key: order_id
-- latest_by: created_at
-- date_column: order_date
--
-- The orders the pipeline reads (CONTRACT §3). Several rows may share an order_id (a
-- re-sent or amended record): the one with the greatest created_at wins, ties going to
-- the row that arrived last, and the order belongs to the date of its winning row. sqlrun
-- makes that rule the view orders_latest (system/source_latest.sql), tracks every change
-- to the table (a late or re-sent order marks its dates `changed`), and loads it from CSV
-- (`sqlrun load orders FILE`).
--
-- The DDL below is the table's when sqlrun creates it; every sqlrun database has one
-- already (its schema makes it), which this declaration adopts as it is. Types are
-- spelt so that one text works on both backends: SQLite keeps DATE and TIMESTAMPTZ
-- values as the text written, PostgreSQL as dates and times. A column added here before
-- the database first reads this file (`sqlrun init`) makes the empty table again; after,
-- it is a new version with its `-- migrate:` (docs/src/authoring/sources.md).
CREATE TABLE orders (
    order_id    TEXT NOT NULL,
    order_date  DATE NOT NULL,
    amount      BIGINT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP
);
-- A date's orders by their date, and the newest version of an order by its id.
CREATE INDEX orders_by_date ON orders (order_date);
CREATE INDEX orders_by_id ON orders (order_id, created_at);
