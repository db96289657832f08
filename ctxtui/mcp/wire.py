"""The SDK's stdio transport, with one repair: a message whose JSON escapes a lone surrogate.

JSON may write any UTF-16 code unit as `\\uXXXX`, and a client can send half of a surrogate
pair on its own (`"\\udcff"`: a file name's odd byte, kept by Python as a surrogate and
escaped by `json.dumps`). The SDK's reader (mcp/server/stdio.py, `stdin_reader`) validates
each line with pydantic, whose JSON parser refuses such an escape ("lone leading surrogate
in hex escape"); the reader hands the ValidationError on instead of a message, and the
dispatcher, given no observer for it (mcp/shared/jsonrpc_dispatcher.py, `_dispatch`), logs
it at debug level and drops it. The request gets no answer and its client waits forever.

ctxtui's server (ctxtui.mcp.server) serves as the SDK's `MCPServer.run_stdio_async` does, on
the SDK's own `stdio_server` (its reader, its claim of stdin and stdout), with its read
stream wrapped in `SurrogatesReplaced`:
a line that failed only for a lone surrogate is read again with Python's JSON reader, which
keeps the surrogate, and each one becomes U+FFFD, as every other odd byte on the wire does
(the SDK decodes stdin with errors="replace") and as the command line reads its arguments.
The request is then answered like any other.

Every other line the reader refused is answered as JSON-RPC 2.0 says, on the write stream,
and the next line is read: a line that is not JSON gets a parse error (-32700, id null), JSON
that is not a message (`[1]`, `{"method": 5}`) an invalid request error (-32600, with its id
when it has one, else null). The SDK would drop either and its client would wait for ever.
A blank line is no message and gets no answer. Messages pass through untouched.
"""

from __future__ import annotations

import json
import re
from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

_SURROGATE = re.compile("[\ud800-\udfff]")


class SurrogatesReplaced:
    """The transport's read stream (messages, and the exceptions of lines it could not read),
    where a line refused only for a lone surrogate escape comes as its message, and a line
    that is no message is answered on `write_stream` with its error and skipped."""

    def __init__(self, stream: Any, write_stream: Any) -> None:
        self._stream = stream
        self._write_stream = write_stream

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item (the dispatcher asks the stream for it)."""
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._answered(await self._stream.receive())
            if item is not None:
                return item

    async def _answered(
        self, item: SessionMessage | Exception
    ) -> SessionMessage | Exception | None:
        """`item` repaired, or None once a line that is no message is answered (or blank)."""
        item = repaired(item)
        if not isinstance(item, ValidationError):
            return item
        error = refusal(item)
        if error is not None:
            await self._write_stream.send(SessionMessage(error))
        return None

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> SurrogatesReplaced:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        while True:
            item = await self._answered(await self._stream.__anext__())
            if item is not None:
                return item

    async def __aenter__(self) -> SurrogatesReplaced:
        await self._stream.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        done: bool | None = await self._stream.__aexit__(exc_type, exc_val, exc_tb)
        return done


def repaired(item: SessionMessage | Exception) -> SessionMessage | Exception:
    """The message of a line pydantic refused as invalid JSON that Python's JSON reader
    reads, holding lone surrogates (each now U+FFFD); any other item as it came."""
    if not isinstance(item, ValidationError):
        return item
    errors = item.errors()
    if len(errors) != 1 or errors[0]["type"] != "json_invalid":
        return item
    line = errors[0].get("input")
    if not isinstance(line, str | bytes):
        return item
    try:
        data = json.loads(line)
    except ValueError:
        return item  # not JSON for Python either: a broken line, left to the SDK
    cleaned, replaced = _replace_surrogates(data)
    if not replaced:
        return item  # refused for another reason (NaN...): not ours to accept
    try:
        message = types.jsonrpc_message_adapter.validate_python(cleaned, by_name=False)
    except ValidationError:
        return item
    return SessionMessage(message)


def refusal(error: ValidationError) -> JSONRPCError | None:
    """The JSON-RPC error that answers the line the SDK's reader refused with `error`: a parse
    error for a line that is not JSON, an invalid request for JSON that is not a message (with
    the object's id when it has a valid one); None for a blank line."""
    problems = error.errors(include_url=False)
    if len(problems) == 1 and problems[0]["type"] == "json_invalid":
        line = problems[0].get("input")
        if isinstance(line, bytes):
            line = line.decode("utf-8", "replace")
        if not isinstance(line, str) or not line.strip():
            return None
        try:
            value = json.loads(line)  # JSON pydantic refused: a lone surrogate escape
        except ValueError as cause:
            return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({cause})")
    else:
        value = next(
            (
                problem.get("input")
                for problem in problems
                # the input of these is the whole object, not one of its fields
                if len(problem["loc"]) == 1
                or (problem["type"] == "missing" and len(problem["loc"]) == 2)
            ),
            None,
        )
    found = value.get("id") if isinstance(value, dict) else None
    valid = isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool))
    return _error(found if valid else None, INVALID_REQUEST, INVALID_REQUEST_MESSAGE)


INVALID_REQUEST_MESSAGE = (
    "Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (a request is an object "
    'with "jsonrpc": "2.0", an id, a string "method" and, optionally, object "params")'
)


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def _replace_surrogates(data: Any) -> tuple[Any, bool]:
    """`data` with every surrogate in its strings and keys as U+FFFD, and whether any was."""
    if isinstance(data, str):
        cleaned = _SURROGATE.sub("\ufffd", data)
        return cleaned, cleaned != data
    if isinstance(data, list):
        pairs = [_replace_surrogates(value) for value in data]
        return [value for value, _ in pairs], any(found for _, found in pairs)
    if isinstance(data, dict):
        found = False
        result: dict[str, Any] = {}
        for key, value in data.items():
            new_key, in_key = _replace_surrogates(key)
            new_value, in_value = _replace_surrogates(value)
            result[new_key] = new_value
            found = found or in_key or in_value
        return result, found
    return data, False
