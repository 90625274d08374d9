"""Suites: items to solve, where they come from (files, HumanEval, reasoning-gym, examples), how they are scored,
and the ``NAME[SLICE]?k=v`` selector grammar that suites and arms share.

Public names are exported by :mod:`moot.harness`; the modules here are private to it.
"""
