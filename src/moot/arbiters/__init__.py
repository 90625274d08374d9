"""Arbiters: the Verdict schema, the Arbiter protocol, majority vote and answer normalisation."""

from moot.arbiters._answers import agreement, modal_answer, normalise_answer
from moot.arbiters._majority import MajorityVote
from moot.arbiters._protocol import Arbiter
from moot.arbiters._verdict import ExpertAssessment, Verdict

__all__ = ["Arbiter", "ExpertAssessment", "MajorityVote", "Verdict", "agreement", "modal_answer", "normalise_answer"]
