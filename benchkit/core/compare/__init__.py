"""Two result sets side by side and how they are shown (pure): the comparison model, the
Compare table model and its text rendering, memory tables and reports."""
