-- name: remake_source
-- version: 1
--
-- A declared source whose table exists, empty, with other columns than its declaration
-- (an `orders` made by sqlrun's schema before the project added a column to it) is made
-- again from the declaration, in the transaction that records it. What reads the table
-- (the views) is made again after it; its change triggers are installed again.
DROP TABLE {{ table|ident }}{% if dialect == "postgres" %} CASCADE{% endif %};
