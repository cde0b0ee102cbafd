"""The history at the command line: `benchkit history ...`, `bisect` and `report`, and the
database and step options they share."""
