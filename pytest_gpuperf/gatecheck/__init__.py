"""The gate check: does the gate pass an unchanged system (A/A) and catch planted regressions?

:mod:`.plants` names the planted regressions (``--gpuperf-plant``) the library and suites honour;
:mod:`.run` drives the README's main command N times plus the planted runs and writes
``results/<device key>/gatecheck.json``; :mod:`.families` plants every family at the size its baseline
bands claim to catch, and the headline figures' detection curves.
"""
