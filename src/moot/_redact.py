"""Secrets out of every error text moot stores, traces or prints.

Providers echo credentials back in error bodies (a 401 that quotes the key
it refused), and exception messages end up in the run store, traces and
the terminal. ``redact`` replaces what looks like a credential: bearer
tokens, ``sk-``-style API keys, ``key=...``/``"api_key": "..."`` pairs, and
the exact values of this process's secret-looking environment variables
(``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``).
"""

from __future__ import annotations

import os
import re

__all__ = ["REDACTED", "redact"]

REDACTED = "[redacted]"
_PATTERNS = (
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\b(?:sk|pk|rk|xox[abpr]|ghp|gho|github_pat|hf|AIza)[-_A-Za-z0-9]{12,}"),
    re.compile(
        r"(?i)([\"']?(?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|token)[\"']?\s*[:=]\s*[\"']?)"
        r"[^\s\"',;}&]{6,}"
    ),
)
_SECRET_NAMES = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")


def redact(text: str | None) -> str | None:
    """``text`` with anything that looks like a credential replaced by ``[redacted]``."""
    if not text:
        return text
    for value in _secret_values():
        text = text.replace(value, REDACTED)
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _PATTERNS[1].sub(REDACTED, text)
    return _PATTERNS[2].sub(lambda m: f"{m.group(1)}{REDACTED}", text)


def _secret_values() -> list[str]:
    values = {v for k, v in os.environ.items() if _SECRET_NAMES.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)
