SELECT to_regclass(quote_ident(:name)) IS NOT NULL
