"""What a bridge costs while it waits: the release binary's size (by section), the
resident memory of a fresh bridge on a small workspace (anonymous and file-backed), and
what idle agents add (N WebSocket agents connected and initialized, then left alone).
Several builds side by side, in interleaved rounds, so that the machine's noise hits
each alike.

    .venv-test/bin/python benches/footprint.py NAME=BINARY [NAME=BINARY ...] \\
        [--rounds 3] [--agents 50]

Each round starts each build once (a fresh workspace and config dir), waits 5 s after
its lock file (`--settle`: start-up's pages are given back 3 s after it), reads /proc/<pid>/status, connects the agents (`server.max_sessions` and
the connection pacing raised for them), waits 1 s, reads it again, and stops it."""

import argparse
import asyncio
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

from websockets.asyncio.client import connect

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from conftest import start_bridge  # the tests' own start-up helper


def status(pid):
    fields = {}
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            fields[key] = int(value.split()[0])
    return fields


def sections(binary):
    out = subprocess.run(["size", "-A", binary], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            found[parts[0]] = int(parts[1])
    return found


def start(binary, tmp, agents):
    ws = tmp / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.rs").write_text("fn main() {}\n")
    (ws / "README.md").write_text("# small\n")
    os.environ["BRIDGE_BIN"] = binary
    return start_bridge(
        ws, tmp / "claude", subprocess.DEVNULL, "--log-level", "warn",
        "--set", f"sessions.max_sessions={agents + 5}", "--set", "server.min_connect_interval_ms=0",
    )


async def connect_agents(port, token, n):
    sockets = []
    for i in range(n):
        ws = await connect(
            f"ws://127.0.0.1:{port}/",
            subprotocols=["mcp"],
            additional_headers={"x-claude-code-ide-authorization": token},
            max_size=None,
        )
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": f"idle-agent-{i}", "version": "1"}}}))
        json.loads(await ws.recv())
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        sockets.append(ws)
    return sockets


async def measure(binary, agents, settle):
    with tempfile.TemporaryDirectory(prefix="ide-bridge-footprint-") as tmp:
        proc, port, token = start(binary, pathlib.Path(tmp), agents)
        try:
            await asyncio.sleep(settle)
            idle = status(proc.pid)
            sockets = await connect_agents(port, token, agents)
            await asyncio.sleep(1.0)
            busy = status(proc.pid)
            assert len(sockets) == agents  # held open until measured
            return idle, busy
        finally:
            proc.kill()
            proc.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("builds", nargs="+", help="NAME=BINARY")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds from the lock file to the idle reading")
    args = parser.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    results = {name: [] for name, _ in builds}
    for _ in range(args.rounds):
        for name, binary in builds:
            results[name].append(asyncio.run(measure(binary, args.agents, args.settle)))
    print("| build | file MB | .text MB | .rodata MB | .eh_frame MB |")
    print("|---|---:|---:|---:|---:|")
    for name, binary in builds:
        found = sections(binary)
        mb = [f"{found.get(k, 0) / 1e6:.2f}" for k in (".text", ".rodata", ".eh_frame")]
        print(f"| {name} | {os.path.getsize(binary) / 1e6:.2f} | {' | '.join(mb)} |")
    print()
    print(f"| build | idle RSS MiB | of it anonymous | of it file-backed | with {args.agents} idle agents | per agent KiB | of it anonymous |")
    print("|---|---|---|---|---|---|---|")
    span = lambda xs: f"{min(xs):.1f}–{max(xs):.1f}" if min(xs) != max(xs) else f"{xs[0]:.1f}"
    for name, _ in builds:
        rows = results[name]
        idle = [r[0]["VmRSS"] / 1024 for r in rows]
        anon = [r[0]["RssAnon"] / 1024 for r in rows]
        file = [r[0]["RssFile"] / 1024 for r in rows]
        busy = [r[1]["VmRSS"] / 1024 for r in rows]
        per = [(r[1]["VmRSS"] - r[0]["VmRSS"]) / args.agents for r in rows]
        per_anon = [(r[1]["RssAnon"] - r[0]["RssAnon"]) / args.agents for r in rows]
        print(f"| {name} | {span(idle)} | {span(anon)} | {span(file)} | {span(busy)} | {statistics.median(per):.0f} ({span(per)}) | {statistics.median(per_anon):.0f} ({span(per_anon)}) |")


if __name__ == "__main__":
    sys.exit(main())
