"""moot teams as participants of AutoGen's group chats, with no extra arguments.

An AutoGen group chat (autogen-agentchat 0.7) accepts only message types its
factory knows, and learns a participant's types only from *agents* (their
``produced_message_types``), never from a nested team; a moot team nested in a
``RoundRobinGroupChat`` then fails at its first round event ("Message type
RoundCompleted is not registered"). So when moot's teams are imported, every
group chat built afterwards that holds a moot team (directly, inside a nested
group chat, or inside a ``SocietyOfMindAgent``) learns moot's message types
(:data:`moot.messages.MESSAGE_TYPES`) as it is built. Group chats without a moot
team are left exactly as AutoGen made them, and types a user registered
(``custom_message_types``) are kept.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from autogen_agentchat.agents import SocietyOfMindAgent
from autogen_agentchat.teams import BaseGroupChat

from moot.messages import MESSAGE_TYPES
from moot.teams._base import MootTeam

__all__ = ["teach_group_chats"]

_MARK = "_moot_learns_types"


def teach_group_chats() -> None:
    """Make group chats built from now on learn moot's message types when they hold a moot team (idempotent)."""
    built = BaseGroupChat.__init__
    if getattr(built, _MARK, False):
        return
    BaseGroupChat.__init__ = _learning(built)  # type: ignore[method-assign]


def _learning(built: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(built)
    def __init__(self: BaseGroupChat, *args: Any, **kwargs: Any) -> None:
        built(self, *args, **kwargs)
        factory = getattr(self, "_message_factory", None)
        if factory is not None and holds_moot_team(getattr(self, "_participants", ())):
            for message_type in MESSAGE_TYPES:
                if not factory.is_registered(message_type):
                    factory.register(message_type)

    setattr(__init__, _MARK, True)
    return __init__


def holds_moot_team(participants: Iterable[object]) -> bool:
    """Whether a moot team speaks through one of ``participants``, at any depth."""
    for participant in participants:
        if isinstance(participant, MootTeam):
            return True
        inner = getattr(participant, "_team", None) if isinstance(participant, SocietyOfMindAgent) else None
        if inner is not None and holds_moot_team([inner]):
            return True
        if isinstance(participant, BaseGroupChat) and holds_moot_team(getattr(participant, "_participants", ())):
            return True
    return False
