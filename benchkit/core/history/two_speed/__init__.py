"""A series a shared machine runs at two speeds, in clusters (pure): its flips as its noise
and the series read at its faster speed (`read`), and its steps found there (`steps`); a
run back at the level before a step that is one of the machine's speeds (`own_speeds`)."""
