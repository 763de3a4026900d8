"""What the command sandbox costs per command: `runCommand git --version` through a
bridge whose commands run in namespaces and under Landlock (the default), through one
with Landlock alone (namespaces off, as on a kernel without unprivileged user
namespaces: `BRIDGE_TEST_NO_NAMESPACES`, so a `--features fault-injection` build), and
the same program spawned directly from Python (no bridge: the floor).

    .venv-test/bin/python benches/command_sandbox.py BRIDGE_BINARY [--calls 50] [--rounds 3]

Rounds are interleaved; reported are the p50 per set-up in each round, as ranges over
the rounds, in milliseconds."""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from conftest import McpOverHttp, start_bridge  # noqa: E402


def timed_calls(agent, calls):
    took = []
    for _ in range(calls):
        t = time.monotonic()
        r = agent.call("runCommand", {"command": "git", "args": ["--version"]})
        took.append((time.monotonic() - t) * 1000)
        assert not r["result"].get("isError"), r
    return statistics.median(took)


def direct(calls):
    took = []
    for _ in range(calls):
        t = time.monotonic()
        subprocess.run(["git", "--version"], capture_output=True, check=True)
        took.append((time.monotonic() - t) * 1000)
    return statistics.median(took)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bridge")
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    os.environ["BRIDGE_BIN"] = args.bridge
    results = {"namespaces + Landlock": [], "Landlock only": [], "direct spawn (no bridge)": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        bridges = {}
        for name, extra_env in [("namespaces + Landlock", {}), ("Landlock only", {"BRIDGE_TEST_NO_NAMESPACES": "1"})]:
            ws, config = tmp / f"ws-{len(bridges)}", tmp / f"claude-{len(bridges)}"
            ws.mkdir()
            config.mkdir()
            saved = dict(os.environ)
            os.environ.update(extra_env)
            log = open(tmp / f"bridge-{len(bridges)}.log", "w")
            proc, port, token = start_bridge(ws, config, log, "--set", "rate_limit.requests=100000",
                                             "--set", "commands.run_unsandboxed=true", "--log-level", "warn")
            os.environ.clear()
            os.environ.update(saved)
            bridges[name] = (proc, McpOverHttp(port, token))
        try:
            for _ in range(args.rounds):
                for name, (_, agent) in bridges.items():
                    results[name].append(timed_calls(agent, args.calls))
                results["direct spawn (no bridge)"].append(direct(args.calls))
        finally:
            for proc, agent in bridges.values():
                agent.close()
                proc.terminate()
                proc.wait(10)
    for name, p50s in results.items():
        print(f"{name:28} p50 {min(p50s):.2f}-{max(p50s):.2f} ms per command ({args.rounds} rounds of {args.calls})")


if __name__ == "__main__":
    main()
