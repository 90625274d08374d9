"""Team topologies; each is an AutoGen Team (run, run_stream, reset, save_state/load_state)."""

from moot.teams._reflection import Reflection, ReflectionConfig, ReflectionResult, ReflectionRound

__all__ = ["Reflection", "ReflectionConfig", "ReflectionResult", "ReflectionRound"]
