"""The history dashboard (pure): what it shows (`views`), its HTML pages (`pages`) and the
scripts and style those pages carry (`scripts`)."""
