"""A ``create_stream`` for clients that answer in one piece."""

from __future__ import annotations

from moot.models._request import Request, RequestClient, Stream

__all__ = ["WholeReplyStream"]


class WholeReplyStream(RequestClient):
    """Stream the whole reply as one chunk, then the result, as AutoGen's streaming contract expects.

    The embedded model, scripted models and metering wrappers cannot stream
    (or must not, to see every token); AutoGen agents that stream still work with them.
    Put it before ``DelegatingClient`` among a wrapper's bases, so it takes precedence.
    """

    async def _stream(self, request: Request) -> Stream:
        """What ``create`` answers (a subclass's own ``create`` included), text first when it is text."""
        result = await request.send(self)
        if isinstance(result.content, str):
            yield result.content
        yield result
