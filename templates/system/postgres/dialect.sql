-- name: dialect
-- version: 10
--
-- PostgreSQL's spelling of the few things the system templates say differently on
-- each backend (sqlite/dialect.sql has the same macros). Imported as `d`. Times come
-- from the server's clock, never from a runner's.
{% macro now() %}now(){% endmacro %}
{# The moment itself: now() is when the transaction began. #}
{% macro clock() %}clock_timestamp(){% endmacro %}
{# The moment itself, as precise as the clock (version 10: sqlite/dialect.sql's to the
   millisecond). #}
{% macro instant() %}clock_timestamp(){% endmacro %}
{% macro from_now(seconds) %}(now() + {{ seconds }} * interval '1 second'){% endmacro %}
{# The moment `seconds` seconds ago (history's retention). #}
{% macro ago(seconds) %}(now() - {{ seconds }} * interval '1 second'){% endmacro %}
{# A JSON array of dates as a table with one column, value. #}
{% macro dates(json) %}(SELECT CAST(e.value AS date) AS value FROM jsonb_array_elements_text(CAST({{ json }} AS jsonb)) AS e(value)){% endmacro %}
{# Null-safe equality of two keys, and its negation. #}
{% macro same() %}IS NOT DISTINCT FROM{% endmacro %}
{# The join condition of two keys in a FULL JOIN. PostgreSQL's FULL JOIN
   needs a plain equality; the keys of a model are NOT NULL in its table. #}
{% macro join_same() %}={% endmacro %}
{% macro differs() %}IS DISTINCT FROM{% endmacro %}
{# The body of a recursive CTE dates(ds): every date from start to end. #}
{% macro date_series(start, end) %}SELECT CAST(g.d AS date)
    FROM generate_series(CAST({{ start }} AS date), CAST({{ end }} AS date), interval '1 day') AS g(d){% endmacro %}
{# Portable date arithmetic, for models as for sqlrun's own templates (the guide's
   "Portable date arithmetic" has the table). `date` is a SQL date expression: a value
   such as `ds` (a literal, or a parameter when it runs), a column (`"order_date"|ident`),
   or another macro's output; `days` is a whole number. Each gives a `date`: date plus
   or minus an integer is one, and date_trunc's timestamp is cast back (it truncates a
   timestamp without time zone, so the session's TimeZone cannot move the day). #}
{# The date `days` days before `ds`. #}
{% macro days_before(ds, days) %}(CAST({{ ds }} AS date) - CAST({{ days }} AS integer)){% endmacro %}
{# The date `days` days after `date` (a negative number counts back). #}
{% macro days_after(date, days) %}(CAST({{ date }} AS date) + CAST({{ days }} AS integer)){% endmacro %}
{# The date `months` months after `date` (version 10; a negative number counts back). #}
{% macro months_after(date, months) %}CAST(CAST({{ date }} AS date) + CAST({{ months }} AS integer) * interval '1 month' AS date){% endmacro %}
{# The first day of the month `date` falls in. #}
{% macro month_start(date) %}CAST(date_trunc('month', CAST({{ date }} AS timestamp)) AS date){% endmacro %}
{# The Monday of the ISO week `date` falls in (date_trunc's 'week' is the ISO week). #}
{% macro iso_week_start(date) %}CAST(date_trunc('week', CAST({{ date }} AS timestamp)) AS date){% endmacro %}
{# The first day of the quarter `date` falls in (version 9). #}
{% macro quarter_start(date) %}CAST(date_trunc('quarter', CAST({{ date }} AS timestamp)) AS date){% endmacro %}
{# The first day of the year `date` falls in (the calendar year, not the ISO year). #}
{% macro year_start(date) %}CAST(date_trunc('year', CAST({{ date }} AS timestamp)) AS date){% endmacro %}
{# A UTC time written 'YYYY-MM-DD HH:MM:SS' (sessions run in UTC). #}
{% macro timestamp(text) %}CAST({{ text }} AS timestamptz){% endmacro %}
{# The Monday of the ISO week that row `a`'s date (`ds`) falls in. #}
{% macro week_start(a) %}CAST(date_trunc('week', {{ a|ident }}.ds) AS date){% endmacro %}
{# `apply --diff`: a preview's temporary objects are found before the pipeline's by their
   names, for the rest of its transaction (sqlrun's sessions search pg_temp last). #}
{% macro temp_first(schema) %}SELECT set_config('search_path', 'pg_temp, ' || quote_ident({{ schema }}), true);{% endmacro %}
{# `apply --diff`: from here on the preview's transaction writes only temporary tables;
   any other write is refused by the server. #}
{% macro read_only() %}SET TRANSACTION READ ONLY;{% endmacro %}
{# `apply --diff`: the schema of a session's temporary objects, to name one of them past
   a pipeline object of the same name. #}
{% macro temp_schema() %}pg_temp{% endmacro %}
