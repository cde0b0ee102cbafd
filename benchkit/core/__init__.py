"""The pure core: records, statistics, verdicts, counts, parsers, schema, table models and
reports. Nothing here starts a process, opens a file, reads a clock or prints."""
