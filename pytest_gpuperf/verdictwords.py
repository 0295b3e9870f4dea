"""The words of a verdict, every vocabulary in one place, and how they map onto each other.

One idea — how a measured figure relates to what it is judged against — reads in five vocabularies, one
per question asked:

* :class:`Gate` — a metric against its reviewed baseline (or a reference run) in a pytest run: the results
  file's ``verdict``, the summary, the exit status;
* :class:`Compare` — run B against run A (``gpuperf compare``): B ``worse``, ``better`` or the ``same``;
* :class:`Sibling` — a card against its siblings in one host (``gpuperf siblings``);
* :class:`FleetCard` — a card's verdict in a fleet run (``gpuperf fleet report``);
* :class:`Trend` — what the history calls a change of a metric's series that is no step (``gpuperf history``).

The words are plain strings (results files, JSON reports and terminal lines hold them as they are); code
names them through these classes, never as literals (``tests/test_verdict_words.py``), so a word and the
rules that read it change in one place. The tables below translate one vocabulary into another.
"""

from __future__ import annotations

from typing import Final


class Gate:
    """The baseline gate's verdicts of one metric."""

    REGRESSED: Final = "regressed"  # outside the band on the bad side (significantly, where samples allow)
    MISSING: Final = "missing"  # a baseline metric a passed test no longer records
    INCOMPARABLE: Final = "incomparable"  # the baseline was made another way (identity, unit, direction)
    KNOWN: Final = "known"  # out of band in a test marked xfail (a documented finding)
    UNGATED: Final = "ungated"  # recorded, not gated: the noise model needs what the baseline lacks
    THROTTLED: Final = "throttled"  # the card slowed itself down while it was measured
    CONTENDED: Final = "contended"  # another process shared the card, or other work the CPU device's host
    NEW: Final = "new"  # nothing to judge it against
    IMPROVED: Final = "improved"  # outside the band on the good side: a prompt to refresh the baseline
    LOOSE: Final = "loose"  # in band, but the band is too wide to catch what it should
    PASS: Final = "pass"  # in band

    #: every gate verdict, worst first
    ALL: Final = (REGRESSED, MISSING, INCOMPARABLE, KNOWN, UNGATED, THROTTLED, CONTENDED, NEW, IMPROVED, LOOSE, PASS)
    #: the verdicts of a metric whose band was applied (what the observers may still overrule)
    JUDGED: Final = (REGRESSED, IMPROVED, LOOSE, PASS)
    #: a band verdict outside the band: kept only where the difference is also significant
    OUT_OF_BAND: Final = (REGRESSED, IMPROVED)
    #: what the observers' marks replace (a measurement that was not the code's own): nothing else was gated
    OBSERVABLE: Final = JUDGED
    #: the verdicts a figure measured while the machine was disturbed reads instead of being judged
    DISTURBED: Final = (THROTTLED, CONTENDED)
    #: what a busy-card check counts as a measurement judged on the card (``--gpuperf-when-busy``)
    MEASURED: Final = (CONTENDED, REGRESSED, IMPROVED, LOOSE, PASS, THROTTLED)
    #: verdicts under which a run-against-run verdict is still a gate's (``--gpuperf-compare``): what a
    #: throttle or a shared card on either side replaces
    COMPARED: Final = (REGRESSED, IMPROVED, PASS, UNGATED)


class Compare:
    """``gpuperf compare``'s verdicts of one metric, run B against run A."""

    ERROR: Final = "error"  # an impossible value on either side
    WORSE: Final = "worse"
    BETTER: Final = "better"
    INCOMPARABLE: Final = "incomparable"  # measured another way, on one side only, or across cards
    INFORMATIONAL: Final = "informational"  # shown, never judged (the metric's noise model)
    SAME: Final = "same"  # within the band, or not significant
    #: the runs' samples differ significantly, yet by less than unchanged runs of this card differ (the card's
    #: baseline): with fewer than three runs a side the change cannot be told from that spread
    UNCERTAIN: Final = "uncertain"

    #: every compare verdict, worst first (also the order rows are listed in within an area)
    ALL: Final = (ERROR, WORSE, UNCERTAIN, BETTER, INCOMPARABLE, INFORMATIONAL, SAME)


class Sibling:
    """The sibling check's verdicts of one card's metric against its siblings pooled."""

    OUTLIER: Final = "outlier"  # worse than its siblings beyond the class floor (and significantly)
    INCOMPARABLE: Final = "incomparable"
    BETTER: Final = "better"
    SAME: Final = "same"

    #: every sibling verdict, worst first
    ALL: Final = (OUTLIER, INCOMPARABLE, BETTER, SAME)


class FleetCard:
    """A card's verdict in a fleet run."""

    FAIL: Final = "fail"
    UNCERTAIN: Final = "uncertain"  # flagged fleet-relatively, not yet confirmed
    WARN: Final = "warn"
    OK: Final = "ok"

    #: every fleet verdict, worst first
    ALL: Final = (FAIL, UNCERTAIN, WARN, OK)


class Rollout:
    """The rollout gate's verdict of a new fleet run against the previous one (its rows: :class:`Compare`)."""

    FAIL: Final = "fail"  # a metric worse on every new card
    PASS: Final = "pass"


class Trend:
    """What the history says of a change between two runs of one metric's series that is no step."""

    KERNEL_CHANGED: Final = "kernel changed"  # the kernels its test compiled differ (``source_digest``)

    ALL: Final = (KERNEL_CHANGED,)


class Shift:
    """Which way one figure lies from another beyond a floor (the ratio rule of siblings and compare)."""

    WORSE: Final = "worse"
    BETTER: Final = "better"
    SAME: Final = "same"


#: the gate's band verdict as ``gpuperf compare`` words it (``regressed`` → ``worse``, …)
GATE_TO_COMPARE: Final = {Gate.REGRESSED: Compare.WORSE, Gate.IMPROVED: Compare.BETTER, Gate.PASS: Compare.SAME,
                          Gate.INCOMPARABLE: Compare.INCOMPARABLE}
#: ``gpuperf compare``'s verdict as the session words it under ``--gpuperf-compare`` (an impossible value in
#: the reference is that reference's problem: incomparable; an informational row is recorded, not gated)
COMPARE_TO_GATE: Final = {Compare.WORSE: Gate.REGRESSED, Compare.BETTER: Gate.IMPROVED, Compare.SAME: Gate.PASS,
                          Compare.INCOMPARABLE: Gate.INCOMPARABLE, Compare.ERROR: Gate.INCOMPARABLE,
                          Compare.INFORMATIONAL: Gate.UNGATED, Compare.UNCERTAIN: Gate.PASS}
#: a side of the floor as a sibling verdict
SHIFT_TO_SIBLING: Final = {Shift.WORSE: Sibling.OUTLIER, Shift.BETTER: Sibling.BETTER, Shift.SAME: Sibling.SAME}
#: exit status of ``gpuperf fleet report`` per card verdict (the worst card's decides)
FLEET_EXIT: Final = {FleetCard.OK: 0, FleetCard.WARN: 0, FleetCard.FAIL: 1, FleetCard.UNCERTAIN: 3}

#: every word of every vocabulary (what ``tests/test_verdict_words.py`` looks for)
WORDS: Final = (frozenset(Gate.ALL) | frozenset(Compare.ALL) | frozenset(Sibling.ALL) | frozenset(FleetCard.ALL)
                | frozenset(Trend.ALL))
