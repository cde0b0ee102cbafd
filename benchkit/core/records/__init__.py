"""Records that travel and their files' schema (pure): benchmark identities, values that
are not times, the versioned results schema, environments, -k expressions and the argument
checks at the boundary."""
