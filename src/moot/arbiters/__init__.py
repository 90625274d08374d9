"""Arbiters: the Verdict schema, the Arbiter protocol, majority and confidence-weighted votes, arbiter files,
the program vote of a code debate, and answer normalisation.

Every vote breaks ties the same way (:data:`TIE_RULE`): a tie goes to the tied answer held by the expert listed
first, never to how an answer is spelled (RoundsVote prefers the first-round vote among the tied)."""

from moot.arbiters._answers import agreement, modal_answer, normalise_answer
from moot.arbiters._arbiter_files import VOTES, ArbiterSpec, VoteName, known_arbiters, load_arbiter
from moot.arbiters._majority import MajorityVote, majority_tally
from moot.arbiters._programs import UNOBSERVED, Candidate, Evidence, ProgramRuling, ProgramVote, same_behaviour
from moot.arbiters._protocol import Arbiter, RoundsArbiter, VoteArbiter
from moot.arbiters._rounds_vote import RoundsVote
from moot.arbiters._tally import TIE_RULE, Tally
from moot.arbiters._weighted import WeightedVote
from moot.roles import ExpertAssessment, Verdict

__all__ = [
    "TIE_RULE",
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
    "Tally",
    "Verdict",
    "VoteArbiter",
    "VoteName",
    "WeightedVote",
    "agreement",
    "known_arbiters",
    "load_arbiter",
    "majority_tally",
    "modal_answer",
    "normalise_answer",
    "same_behaviour",
]
