"""What the model reads of an MCP tool's result: text joined, structured content without text as
JSON, binary content refused in words, no content at all said in words, an `isError` result raised
as ToolError."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from react_text import prompting

if TYPE_CHECKING:
    import mcp.types

__all__ = ["ToolError", "result_text"]


class ToolError(Exception):
    """An MCP tool reported failure (`isError`); the message is the server's text."""


def result_text(name: str, result: mcp.types.CallToolResult) -> str:
    """What the model reads of a tool's result; raises ToolError for an `isError` result."""
    import mcp.types as types

    pieces: list[str] = []
    texts = 0
    for block in result.content:
        if isinstance(block, types.TextContent):
            pieces.append(block.text)
            texts += 1
        elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
            pieces.append(block.resource.text)
            texts += 1
        elif isinstance(block, types.ResourceLink):
            pieces.append(f"{block.name}: {block.uri}" + (f" ({block.description})" if block.description else ""))
        else:
            pieces.append(prompting.render("corrections/tool_bad_result", tool=name, kind=_binary_kind(block)))
    if result.structured_content is not None and not texts:
        # The text blocks, when there are any, already carry it (the spec asks servers to send both).
        pieces.insert(0, json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(pieces)
    if result.is_error:
        raise ToolError(text or "the server reported an error and gave no message")
    if not pieces:  # no content at all: say so, rather than show an empty observation
        return prompting.render("corrections/tool_no_result", tool=name, kind="no content")
    return text


def _binary_kind(block: object) -> str:
    """In words: "an image (image/png, 12 KB)"."""
    import mcp.types as types

    if isinstance(block, types.ImageContent | types.AudioContent):
        noun, mime, data = (
            ("an image" if isinstance(block, types.ImageContent) else "audio"),
            block.mime_type,
            block.data,
        )
    elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents):
        noun, mime, data = "a file", block.resource.mime_type or "binary", block.resource.blob
    else:
        return f"content of type {getattr(block, 'type', type(block).__name__)!r}"
    size = len(data) * 3 // 4 - data[-2:].count("=")  # base64
    amount = f"{size} bytes" if size < 1024 else f"{size / 1024:.0f} KB"
    return f"{noun} ({mime}, {amount})"
