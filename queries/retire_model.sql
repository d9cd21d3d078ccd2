-- An explicit retirement: the model's table and rows stay; templates without it are
-- accepted from now on.
UPDATE models
SET retired_at = CURRENT_TIMESTAMP, retired_by = :by, retired_reason = :reason
WHERE name = :name AND retired_at IS NULL
