"""evalgrid: many runs."""
