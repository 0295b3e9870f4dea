"""Trend tracking: every run's metrics in a history store, change points over commits, a dashboard.

Modules, one job each: :mod:`.target` (which store a URL names), :mod:`.backends` (the backend
that serves it: checking it early, writing and reading runs),
:mod:`.schema` (tables and versioned migrations), :mod:`.store` (SQLite/PostgreSQL reads and writes),
:mod:`.jsonl` (the legacy locked JSON-lines format), :mod:`.records` (the run/metric shape, from a live
session or a results file), :mod:`.backfill` (imports), :mod:`.detect` (steps a team can act on),
:mod:`.dashboard` (the static HTML report: ``templates/`` and ``static/`` hold its page and script),
:mod:`.cli` (``gpuperf history …``).
"""
