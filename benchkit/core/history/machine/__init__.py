"""What one series cannot tell and the machine's other series can (pure): kinds of runner
that the runs do not name (`runners`), a slow spell of the whole machine at the newest end
(`newest_spell`)."""
