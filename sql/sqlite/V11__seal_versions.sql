-- A seal is an event: `sqlrun seal` sends dates out (a first version), `seal --reissue`
-- sends their current values again (a new version), `sqlrun unseal` makes them ordinary
-- again. Each event is one row here, with who, when and why; seal_coverage says which
-- dates and models it covered. Nothing here is updated or deleted: it is the history.
-- `seals` (the contract's table) stays the present: one row per date sealed now,
-- describing its latest version.
CREATE TABLE seal_events (
    seal_id    INTEGER PRIMARY KEY,
    action     TEXT NOT NULL CHECK (action IN ('seal', 'reissue', 'unseal')),
    first_ds   TEXT NOT NULL,          -- the interval asked for
    last_ds    TEXT NOT NULL,
    made_at    TEXT NOT NULL,
    made_by    TEXT NOT NULL,
    reason     TEXT NOT NULL
);

-- The dates and models each event covered. A seal covers the models computed on the
-- date when it was made; a model first computed on a sealed date afterwards is not
-- covered (its rows are an ordinary date's) until a later seal or reissue covers it.
CREATE TABLE seal_coverage (
    seal_id  INTEGER NOT NULL,
    ds       TEXT NOT NULL,
    model    TEXT NOT NULL,            -- the model's name (models/NAME.sql)
    PRIMARY KEY (seal_id, ds, model)
);
CREATE INDEX seal_coverage_by_date ON seal_coverage (ds, model, seal_id);

-- What is sealed now, per date and model, and by which event: the latest event that
-- covered it, while the date is sealed and that event was not an unseal. `version` counts
-- the seals and reissues of the date and model so far (1: the first report).
CREATE VIEW sealed_models AS
SELECT c.ds, c.model, c.seal_id, e.action,
       (SELECT count(*) FROM seal_coverage AS v
          JOIN seal_events AS ve ON ve.seal_id = v.seal_id
         WHERE v.ds = c.ds AND v.model = c.model AND v.seal_id <= c.seal_id
           AND ve.action <> 'unseal') AS version
FROM seal_coverage AS c
JOIN seal_events AS e ON e.seal_id = c.seal_id
JOIN seals AS s ON s.ds = c.ds
WHERE e.action <> 'unseal'
  AND c.seal_id = (SELECT max(c2.seal_id) FROM seal_coverage AS c2
                    WHERE c2.ds = c.ds AND c2.model = c.model);

-- Seals made before events were recorded: one event per seal command (its time, author
-- and reason), numbered in the order they were made. Each covers every model the
-- database knows, as sqlrun treated them then: a model added after a seal was corrected
-- there, its rows kept as corrections (keys the seal never saw), and so they stay until
-- a reissue sends them.
INSERT INTO seal_events (action, first_ds, last_ds, made_at, made_by, reason)
SELECT 'seal', min(ds), max(ds), sealed_at, sealed_by, reason
FROM seals
GROUP BY sealed_at, sealed_by, reason
ORDER BY sealed_at, min(ds);
INSERT INTO seal_coverage (seal_id, ds, model)
SELECT e.seal_id, s.ds, m.name
FROM seals AS s
JOIN seal_events AS e
  ON e.made_at = s.sealed_at AND e.made_by = s.sealed_by AND e.reason = s.reason
CROSS JOIN models AS m;
