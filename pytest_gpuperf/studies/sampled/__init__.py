"""Dao's sampled-kernel models (thesis ch. 2).

* :mod:`.sampling` — saturation points, sampled runs and the linear model (§2.4–2.5.1).
* :mod:`.svr` — the ML (SVR) model over sampled features, leave-one-kernel-out (§2.5.2, §2.6.1).
* :mod:`.sampled_corpus` — the sampled-kernel model over the corpus, under each sampling protocol;
  :mod:`.sampled_apps` — the model on the application corpus, by Dao's protocol.
* :mod:`.dao_ml` — the ML model on hardware counters (Table 2.1); :mod:`.dao_counters` collects them
  through Nsight Compute from :mod:`.dao_counters_worker`, the process it profiles.
"""
