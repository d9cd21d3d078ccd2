-- The columns of a table (a model's, a source), in order, and the kind of value each
-- holds, from its declared type, read as SQLite reads it (a type with INT is an integer, and so on); BOOL, DATE
-- and TIME are kinds of their own, as people declare them. An undeclared type (or BLOB,
-- or one SQLite gives no clear meaning) is NULL: each value is then shown as what it is.
-- (queries/postgres/column_types.sql has the same kinds.) not_null and has_default say
-- what a row that leaves the column out, or gives NULL, gets (`sqlrun load`); an INTEGER
-- PRIMARY KEY is the rowid, which fills itself.
SELECT name,
       CASE
           WHEN upper(type) LIKE '%INT%' THEN 'integer'
           WHEN upper(type) LIKE '%BOOL%' THEN 'boolean'
           WHEN upper(type) LIKE '%TIME%' THEN 'timestamp'
           WHEN upper(type) LIKE '%DATE%' THEN 'date'
           -- A text column that defaults to the current time holds times (orders.created_at):
           -- SQLite has no time type, its default says what the column is for.
           WHEN (upper(type) LIKE '%CHAR%' OR upper(type) LIKE '%TEXT%')
                AND (lower(dflt_value) LIKE '%datetime(%' OR lower(dflt_value) LIKE '%strftime(%'
                     OR upper(dflt_value) LIKE '%CURRENT_TIMESTAMP%') THEN 'timestamp'
           WHEN upper(type) LIKE '%CHAR%' OR upper(type) LIKE '%CLOB%'
                OR upper(type) LIKE '%TEXT%' THEN 'text'
           WHEN upper(type) LIKE '%REAL%' OR upper(type) LIKE '%FLOA%'
                OR upper(type) LIKE '%DOUB%' OR upper(type) LIKE '%NUM%'
                OR upper(type) LIKE '%DEC%' THEN 'number'
       END AS kind,
       "notnull" AS not_null,
       dflt_value IS NOT NULL
           OR (pk = 1 AND upper(type) = 'INTEGER'
               AND (SELECT count(*) FROM pragma_table_info(:table) WHERE pk > 0) = 1)
           AS has_default
FROM pragma_table_info(:table)
ORDER BY cid
