"""Results JSON (:mod:`.results`), history (:mod:`.history`) and the terminal summary (:mod:`.terminal`)."""
