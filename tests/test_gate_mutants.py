"""Pins of what the gate decides: each test fails when one verdict-deciding behaviour breaks (the mutation
check, scripts/mutation_check.py, runs the mutants of those modules against this file)."""
