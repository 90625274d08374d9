"""Reports: statistics over the result rows, the report model, and its terminal, Markdown, HTML and plot
writers.

Public names are exported by :mod:`moot.harness`; the modules here are private to it.
"""
