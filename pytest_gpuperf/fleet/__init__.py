"""Several GPUs in one host, and the cards of a fleet of hosts.

* :mod:`.identity` — which devices are one physical GPU (a CUDA and an NVIDIA-OpenCL view of one card
  share its PCI bus id), so a worker owns a whole card, never half of it;
* :mod:`.pinning` — pytest-xdist: ``-n auto`` = one worker per physical GPU, and a scheduler that sends
  every test of one GPU to one worker;
* :mod:`.workers` — what a worker hands back to the controller (summary lines, results documents), so
  the summary and the sibling check are made once, on the controller;
* :mod:`.siblings` — the sibling check: cards of one model side by side, and the card that is
  significantly worse than its siblings; the verdict of a card against its siblings pooled is the sibling
  rule's (:mod:`pytest_gpuperf.baselines.sibling_verdict`: significance beyond the floor, the floor alone on
  values);
* :mod:`.fleetload` — a fleet run read from its folder (one subfolder per job): cards by recorded
  identity, cohorts by model, driver, clock and power limit;
* :mod:`.fleetreport` — one verdict per card (ok, warn, uncertain, fail) and the Slurm drain commands; the
  statistics and fleet-relative decisions are the cohort noise model's (:mod:`pytest_gpuperf.baselines.cohort`:
  robust z, Benjamini–Hochberg, bit-for-bit majority, the between-card tests, the effect floor);
* :mod:`.fleetformat` — the fleet report as text, JSON and HTML;
* :mod:`.rollout` — the rollout gate (two fleet runs compared, through the cohort noise model) and the
  baseline made from a fleet run;
* :mod:`.cli` — ``gpuperf siblings`` on saved results files, and the ``gpuperf fleet`` group.
"""
