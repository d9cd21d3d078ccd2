-- `sqlrun undo RUN` of an undo: the latest run of kind undo (only it may be undone).
SELECT max(run_id) AS run_id FROM runs WHERE kind = 'undo'
