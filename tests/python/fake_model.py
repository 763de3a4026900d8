"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code
CLI in tests (stdlib only).

Point the CLI at it with ``ANTHROPIC_BASE_URL=model.url`` (and any ``ANTHROPIC_API_KEY``).
The CLI (2.1.197, observed) makes these requests:

* HEAD / once at startup (a fire-and-forget preconnect): answered 200.
* the *conversation*: POST /v1/messages?beta=true, ``stream: true``, carrying the
  system prompt and a non-empty ``tools`` list (built-ins plus ``mcp__<server>__<tool>``),
  once for the user's typed prompt and once more per tool round trip. These are answered
  from the script, one step per request, in order.
* *side requests*, never consuming a script step: title generation on the first prompt
  (``tools: []``, ``output_config.format`` = JSON schema ``{title}``; answered with
  schema-shaped JSON), the quota probe (``max_tokens: 1``, "quota"; only for claude.ai
  logins, not API keys), WebFetch summaries and the like (no tools: answered "OK"),
  POST /v1/messages/count_tokens (answered ``{"input_tokens": n}``).
  A request is conversation iff it carries a non-empty ``tools`` list, ``max_tokens`` > 1
  and no ``output_config.format``.
* any other path: 404 ``{"type": "error", "error": {"type": "not_found_error", ...}}``.

The newest CLI (2.1.332, observed) defers MCP tools: its conversation requests carry
only the built-ins, ``ToolSearch`` and a ``DeferredToolPlaceholder`` (``defer_loading``),
and name every ``mcp__<server>__<tool>`` in a system-reminder ("The following deferred
tools are now available via ToolSearch…", one name a line; see ``deferred_tools``). A
model loads one with ``ToolSearch {"query": "select:<name>"}`` and calls it in its next
turn; ``mcp(name, args)`` is a reply that does whichever the CLI needs.

Interactive mode asks before running an MCP tool; pre-approve it with
``$CLAUDE_CONFIG_DIR/settings.json`` = ``{"permissions": {"allow": ["mcp__demo"]}}``
(whole server) or ``["mcp__demo__echo"]`` (one tool), or ``--allowedTools
mcp__demo__echo``. ``--dangerously-skip-permissions`` exits as root unless IS_SANDBOX=1.

Usage::

    from fake_model import FakeModel, tool_use, text

    with FakeModel([
        # user's prompt (the first conversation request whose last user turn contains
        # "please echo") -> ask for a tool call
        {"on": "prompt", "contains": "please echo",
         "reply": tool_use("mcp__demo__echo", {"text": "hi"})},
        # the request carrying that tool's result -> finish the turn
        {"on": "tool_result", "reply": text("done")},
    ]) as model:
        env["ANTHROPIC_BASE_URL"] = model.url
        ... start claude under a pty, type "please echo" + "\\r" ...
        req = model.wait_for(lambda: model.tool_results(), timeout=60)
        assert "mcp__demo__echo" in model.tool_names()
        assert model.script_done()

Steps are consumed in order; a conversation request that does not match the next step
gets the default reply (``text("OK")``), so stray turns never stall the CLI. A step's
``on`` is ``"prompt"`` (last user turn has no tool_result), ``"tool_result"`` (last user
turn has a tool_result, optionally ``"tool"`` = name of the tool that was used),
``"any"``, or a callable ``f(body) -> bool``. ``reply`` is a list of content blocks
(``text(...)``, ``tool_use(...)``, combinable with ``+``); the stop_reason is
``tool_use`` when any block is a tool_use, else ``end_turn``. A callable ``reply``
gets the body and returns blocks, or ``(blocks, steps)`` to run ``steps`` next (before
the rest of the script).

Inspect with ``.requests`` (every JSON body, in arrival order, each with the extra key
``"_path"``), ``.conversation()`` (only conversation bodies), ``.tool_names(i)``,
``.tool_results()`` (all tool_result blocks seen), ``.wait_for(pred, timeout)``.
"""

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FakeModel", "deferred_tools", "is_conversation", "mcp", "mcp_calls", "offered_tools", "text", "tool_use"]

DEFAULT_MODEL = "claude-sonnet-4-5-20250929"


def text(s):
    """A reply consisting of one text block."""
    return [{"type": "text", "text": s}]


def tool_use(name, input=None, id=None):
    """A reply consisting of one tool_use block (id generated if not given)."""
    return [
        {
            "type": "tool_use",
            "id": id or "toolu_" + uuid.uuid4().hex[:24],
            "name": name,
            "input": input or {},
        }
    ]


DEFERRED = "deferred tools are now available via ToolSearch"


def offered_tools(body):
    """Names of the tools a request offers with their schemas (not ``defer_loading``)."""
    return {t.get("name") for t in body.get("tools") or [] if not t.get("defer_loading")}


def deferred_tools(body):
    """The tool names the newest CLI lists in its "deferred tools are now available via
    ToolSearch" reminder (in any message of the request; empty when there is none)."""
    names = set()
    for m in _messages(body):
        content = m.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content or []
        for b in blocks:
            said = (b.get("text") or "") if isinstance(b, dict) else ""
            if DEFERRED not in said:
                continue
            # The intro ends with a colon; one name a line follows, up to a blank line.
            listing = said.split(DEFERRED, 1)[1].split(":\n", 1)[1]
            names |= {line.strip() for line in listing.split("\n\n", 1)[0].splitlines() if line.strip()}
    return names


def mcp(name, args=None, id=None, server="ide-bridge"):
    """A reply that calls the MCP tool ``mcp__<server>__<name>``: directly when the
    request offers it, else (the newest CLI defers MCP tools) ``ToolSearch`` with
    ``select:<that name>`` first, and the call as the reply to its result."""
    return mcp_calls(name, [(id, args)], server)


def mcp_calls(name, calls, server="ide-bridge"):
    """``mcp`` asking for several calls of the tool in one turn (``calls``: (id, args)
    pairs, an id None for a generated one)."""
    full = f"mcp__{server}__{name}"
    call = [b for call_id, args in calls for b in tool_use(full, args, call_id)]

    def reply(body):
        if full in offered_tools(body):
            return call
        return tool_use("ToolSearch", {"query": f"select:{full}"}), [
            {"on": "tool_result", "tool": "ToolSearch", "reply": call}
        ]

    return reply


def _messages(body):
    return body.get("messages") or []


def _last_user_blocks(body):
    for m in reversed(_messages(body)):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return [{"type": "text", "text": c}]
            return [b for b in c or [] if isinstance(b, dict)]
    return []


def _text_of(blocks):
    out = []
    for b in blocks:
        if b.get("type") == "text":
            out.append(b.get("text", ""))
        elif b.get("type") == "tool_result":
            c = b.get("content")
            if isinstance(c, str):
                out.append(c)
            else:
                out.extend(x.get("text", "") for x in c or [] if isinstance(x, dict))
    return "\n".join(out)


def is_conversation(body):
    """True for the CLI's main-loop request (the one that carries the tools)."""
    if not isinstance(body, dict) or body.get("_path") != "/v1/messages":
        return False
    if not body.get("tools"):
        return False
    if (body.get("max_tokens") or 0) <= 1:
        return False
    return not (body.get("output_config") or {}).get("format")


def _tool_use_names(body):
    """tool_use id -> name, over the assistant turns of a request."""
    names = {}
    for m in _messages(body):
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    names[b.get("id")] = b.get("name")
    return names


def _matches(step, body):
    on = step.get("on", "any")
    last = _last_user_blocks(body)
    results = [b for b in last if b.get("type") == "tool_result"]
    if callable(on):
        ok = on(body)
    elif on == "prompt":
        ok = not results
    elif on == "tool_result":
        ok = bool(results)
        if ok and step.get("tool"):
            names = _tool_use_names(body)
            ok = any(names.get(r.get("tool_use_id")) == step["tool"] for r in results)
    elif on == "any":
        ok = True
    else:
        raise ValueError(f"unknown step kind {on!r}")
    if ok and step.get("contains") is not None:
        ok = step["contains"] in _text_of(last)
    return ok


class FakeModel:
    def __init__(self, script=(), default_reply=None, host="127.0.0.1"):
        self.script = [dict(s) for s in script]
        self.default_reply = default_reply or text("OK")
        self.requests = []  # every body, with "_path" (and "_headers" for debugging)
        self.log = []  # (path, kind, step index or None)
        self._cond = threading.Condition()
        self._next = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send_json(self, status, obj, extra=()):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _not_found(self):
                self._send_json(
                    404,
                    {
                        "type": "error",
                        "error": {"type": "not_found_error", "message": "Not found"},
                    },
                )

            def do_GET(self):
                model._record_other("GET", self.path)
                self._not_found()

            def do_HEAD(self):
                model._record_other("HEAD", self.path)
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b""
                path = self.path.split("?", 1)[0]
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf8", "replace")}
                if not isinstance(body, dict):
                    body = {"_raw": body}
                body["_path"] = path
                body["_headers"] = dict(self.headers.items())
                if path == "/v1/messages/count_tokens":
                    model._record(body, "count_tokens", None)
                    est = max(1, len(raw) // 4)
                    return self._send_json(200, {"input_tokens": est})
                if path != "/v1/messages":
                    model._record(body, "other", None)
                    return self._not_found()
                blocks, _kind, _idx = model._answer(body)
                msg = model._message(body, blocks)
                if body.get("stream"):
                    self._stream(msg)
                else:
                    self._send_json(200, msg)

            def _stream(self, msg):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True

                def ev(name, data):
                    self.wfile.write(
                        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                    )

                start = dict(msg, content=[], stop_reason=None)
                start["usage"] = dict(msg["usage"], output_tokens=1)
                ev("message_start", {"type": "message_start", "message": start})
                for i, b in enumerate(msg["content"]):
                    if b["type"] == "text":
                        ev(
                            "content_block_start",
                            {
                                "type": "content_block_start",
                                "index": i,
                                "content_block": {"type": "text", "text": ""},
                            },
                        )
                        ev(
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": i,
                                "delta": {"type": "text_delta", "text": b["text"]},
                            },
                        )
                    elif b["type"] == "tool_use":
                        ev(
                            "content_block_start",
                            {
                                "type": "content_block_start",
                                "index": i,
                                "content_block": {
                                    "type": "tool_use",
                                    "id": b["id"],
                                    "name": b["name"],
                                    "input": {},
                                },
                            },
                        )
                        ev(
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": i,
                                "delta": {
                                    "type": "input_json_delta",
                                    "partial_json": json.dumps(b["input"]),
                                },
                            },
                        )
                    ev("content_block_stop", {"type": "content_block_stop", "index": i})
                ev(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {
                            "stop_reason": msg["stop_reason"],
                            "stop_sequence": None,
                        },
                        "usage": {"output_tokens": msg["usage"]["output_tokens"]},
                    },
                )
                ev("message_stop", {"type": "message_stop"})
                self.wfile.flush()

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self._thread = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- answering -------------------------------------------------------------------
    def _record(self, body, kind, idx):
        with self._cond:
            self.requests.append(body)
            self.log.append((body.get("_path"), kind, idx))
            self._cond.notify_all()

    def _record_other(self, method, path):
        self._record({"_path": path, "_method": method}, "other", None)

    def _answer(self, body):
        if not is_conversation(body):
            blocks = self._side_reply(body)
            self._record(body, "side", None)
            return blocks, "side", None
        with self._cond:
            idx = None
            blocks = self.default_reply
            if self._next < len(self.script) and _matches(self.script[self._next], body):
                idx = self._next
                self._next += 1
                reply = self.script[idx]["reply"]
                blocks = reply(body) if callable(reply) else reply
                if isinstance(blocks, tuple):
                    blocks, steps = blocks
                    self.script[self._next : self._next] = [dict(step) for step in steps]
            self.requests.append(body)
            self.log.append((body["_path"], "conversation", idx))
            self._cond.notify_all()
        if callable(blocks):
            blocks = blocks(body)
        return blocks, "conversation", idx

    def _side_reply(self, body):
        fmt = (body.get("output_config") or {}).get("format") or {}
        if fmt.get("type") == "json_schema":
            props = (fmt.get("schema") or {}).get("properties") or {}
            obj = {k: _dummy(v) for k, v in props.items()}
            return text(json.dumps(obj))
        return text("OK")

    def _message(self, body, blocks):
        blocks = [dict(b) for b in blocks]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        if (body.get("max_tokens") or 0) <= 1 and stop == "end_turn":
            stop = "max_tokens"
        return {
            "id": "msg_" + uuid.uuid4().hex[:24],
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or DEFAULT_MODEL,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    # -- inspection ------------------------------------------------------------------
    def conversation(self):
        with self._cond:
            return [b for b in self.requests if is_conversation(b)]

    def tool_names(self, i=0):
        """Names of the tools in the i-th conversation request (default: the first)."""
        conv = self.conversation()
        if not conv:
            return []
        return [t.get("name") for t in conv[i].get("tools") or []]

    def tool_results(self):
        """Every distinct tool_result block seen in conversation requests."""
        seen, out = set(), []
        for body in self.conversation():
            for m in _messages(body):
                if m.get("role") != "user" or not isinstance(m.get("content"), list):
                    continue
                for b in m["content"]:
                    if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") not in seen:
                        seen.add(b.get("tool_use_id"))
                        out.append(b)
        return out

    @staticmethod
    def result_text(block):
        c = block.get("content")
        if isinstance(c, str):
            return c
        return "\n".join(x.get("text", "") for x in c or [] if isinstance(x, dict))

    def script_done(self):
        with self._cond:
            return self._next >= len(self.script)

    def wait_for(self, pred, timeout=60):
        """Wait until pred() is truthy (re-checked on every request); return its value."""
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                value = pred()
                if value:
                    return value
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"condition not met within {timeout}s; requests: {self.log}"
                    )
                self._cond.wait(min(left, 0.5))


def _dummy(schema):
    t = (schema or {}).get("type")
    if t == "string":
        return "Test session"
    if t in ("integer", "number"):
        return 0
    if t == "boolean":
        return False
    if t == "array":
        return []
    if t == "object":
        return {}
    return None
