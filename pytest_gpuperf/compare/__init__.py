"""Run against run: the upgrade gate.

``gpuperf compare A.json B.json`` — and ``pytest --gpuperf-compare=A.json`` — judge every metric of run B
against run A with the verdicts of :mod:`pytest_gpuperf.baselines.verdicts` (run A plays the baseline
entry: its value, its raw samples, its identity), so a run-against-run verdict and a baseline verdict
can never disagree on the same numbers. The pieces:

* :mod:`.load` — read results files (several runs per side), validate them against the shipped schema;
* :mod:`.crosscard` — what two different cards can be compared on (cycles, ulp, ratios, fractions of
  each card's own peak) and what is a device-specific absolute figure;
* :mod:`.engine` — one :class:`~.engine.Row` per metric with its verdict ``better``/``worse``/``same``/
  ``informational``/``incomparable`` (or ``error`` for an impossible value), reached by the metric's
  noise model (:mod:`pytest_gpuperf.baselines.noise`), grouped and sorted;
* :mod:`.formats` — terminal text, Markdown, JSON (``pytest-gpuperf-compare/1``), self-contained HTML;
* GitHub Actions annotations and the step summary: :mod:`pytest_gpuperf.report.github`;
* :mod:`.gate` — ``pytest --gpuperf-compare``: each recorded metric through :func:`.engine.judge`, and its
  JUnit property;
* :mod:`.cli` — the ``gpuperf compare`` subcommand (its rows as GitHub annotations too).
"""
