-- Each run records the dialect it ran on (sqlite or postgres), for the audit trail.
ALTER TABLE runs ADD COLUMN dialect text;
