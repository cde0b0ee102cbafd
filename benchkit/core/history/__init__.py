"""Performance over time (pure): observations of a results file, series per benchmark,
metric and machine, and the steps in them."""
