"""Arbiters: the Verdict schema, the Arbiter protocol, majority and confidence-weighted votes, arbiter files,
the program vote of a code debate, and answer normalisation."""

from moot.arbiters._answers import agreement, modal_answer, normalise_answer
from moot.arbiters._arbiter_files import VOTES, ArbiterSpec, known_arbiters, load_arbiter
from moot.arbiters._majority import MajorityVote, majority_answer
from moot.arbiters._programs import UNOBSERVED, Candidate, Evidence, ProgramRuling, ProgramVote, same_behaviour
from moot.arbiters._protocol import Arbiter, RoundsArbiter
from moot.arbiters._rounds_vote import RoundsVote
from moot.arbiters._weighted import WeightedVote
from moot.roles import ExpertAssessment, Verdict

__all__ = [
    "UNOBSERVED",
    "VOTES",
    "Arbiter",
    "ArbiterSpec",
    "Candidate",
    "Evidence",
    "ExpertAssessment",
    "MajorityVote",
    "ProgramRuling",
    "ProgramVote",
    "RoundsArbiter",
    "RoundsVote",
    "Verdict",
    "WeightedVote",
    "agreement",
    "known_arbiters",
    "load_arbiter",
    "majority_answer",
    "modal_answer",
    "normalise_answer",
    "same_behaviour",
]
