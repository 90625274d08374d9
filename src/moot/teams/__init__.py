"""The teams, one class per topology; each is an AutoGen Team (run, run_stream, reset, save_state/load_state)."""

from moot.store import RunInfo, TeamHooks
from moot.teams._base import MootTeam
from moot.teams._code_debate import CodeDebate, CodeDebateConfig, default_code_debate_stop
from moot.teams._code_debate_records import CodeChoice, CodeDebateMetrics, CodeDebateResult, CodeRound
from moot.teams._code_evidence import NO_OUTPUT, program_evidence
from moot.teams._debate import Debate, default_debate_stop
from moot.teams._debate_records import DebateMetrics, DebateResult, DebateRound
from moot.teams._human import (
    FINAL,
    POINTS,
    ROUND,
    AnswerOnce,
    CallbackFeedback,
    Feedback,
    HumanFeedback,
    HumanFeedbackFrom,
    HumanInTheLoop,
)
from moot.teams._plan_records import PlannedStep, PlannerExecutorResult, PlannerExecutorState, StepRecord
from moot.teams._planner_executor import PlannerExecutor, PlannerExecutorConfig, default_planner_executor_stop
from moot.teams._presets import TeamPreset, known_presets, load_preset
from moot.teams._records import MootResult, Usage
from moot.teams._reflection import Reflection, ReflectionConfig, ReflectionResult, ReflectionRound, Revision
from moot.teams._topologies import (
    TOPOLOGIES,
    TeamParts,
    Topology,
    register_topology,
    topology,
    topology_names,
    unregister_topology,
)

__all__ = [
    "FINAL",
    "NO_OUTPUT",
    "POINTS",
    "ROUND",
    "TOPOLOGIES",
    "AnswerOnce",
    "CallbackFeedback",
    "CodeChoice",
    "CodeDebate",
    "CodeDebateConfig",
    "CodeDebateMetrics",
    "CodeDebateResult",
    "CodeRound",
    "Debate",
    "DebateMetrics",
    "DebateResult",
    "DebateRound",
    "Feedback",
    "HumanFeedback",
    "HumanFeedbackFrom",
    "HumanInTheLoop",
    "MootResult",
    "MootTeam",
    "PlannedStep",
    "PlannerExecutor",
    "PlannerExecutorConfig",
    "PlannerExecutorResult",
    "PlannerExecutorState",
    "Reflection",
    "ReflectionConfig",
    "ReflectionResult",
    "ReflectionRound",
    "Revision",
    "RunInfo",
    "StepRecord",
    "TeamHooks",
    "TeamParts",
    "TeamPreset",
    "Topology",
    "Usage",
    "default_code_debate_stop",
    "default_debate_stop",
    "default_planner_executor_stop",
    "known_presets",
    "load_preset",
    "program_evidence",
    "register_topology",
    "topology",
    "topology_names",
    "unregister_topology",
]
