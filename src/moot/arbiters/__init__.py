"""Arbiters: the Verdict schema, the Arbiter protocol, majority vote, the program vote of a code debate,
and answer normalisation."""

from moot.arbiters._answers import agreement, modal_answer, normalise_answer
from moot.arbiters._majority import MajorityVote
from moot.arbiters._programs import Candidate, Evidence, ProgramRuling, ProgramVote
from moot.arbiters._protocol import Arbiter
from moot.arbiters._verdict import ExpertAssessment, Verdict

__all__ = [
    "Arbiter",
    "Candidate",
    "Evidence",
    "ExpertAssessment",
    "MajorityVote",
    "ProgramRuling",
    "ProgramVote",
    "Verdict",
    "agreement",
    "modal_answer",
    "normalise_answer",
]
