"""Work-group and kernel-parameter tuning: the thesis' tuner (Dao, ch. 3) and Lim's pruning raced against
Kernel Tuner's strategies on one timing path (:mod:`.race`, :mod:`.strategies`, :mod:`.ktsim`), and any
kernel parameter tuned through Kernel Tuner itself (:mod:`.ktparams`)."""
