SELECT sql FROM sqlite_schema WHERE name = :name
