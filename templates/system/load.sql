-- name: load
-- version: 1
--
-- `sqlrun load TABLE FILE`: rows of a CSV file into a table, many rows per statement.
-- The columns are those the file's header names; the others take their defaults. Every
-- value is a parameter: load.rs renders this once per statement size, each value printed
-- as :p1, :p2, ... (`render_bound`), and binds the file's checked values to it row by
-- row, so nothing from the file is ever part of the SQL text.
INSERT INTO {{ table|ident }} ({{ columns|idents }})
VALUES
{% for row in rows %}
    ({% for value in row %}{% if not loop.first %}, {% endif %}{{ value }}{% endfor %}){% if not loop.last %},{% endif %}

{% endfor %}
