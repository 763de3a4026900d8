"""The bridge's language-server pool against one server per agent: 5 agents × 200
`getHover` calls at once through one bridge (one pylsp for all of them) beside 5 pylsp
processes each serving its own client directly (what peers that spawn servers per
client do). Measured: the first answer (start-up), p50/p99 of the rest, server
processes, and memory (the bridge plus its pylsp; the 5 pylsp).

    .venv-test/bin/python benches/lsp_pool.py BRIDGE_BINARY [--agents 5] [--calls 200]

pylsp comes from .venv-nvim (tests/nvim/setup.sh installs it)."""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from conftest import McpOverHttp, start_bridge

PYLSP_DIR = ROOT / ".venv-nvim" / "bin"
SOURCE = 'def area(width, height):\n    """Area of a rectangle."""\n    return width * height\n\n\ntotal = area(2, 3)\n'


def rss_kib(pid):
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def pylsp_pids():
    out = subprocess.run(["pgrep", "-f", str(PYLSP_DIR / "pylsp")], capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split()]


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def hammer(agents, calls, call):
    """Runs `call(i)` `calls` times in each of `agents` threads at once: every call's
    milliseconds, and the wall time in seconds."""
    times = [[] for _ in range(agents)]

    def run(i):
        for _ in range(calls):
            t = time.monotonic()
            call(i)
            times[i].append((time.monotonic() - t) * 1000)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(agents)]
    began = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return [x for ts in times for x in ts], time.monotonic() - began


class Lsp:
    """A minimal LSP client over a pylsp process's stdio."""

    def __init__(self, root):
        self.proc = subprocess.Popen([str(PYLSP_DIR / "pylsp")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=root)
        self.next_id = 0
        uri = pathlib.Path(root).as_uri()
        self.request("initialize", {"processId": os.getpid(), "rootUri": uri, "capabilities": {}})
        self.notify("initialized", {})

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            length = 0
            while True:
                line = self.proc.stdout.readline()
                if line in (b"\r\n", b""):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(self.proc.stdout.read(length))
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def close(self):
        self.proc.kill()
        self.proc.wait()


def pool(args, ws, tmp):
    os.environ["BRIDGE_BIN"] = args.bridge
    os.environ["PATH"] = f"{PYLSP_DIR}:{os.environ['PATH']}"
    with open(tmp / "bridge.log", "w") as log:
        proc, port, token = start_bridge(ws, tmp / "claude", log, "--set", "rate_limit.requests=100000",
                                         "--set", "sessions.max_sessions=20", "--log-level", "warn")
        try:
            agents = [McpOverHttp(port, token) for _ in range(args.agents)]
            time.sleep(0.5)
            idle = rss_kib(proc.pid)
            hover = {"file": "shapes.py", "line": 6, "column": 9}
            t = time.monotonic()
            first = agents[0].call("getHover", hover)
            start_ms = (time.monotonic() - t) * 1000
            assert "Area of a rectangle" in json.dumps(first), first

            def hover_once(i):
                r = agents[i].call("getHover", hover)
                assert not r["result"].get("isError"), r

            all_times, wall = hammer(len(agents), args.calls, hover_once)
            servers = pylsp_pids()
            memory = rss_kib(proc.pid) + sum(rss_kib(p) for p in servers)
            for a in agents:
                a.close()
        finally:
            proc.terminate()
            proc.wait()
    return {"first": start_ms, "p50": percentile(all_times, 0.5), "p99": percentile(all_times, 0.99),
            "servers": len(servers), "memory_mib": memory / 1024, "idle_bridge_mib": idle / 1024,
            "calls_per_s": len(all_times) / wall}


def per_agent(args, ws):
    uri = (ws / "shapes.py").as_uri()
    t = time.monotonic()
    clients = [Lsp(ws) for _ in range(args.agents)]
    for c in clients:
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": SOURCE}})
    params = {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 8}}
    first = clients[0].request("textDocument/hover", params)
    start_ms = (time.monotonic() - t) * 1000
    assert "Area of a rectangle" in json.dumps(first), first
    all_times, wall = hammer(len(clients), args.calls, lambda i: clients[i].request("textDocument/hover", params))
    memory = sum(rss_kib(c.proc.pid) for c in clients)
    for c in clients:
        c.close()
    return {"first": start_ms, "p50": percentile(all_times, 0.5), "p99": percentile(all_times, 0.99),
            "servers": len(clients), "memory_mib": memory / 1024, "calls_per_s": len(all_times) / wall}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bridge")
    p.add_argument("--agents", type=int, default=5)
    p.add_argument("--calls", type=int, default=200)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        ws = tmp / "ws"
        ws.mkdir()
        (tmp / "claude").mkdir()
        (ws / "shapes.py").write_text(SOURCE)
        shared = pool(args, ws, tmp)
        direct = per_agent(args, ws)
    print(f"| {args.agents} agents × {args.calls} hovers | one pool (bridge) | one pylsp per agent (direct) |")
    print("|---|---:|---:|")
    print(f"| pylsp processes | {shared['servers']} | {direct['servers']} |")
    print(f"| first answer (start-up), ms | {shared['first']:.0f} | {direct['first']:.0f} |")
    print(f"| p50 / p99, ms | {shared['p50']:.1f} / {shared['p99']:.1f} | {direct['p50']:.1f} / {direct['p99']:.1f} |")
    print(f"| hovers/s (all agents) | {shared['calls_per_s']:.0f} | {direct['calls_per_s']:.0f} |")
    print(f"| memory (RSS), MiB | {shared['memory_mib']:.1f} (bridge {shared['idle_bridge_mib']:.1f} idle) "
          f"| {direct['memory_mib']:.1f} |")


if __name__ == "__main__":
    main()
