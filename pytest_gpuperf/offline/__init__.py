"""Offline GPU hosts: a bundle that installs and runs the suites without a package index
(:mod:`.bundle`), and the way its results come back into the results store and history (:mod:`.intake`)."""
