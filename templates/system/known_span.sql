-- name: known_span
-- version: 1
--
-- The first and the last date the database knows, for `sqlrun status` without an
-- interval: the dates of the state store (attempted, held, sealed) and the dates of the
-- pipeline's source rows, so that a gap inside the history and source dates not computed
-- yet both show. One row: the state store's first and last date, then each source's.
-- Every min and max is a subquery of its own over one indexed column, which both
-- backends answer from an end of the index (run_partitions_by_ds, the primary keys of
-- reservations and seals, orders_by_date) without reading the table; a source whose
-- date column has no index is scanned once per bound.
SELECT
    (SELECT min(k.ds) FROM (SELECT min(ds) AS ds FROM run_partitions
                            UNION ALL SELECT min(ds) FROM reservations
                            UNION ALL SELECT min(ds) FROM seals) AS k) AS state_first,
    (SELECT max(k.ds) FROM (SELECT max(ds) AS ds FROM run_partitions
                            UNION ALL SELECT max(ds) FROM reservations
                            UNION ALL SELECT max(ds) FROM seals) AS k) AS state_last
{% for source in sources %},
    (SELECT min({{ source.date_column|ident }}) FROM {{ source.table|ident }}) AS {{ ("first_" ~ loop.index)|ident }},
    (SELECT max({{ source.date_column|ident }}) FROM {{ source.table|ident }}) AS {{ ("last_" ~ loop.index)|ident }}
{% endfor %}
