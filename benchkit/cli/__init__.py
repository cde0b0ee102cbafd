"""The `benchkit` command line: argument types, exit codes, and the commands."""
