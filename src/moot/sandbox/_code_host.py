"""The sandbox process that runs the code under test, and answers requests about it; it never sees a test.

Copied into the code's throwaway work directory and run as ``python -I -B``
by :mod:`moot.sandbox._sandbox`; moot never imports it (stdlib only).

It confines itself, runs the code as a module (the *load* step, reported
with ``begin``/``end`` like a test), then lists what the module defines and
serves requests from the tester, relayed by the parent: call this, read that
attribute, iterate, take an item. Answers are plain data (``_wire.py``);
anything else stays here and is answered with a reference. Whatever the
code does to this process (patch it, exit it, print fake reports) it can
only change the values it returns: the verdict is reached elsewhere.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import linecache
import os
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's directory out
import _moot_child as child  # type: ignore[import-not-found]  # copied next to this file
import _moot_wire as wire  # type: ignore[import-not-found]

del sys.path[0]

MAX_OBJECTS = 100_000


class Objects:
    """The code's objects the tester holds references to, by id (module names for what the module defines)."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self._by_id: dict[str, Any] = {}
        self._keys: dict[int, str] = {}

    def refer(self, value: Any) -> dict[str, Any]:
        key = self._keys.get(id(value))
        if key is None or self._by_id[key] is not value:
            if len(self._by_id) >= MAX_OBJECTS:
                raise wire.WireError(f"more than {MAX_OBJECTS} objects that are not plain data")
            key = f"#{len(self._by_id)}"
            self._by_id[key], self._keys[id(value)] = value, key
        ref = {"~": "ref", "id": key, "type": _type_name(value), "repr": child.show(value)}
        return {**ref, "awaitable": True} if inspect.isawaitable(value) else ref

    def resolve(self, data: dict[str, Any]) -> Any:
        key = data.get("id")
        if key not in self._by_id:
            raise ReferenceError("the object no longer exists (the code's process was restarted after a fault)")
        return self._by_id[key]


def _type_name(value: Any) -> str:
    kind = type(value)
    return getattr(kind, "__qualname__", None) or getattr(kind, "__name__", "object")


# ------------------------------------------------------------------ requests
def _call(target: Any, message: dict[str, Any], objects: Objects) -> Any:
    """Call with the arguments the tester sent: fresh copies, so what the call does to them stays here."""
    args = wire.decode(message.get("args", []), objects.resolve)
    kwargs = {str(k): wire.decode(v, objects.resolve) for k, v in dict(message.get("kwargs", {})).items()}
    return target(*args, **kwargs)


_OPERATIONS: dict[str, Callable[[Any, dict[str, Any], Objects], Any]] = {
    "call": _call,
    "getattr": lambda target, message, _: getattr(target, str(message.get("name"))),
    "iter": lambda target, _, __: iter(target),
    "next": lambda target, _, __: next(target),
    "len": lambda target, _, __: len(target),
    "getitem": lambda target, message, objects: target[wire.decode(message.get("key"), objects.resolve)],
    "await": lambda target, _, __: asyncio.run(_awaited(target)),
}


def answer(message: dict[str, Any], objects: Objects, memory_mb: int) -> dict[str, Any]:
    """The reply to one request: the value, or how the code raised."""
    reply: dict[str, Any] = {"id": message.get("id")}
    try:
        if message.get("op") == "name":
            value = _name(objects.namespace, str(message.get("name")))
        else:
            operation = _OPERATIONS[str(message.get("op"))]
            value = operation(objects.resolve(message.get("target") or {}), message, objects)
        reply["ok"] = wire.encode(value, objects.refer)
    except MemoryError:
        message = f"memory limit of {memory_mb} MB exceeded (MemoryError)"
        reply["raised"] = {
            "outcome": "error",
            "error_type": "MemoryError",
            "message": message,
            "types": ["MemoryError"],
        }
    except BaseException as exc:  # everything the code raises is its answer, SystemExit included
        reply["raised"] = {**child.describe(exc, child.CANDIDATE), "types": _types(exc)}
    return reply


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _name(namespace: dict[str, Any], name: str) -> Any:
    """A name of the code's module, as it is now (the tests see its globals live, as an import would)."""
    if name not in namespace or (name.startswith("__") and name.endswith("__")):
        raise NameError(f"name {name!r} is not defined")
    return namespace[name]


def _types(exc: BaseException) -> list[str]:
    """The exception's class and its bases, so the tester can raise the nearest built-in one."""
    return [getattr(kind, "__name__", "") for kind in type(exc).__mro__]


# ------------------------------------------------------------------ main
def load(code: str, namespace: dict[str, Any]) -> Callable[[child.Alarm], None]:
    def body(_: child.Alarm) -> None:
        linecache.cache[child.CANDIDATE] = (len(code), None, code.splitlines(True), child.CANDIDATE)
        # dont_inherit: compiled as Python runs it alone, never under this module's ``from __future__ import
        # annotations`` (which would let ``def f(x) -> List[int]`` load without importing List)
        exec(compile(code, child.CANDIDATE, "exec", dont_inherit=True), namespace)

    return body


def exports(namespace: dict[str, Any]) -> dict[str, Any]:
    """What the module defines: each name, and for an imported module the module's name (the tester may use
    its own copy of a module it shares with tests; it never imports a name from here)."""
    shown: dict[str, Any] = {}
    for name, value in list(namespace.items()):
        if isinstance(name, str) and name.isidentifier() and not (name.startswith("__") and name.endswith("__")):
            shown[name] = _module_name(value)
    return shown


def _module_name(value: Any) -> str | None:
    if type(value) is not type(sys):
        return None
    try:
        name = getattr(value, "__name__", None)  # a module's own __getattr__ answers if it was deleted
    except BaseException:
        return None
    return name if type(name) is str and all(part.isidentifier() for part in name.split(".")) else None


def main() -> None:
    setup, isolation = child.start()
    channel = wire.Channel(int(setup["channel_fd"]))
    channel.send({"event": "ready", "isolation": isolation})
    namespace: dict[str, Any] = {"__name__": "candidate", "__file__": child.CANDIDATE, "__builtins__": builtins}
    memory_mb = int(setup["limits"]["memory_mb"])
    try:
        channel.send({"event": "begin", "step": "load"})
        loaded = child.run_step(load(setup["code"], namespace), float(setup["limits"]["test_seconds"]), "", memory_mb)
        objects = Objects(namespace)
        names = exports(namespace) if loaded["outcome"] == "passed" else {}
        child.flush()
        channel.send({"event": "end", "step": "load", **loaded, "exports": names})
        while loaded["outcome"] == "passed":
            reply = answer(channel.recv(), objects, memory_mb)
            child.flush()  # what the code printed is kept even if this process is killed later
            channel.send(reply)
    except wire.WireError:  # the parent closed the channel: the run is over
        pass
    except MemoryError:
        # This side needs almost nothing; out of memory here means the code's data still holds it all.
        os._exit(int(setup["memory_exit_code"]))
    child.finish()


if __name__ == "__main__":
    main()
