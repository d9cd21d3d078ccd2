SELECT max(version) FROM sqlrun_schema_history
