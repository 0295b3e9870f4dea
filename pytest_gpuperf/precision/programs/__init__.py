"""The tuner's kernels: each a typed template (:mod:`..template`) plus its inputs, its launches and the
output the error is measured on. One module per kernel (its shape in :mod:`.program`); :data:`PROGRAMS` names them.

A :class:`Program` makes a :class:`Setup` for a device type (CPU devices get smaller problems): host
arrays (copied to the device once), the names of the buffers the program writes (reset from the pristine
copy before every run, untimed), a ``launch`` that enqueues the whole program and returns its events,
and ``result`` that turns the read-back buffers into the float64 output compared with the original's.
"""

from __future__ import annotations

from . import gaussian, lavamd, lu, nbody, reduction, stencil
from .program import Program


PROGRAMS: dict[str, Program] = {m.PROGRAM.name: m.PROGRAM for m in (gaussian, lu, lavamd, stencil, nbody, reduction)}
