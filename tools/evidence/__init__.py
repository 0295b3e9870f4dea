"""Docs generated from runs: every table of figures in ``docs/*.md`` is regenerated from the results files
its marker names, and ``python3 -m tools.evidence check`` fails where a doc says something its results do not.

A table lives between markers::

    <!-- gpuperf:table NAME sources=results/<key>/a.json.gz[,…] [role=results/…] [option=value] -->
    …generated Markdown…
    <!-- /gpuperf:table -->

``NAME`` picks a generator (:data:`.registry.TABLES`); every ``key=value`` whose value names files under
``results/`` is a *role* (the generator reads its runs by role: ``cuda``, ``opencl``, ``runs`` …), any
other is an option. The block ends with a line naming every run it was made from (file, commit, date),
so each figure names its run in the rendered doc too.

Modules: :mod:`.runfile` (a results file as a run), :mod:`.markers` (finding and replacing blocks),
:mod:`.mdcells` (which cells differ), :mod:`.registry` (names → generators, one module per doc area),
:mod:`.docsync` (check and write over a docs folder), :mod:`.cli` (``python3 -m tools.evidence``).
"""
