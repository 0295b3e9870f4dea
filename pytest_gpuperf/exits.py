"""Exit statuses of a run that could not be a gate, one per reason, beside pytest's own 0–5.

A CI script can tell "the code regressed" (pytest's 1) from "this run judged nothing it was asked to"
without parsing the log; the summary's last lines name the reason in words too."""

from __future__ import annotations

#: a Ctrl-C or a batch system's SIGTERM stopped it before its end: what ended is kept (pytest's own status for
#: an interrupted session, which ``gpuperf`` commands that run sessions share)
INTERRUPTED = 2
#: ``--gpuperf-require-baseline`` and a device had no baseline of its own, nor a reviewed one
NO_BASELINE = 6
#: more than a tenth of a device's metrics were measured while another process ran on the card
#: (verdict ``contended``): run again with the card to itself
GPU_TOO_BUSY = 7
#: more than a tenth of a device's metrics were measured while the card slowed itself down (verdict
#: ``throttled``: thermal, power cap, hardware slowdown): fix the card's cooling or power limit
THROTTLED = 8
#: more than a tenth of a CPU device's metrics were measured while other work held the host's cores
#: (verdict ``contended``, ``info["host"]``): run again on a quiet host. A run whose judged figures failed
#: (a regression, a missing metric) exits 1 instead: what it could judge is a finding whatever the load
HOST_TOO_BUSY = 9

REASONS = {NO_BASELINE: "NO BASELINE", GPU_TOO_BUSY: "GPU TOO BUSY TO GATE",
           THROTTLED: "CARD THROTTLED TOO OFTEN TO GATE", HOST_TOO_BUSY: "HOST TOO BUSY TO GATE"}
