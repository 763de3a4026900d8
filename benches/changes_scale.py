"""Change review at scale: 5 agents write 1 000 hunks across 200 files through the
bridge's write tools; measured are the bridge's memory (RSS) before and after, the time
each write takes with its change recorded against the same write before any change set
exists (the first round of each file is the baseline's cost: same tool, same size),
and how long listing all change sets takes.

    .venv-test/bin/python benches/changes_scale.py BRIDGE_BINARY [--files 200] [--agents 5]

Each agent gets 40 files; each file gets 5 edits (a hunk each) spread over its lines.
Every write goes over its agent's own streamable-HTTP MCP session."""

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from conftest import McpOverHttp, start_bridge


def rss_kib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bridge")
    p.add_argument("--files", type=int, default=200)
    p.add_argument("--agents", type=int, default=5)
    p.add_argument("--edits", type=int, default=5)
    args = p.parse_args()
    os.environ["BRIDGE_BIN"] = args.bridge
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        ws, config = tmp / "ws", tmp / "claude"
        ws.mkdir()
        config.mkdir()
        lines = 100
        for f in range(args.files):
            (ws / f"f{f:03}.py").write_text("".join(f"v{i} = {i}\n" for i in range(lines)))
        with open(tmp / "bridge.log", "w") as log:
            proc, port, token = start_bridge(ws, config, log, "--set", "rate_limit.requests=100000",
                                             "--set", "sessions.max_sessions=20", "--log-level", "warn")
            try:
                agents = [McpOverHttp(port, token) for _ in range(args.agents)]
                time.sleep(0.5)
                rss_before = rss_kib(proc.pid)
                per_round = [[] for _ in range(args.edits)]
                started = time.monotonic()
                for e in range(args.edits):
                    for f in range(args.files):
                        agent = agents[f % args.agents]
                        line = e * (lines // args.edits)
                        t = time.monotonic()
                        r = agent.call("replaceBlock", {"filePath": f"f{f:03}.py", "oldContent": f"v{line} = {line}\n",
                                                        "newContent": f"v{line} = {line} + {e}\n"})
                        per_round[e].append((time.monotonic() - t) * 1000)
                        assert not r["result"].get("isError"), r
                wrote = time.monotonic() - started
                listing = []
                for _ in range(5):
                    t = time.monotonic()
                    r = agents[0].call("listChanges", {})
                    listing.append((time.monotonic() - t) * 1000)
                hunks = sum(len(c["hunks"]) for c in json.loads(r["result"]["content"][0]["text"])["changes"])
                rss_after = rss_kib(proc.pid)
                size = len(r["result"]["content"][0]["text"])
                for a in agents:
                    a.close()
            finally:
                proc.terminate()
                proc.wait(10)

    def p50(xs):
        return statistics.median(xs)

    print(f"{hunks} hunks in {args.files} files by {args.agents} agents, written in {wrote:.1f} s")
    print(f"write p50: first edit of each file {p50(per_round[0]):.2f} ms, last round {p50(per_round[-1]):.2f} ms "
          f"(ranges {min(per_round[0]):.2f}-{max(per_round[0]):.2f} and {min(per_round[-1]):.2f}-{max(per_round[-1]):.2f})")
    print(f"listChanges of everything: p50 {p50(listing):.1f} ms (range {min(listing):.1f}-{max(listing):.1f}), {size / 1024:.0f} KiB of JSON")
    print(f"RSS: {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB after")


if __name__ == "__main__":
    main()
