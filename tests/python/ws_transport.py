"""A WebSocket transport for the official MCP Python SDK's ClientSession that sends
the bridge's auth header. It mirrors mcp.client.websocket.websocket_client (mcp 1.x),
which cannot send headers. Like a well-behaved client it waits and retries when the
bridge answers 429 (connections too close together)."""

import json
from contextlib import asynccontextmanager

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus


async def open_retrying_429(url, headers, within=10.0):
    deadline = anyio.current_time() + within
    while True:
        try:
            return await connect(url, subprotocols=["mcp"], additional_headers=headers)
        except InvalidStatus as exc:
            if exc.response.status_code != 429 or anyio.current_time() > deadline:
                raise
            await anyio.sleep(0.05)


@asynccontextmanager
async def authenticated_websocket(url, token, extra_headers=None):
    headers = {"x-claude-code-ide-authorization": token, **(extra_headers or {})}
    read_writer, read_stream = anyio.create_memory_object_stream(0)
    write_stream, write_reader = anyio.create_memory_object_stream(0)
    async with await open_retrying_429(url, headers) as ws:

        async def reader():
            async with read_writer:
                async for raw in ws:
                    try:
                        await read_writer.send(SessionMessage(types.JSONRPCMessage.model_validate_json(raw)))
                    except ValidationError as exc:
                        await read_writer.send(exc)

        async def writer():
            async with write_reader:
                async for message in write_reader:
                    payload = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)
                    await ws.send(json.dumps(payload))

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            yield read_stream, write_stream, ws
            tg.cancel_scope.cancel()
