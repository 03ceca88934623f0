"""Validates request bodies against the vendors' own request types.

Each argument is a folder of recorded requests: one JSON file per request,
{"path": "/v1/messages", "body": {...}}. The body is checked against the request
type of the official SDK for its endpoint (openai: chat.completions and
responses; anthropic: messages), with unknown keys refused at every level: a key
the vendor's type does not name is a key the real API may refuse.

Also checks the conversation rules the APIs enforce beyond the types (a user turn first,
every tool call answered right after it).

Prints one line per body that does not match and exits 1; "N passed, 0 failed"
when all match. The SDKs come from .ci/run (pip install --target .ci/cache/py).
"""

import inspect
import json
import pkgutil
import sys
import importlib
from pathlib import Path

from pydantic import ConfigDict, TypeAdapter, ValidationError
from typing_extensions import is_typeddict

import anthropic.types
import openai.types


def forbid_extra_keys(package):
    """Every TypedDict of the SDK's types refuses keys it does not name."""
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # a module needing an optional extra: not a request type
            continue
        for _, value in inspect.getmembers(module):
            if is_typeddict(value):
                value.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


forbid_extra_keys(openai.types)
forbid_extra_keys(anthropic.types)

from anthropic.types.message_create_params import (  # noqa: E402
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from openai.types.chat.completion_create_params import (  # noqa: E402
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.responses.response_create_params import (  # noqa: E402
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)

TYPES = {
    "chat/completions": (CompletionCreateParamsStreaming, CompletionCreateParamsNonStreaming),
    "messages": (MessageCreateParamsStreaming, MessageCreateParamsNonStreaming),
    "responses": (ResponseCreateParamsStreaming, ResponseCreateParamsNonStreaming),
}
ADAPTERS = {key: tuple(TypeAdapter(t) for t in pair) for key, pair in TYPES.items()}


def known_exceptions(key, body):
    """Where our body departs from the SDK's type on purpose, made to match, with why.

    Responses: a reasoning item sent back has no `id`. The SDK's type requires one, but with
    `store: false` the API refuses an id it did not store ("Items are not persisted when
    `store` is set to false"); the item's `encrypted_content` carries it instead. Only that
    case is excused: a reasoning item without encrypted content, or with `store` not false,
    is judged as it is.
    """
    if key != "responses" or body.get("store") is not False:
        return body
    body = json.loads(json.dumps(body))
    for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
        if (
            isinstance(item, dict)
            and item.get("type") == "reasoning"
            and "id" not in item
            and item.get("encrypted_content")
        ):
            item["id"] = "rs_not_stored"
    return body


def conversation_rules(key, body):
    """The conversation rules each API enforces beyond the types (issue 33 point 1): what is
    wrong, or None."""
    if key == "messages":
        messages = body.get("messages", [])
        if messages and messages[0].get("role") != "user":
            return "the conversation does not start with a user message"
        for index, message in enumerate(messages):
            content = message.get("content")
            uses = [
                part["id"]
                for part in (content if isinstance(content, list) else [])
                if isinstance(part, dict) and part.get("type") == "tool_use"
            ]
            if not uses:
                continue
            following = messages[index + 1]["content"] if index + 1 < len(messages) else []
            answered = {
                part.get("tool_use_id")
                for part in (following if isinstance(following, list) else [])
                if isinstance(part, dict) and part.get("type") == "tool_result"
            }
            missing = [use for use in uses if use not in answered]
            if missing:
                return f"tool_use {missing} not answered by a tool_result in the next message"
    elif key == "chat/completions":
        messages = body.get("messages", [])
        for index, message in enumerate(messages):
            calls = [call["id"] for call in message.get("tool_calls") or []]
            answers = []
            for later in messages[index + 1 :]:
                if later.get("role") != "tool":
                    break
                answers.append(later.get("tool_call_id"))
            missing = [call for call in calls if call not in answers]
            if missing:
                return f"tool calls {missing} not answered by tool messages right after"
    elif key == "responses":
        items = body.get("input") if isinstance(body.get("input"), list) else []
        calls = {i.get("call_id") for i in items if i.get("type") == "function_call"}
        outputs = {i.get("call_id") for i in items if i.get("type") == "function_call_output"}
        if calls - outputs:
            return f"function calls {sorted(calls - outputs)} have no function_call_output"
    return None


def endpoint(path):
    for key in TYPES:
        if path.rstrip("/").endswith(key):
            return key
    return None


def main(folders):
    passed, failed = 0, 0
    for folder in folders:
        for file in sorted(Path(folder).glob("*.json")):
            record = json.loads(file.read_text())
            key = endpoint(record.get("path", ""))
            if key is None:
                continue
            body = known_exceptions(key, record["body"])
            streaming, whole = ADAPTERS[key]
            adapter = streaming if body.get("stream") else whole
            broken = conversation_rules(key, body)
            if broken:
                failed += 1
                print(f"{file.name} ({key}): {broken}")
                continue
            try:
                adapter.validate_python(body)
                passed += 1
            except ValidationError as error:
                failed += 1
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()[:5]
                )
                print(f"{file.name} ({key}): {problems}")
                for error in error.errors()[:1]:
                    # A union's message names every member: show the item itself too.
                    item = body
                    for part in error["loc"]:
                        if isinstance(item, dict) and part in item:
                            item = item[part]
                        elif isinstance(item, list) and isinstance(part, int) and part < len(item):
                            item = item[part]
                    print(f"  the part at fault: {json.dumps(item)[:400]}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
