-- name: source_rows_in
-- version: 1
--
-- After `apply`: whether each source of the pipeline has a row dated inside the run's
-- interval. A run whose sources have none computed every date from nothing (zeros), most
-- often in the wrong folder or database, or before a load: sqlrun says so. One row, a
-- column per source: 1 when it has a row there, else 0. Each is one probe of the date
-- column's index (a range, so a TEXT timestamp or a DATE compares as its day).
SELECT
{% for source in sources %}
{% if not loop.first %},{% endif %}
    (SELECT count(*) FROM (SELECT 1 FROM {{ source.table|ident }}
                           WHERE {{ source.date_column|ident }} >= {{ first }}
                             AND {{ source.date_column|ident }} < {{ after }}
                           LIMIT 1) AS s) AS {{ ("rows_" ~ loop.index)|ident }}
{% endfor %}
