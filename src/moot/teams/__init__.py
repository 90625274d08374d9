"""Team topologies; each is an AutoGen Team (run, run_stream, reset, save_state/load_state)."""

from moot.teams._debate import Debate, default_debate_stop
from moot.teams._debate_records import DebateMetrics, DebateResult, DebateRound
from moot.teams._reflection import Reflection, ReflectionConfig, ReflectionResult, ReflectionRound

__all__ = [
    "Debate",
    "DebateMetrics",
    "DebateResult",
    "DebateRound",
    "Reflection",
    "ReflectionConfig",
    "ReflectionResult",
    "ReflectionRound",
    "default_debate_stop",
]
