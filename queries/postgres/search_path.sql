-- Every object of the pipeline is found in, and created in, its schema.
SELECT set_config('search_path', quote_ident(:schema), false)
