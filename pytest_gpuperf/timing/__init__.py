"""Measurement: the one timing path with device events (:mod:`.measure`), robust statistics
(:mod:`.stats`), the two-run comparison (:mod:`.difference`), the repeat settings per device type
(:mod:`.profiles`), the observers around every measurement window (:mod:`.observers`) and the energy of
a launch (:mod:`.energy`)."""
