-- What happened to a model: added, retired, restored.
INSERT INTO model_events (model, at, event, requested_by, detail)
VALUES (:model, CURRENT_TIMESTAMP, :event, :by, :detail)
