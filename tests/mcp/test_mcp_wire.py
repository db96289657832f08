"""ctxtui.mcp.wire: which lines the SDK's reader refused are read again, and which are not."""

from __future__ import annotations

import pytest
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, JSONRPCRequest, jsonrpc_message_adapter
from pydantic import ValidationError

from ctxtui.mcp.wire import refusal, repaired


def refused(line: str) -> ValidationError:
    """What the SDK's stdin reader hands on for a line it cannot read."""
    with pytest.raises(ValidationError) as raised:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    return raised.value


def test_a_lone_surrogate_escape_becomes_u_fffd_in_keys_and_values() -> None:
    line = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"rank_files",'
        '"arguments":{"question":"caf\\udce9 \\ud83d\\ude00","k\\ud800":["\\udfff"]}}}\n'
    )
    item = repaired(refused(line))
    assert isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCRequest)
    assert item.message.id == 7
    assert item.message.params == {
        "name": "rank_files",
        "arguments": {"question": "caf\ufffd \U0001f600", "k\ufffd": ["\ufffd"]},
    }


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":1,"method":"ping"',  # cut short: not JSON for Python either
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\u12"}}',  # a bad escape
        '{"jsonrpc":"1.0","id":1,"method":"ping","params":{"x":"\\udcff"}}',  # no JSON-RPC 2.0
    ],
)
def test_other_refused_lines_pass_through_as_they_came(line: str) -> None:
    error = refused(line)
    assert repaired(error) is error


def test_a_message_or_another_exception_passes_through() -> None:
    message = SessionMessage(
        jsonrpc_message_adapter.validate_json('{"jsonrpc":"2.0","method":"x"}')
    )
    other = RuntimeError("closed")
    assert repaired(message) is message and repaired(other) is other


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        ("hello\n", PARSE_ERROR, None),
        ('{"jsonrpc":"2.0","id":1,"method":"ping"\n', PARSE_ERROR, None),  # cut short
        ('{"jsonrpc":"2.0","id":3}\n', INVALID_REQUEST, 3),  # no method
        ('{"jsonrpc":"2.0","id":"a","method":5}\n', INVALID_REQUEST, "a"),
        ('{"jsonrpc":"2.0","id":true,"method":5}\n', INVALID_REQUEST, None),  # no valid id
        ("[1]\n", INVALID_REQUEST, None),
        ("42\n", INVALID_REQUEST, None),
        ('{"jsonrpc":"1.0","id":2,"method":"ping","params":{"x":"\\udcff"}}', INVALID_REQUEST, 2),
    ],
)
def test_a_line_that_is_no_message_is_answered_with_its_json_rpc_error(
    line: str, code: int, request_id: object
) -> None:
    answer = refusal(refused(line))
    assert answer is not None
    assert (answer.id, answer.error.code) == (request_id, code)
    assert "\n" not in answer.error.message


def test_a_blank_line_gets_no_answer() -> None:
    assert refusal(refused("\n")) is None
    assert refusal(refused("  \r\n")) is None
