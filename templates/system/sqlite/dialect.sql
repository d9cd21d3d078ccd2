-- name: dialect
-- version: 10
--
-- SQLite's spelling of the few things the system templates say differently on each
-- backend (postgres/dialect.sql has the same macros). Imported as `d`.
{% macro now() %}datetime('now'){% endmacro %}
{# The moment itself (postgres/dialect.sql: now() is when its transaction began). #}
{% macro clock() %}datetime('now'){% endmacro %}
{# The moment itself to the millisecond (version 10: when a partition was built, which
   two runs a second apart must not tie on). Compares as text with clock()'s. #}
{% macro instant() %}strftime('%Y-%m-%d %H:%M:%f', 'now'){% endmacro %}
{% macro from_now(seconds) %}datetime('now', {{ "+" ~ seconds ~ " seconds" }}){% endmacro %}
{# The moment `seconds` seconds ago (history's retention). #}
{% macro ago(seconds) %}datetime('now', {{ "-" ~ seconds ~ " seconds" }}){% endmacro %}
{# A JSON array of dates as a table with one column, value. #}
{% macro dates(json) %}json_each({{ json }}){% endmacro %}
{# Null-safe equality of two keys, and its negation. #}
{% macro same() %}IS{% endmacro %}
{# The join condition of two keys in a FULL JOIN. #}
{% macro join_same() %}IS{% endmacro %}
{% macro differs() %}IS NOT{% endmacro %}
{# The body of a recursive CTE dates(ds): every date from start to end. #}
{% macro date_series(start, end) %}SELECT {{ start }}
    UNION ALL
    SELECT date(ds, '+1 day') FROM dates WHERE ds < {{ end }}{% endmacro %}
{# Portable date arithmetic, for models as for sqlrun's own templates (the guide's
   "Portable date arithmetic" has the table). `date` is a SQL date expression: a value
   such as `ds` (a literal, or a parameter when it runs), a column (`"order_date"|ident`),
   or another macro's output; `days` is a whole number. Each gives a date, on SQLite the
   text 'YYYY-MM-DD' (date() reads it, and compares as text in date order). #}
{# The date `days` days before `ds`. #}
{% macro days_before(ds, days) %}date({{ ds }}, {{ "-" ~ days ~ " days" }}){% endmacro %}
{# The date `days` days after `date` (a negative number counts back). #}
{% macro days_after(date, days) %}date({{ date }}, {{ ("+" if days >= 0 else "") ~ days ~ " days" }}){% endmacro %}
{# The date `months` months after `date`, a first of a month (version 10: whole months
   from a month's, quarter's or year's first day; a negative number counts back). #}
{% macro months_after(date, months) %}date({{ date }}, {{ ("+" if months >= 0 else "") ~ months ~ " months" }}){% endmacro %}
{# The first day of the month `date` falls in. #}
{% macro month_start(date) %}date({{ date }}, 'start of month'){% endmacro %}
{# The Monday of the ISO week `date` falls in (a Sunday belongs to the week before:
   'weekday 0' moves on to the Sunday that ends the week, or stays on one). #}
{% macro iso_week_start(date) %}date({{ date }}, 'weekday 0', '-6 days'){% endmacro %}
{# The first day of the quarter `date` falls in (version 9). #}
{% macro quarter_start(date) %}date({{ date }}, 'start of month', printf('-%d months', (CAST(strftime('%m', {{ date }}) AS integer) - 1) % 3)){% endmacro %}
{# The first day of the year `date` falls in (the calendar year, not the ISO year). #}
{% macro year_start(date) %}date({{ date }}, 'start of year'){% endmacro %}
{# A UTC time written 'YYYY-MM-DD HH:MM:SS', as the state store's times compare. #}
{% macro timestamp(text) %}{{ text }}{% endmacro %}
{# The Monday of the ISO week that row `a`'s date (`ds`) falls in. #}
{% macro week_start(a) %}date({{ a|ident }}.ds, 'weekday 0', '-6 days'){% endmacro %}
{# `apply --diff`: a preview's temporary objects are found before the pipeline's by their
   names (SQLite searches temp first for an unqualified name: nothing to do). #}
{% macro temp_first(schema) %}{% endmacro %}
{# `apply --diff`: from here on the preview's transaction writes only its temporary objects
   (SQLite: the preview reads through a read-only connection where the file allows it). #}
{% macro read_only() %}{% endmacro %}
{# `apply --diff`: the schema of a session's temporary objects, to name one of them past
   a pipeline object of the same name. #}
{% macro temp_schema() %}temp{% endmacro %}
