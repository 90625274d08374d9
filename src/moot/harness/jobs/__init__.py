"""The job runner: jobs (item x arm), their model calls (cached, metered, limited), the local and Ray executors, the
runner that schedules them and the results store it resumes from.

Public names are exported by :mod:`moot.harness`; the modules here are private to it.
"""
