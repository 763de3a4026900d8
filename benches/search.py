"""`searchWorkspace` against ripgrep on the same tree, and how soon a dropped search
stops.

    .venv-test/bin/python benches/search.py NAME=BINARY [NAME=BINARY ...] \\
        [--rounds 5] [--files 10000] [--tree DIR]

The tree (generated once into `--tree`, default a directory under /tmp): `--files`
files of 15.4 KB of words in 100 directories, in a git repository, ~157 MB for 10 000.
Each round runs, alternating, `rg -c NEEDLE` and one `searchWorkspace` per build over
streamable HTTP for a literal that matches nothing (each bridge started once, its
watcher on, warm page cache), and prints each time and its ratio to ripgrep's in the
same round.

Then, per build, a search is started and cancelled (`notifications/cancelled`) 30 ms
in, three times: how long until the bridge's CPU time (/proc/<pid>/stat, exited
threads included, 10 ms ticks, sampled every 2 ms for 500 ms) reaches where it
settles, the CPU used after the cancellation, and when the call's own POST ended (a
build before the fix kept it open: the client's 10 s timeout)."""

import argparse
import json
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from conftest import McpOverHttp, start_bridge  # the tests' own helpers

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "function", "return", "value", "struct", "impl"]
NEEDLE = "zzqx_never_present"


def make_tree(tree, files):
    marker = tree / f".made-{files}"
    if marker.exists():
        return
    shutil.rmtree(tree, ignore_errors=True)
    rng = random.Random(7)
    for i in range(files):
        d = tree / f"d{i % 100:02}"
        d.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(220)]
        (d / f"f{i}.txt").write_text("\n".join(lines) + "\n")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    marker.write_text("")


def cpu_ms(pid):
    """The process's CPU time in ms (user + system, exited threads included), at the
    kernel's clock-tick resolution (10 ms)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def rg_seconds(tree):
    t = time.monotonic()
    subprocess.run(["rg", "-c", NEEDLE, str(tree)], stdout=subprocess.DEVNULL, check=False)
    return time.monotonic() - t


def search_seconds(session):
    t = time.monotonic()
    answer = session.call("searchWorkspace", {"query": NEEDLE, "maxResults": 10})
    elapsed = time.monotonic() - t
    result = answer.get("result", {})
    assert not result.get("isError"), answer
    return elapsed


def stopped_after(proc, session):
    """(ms from the cancellation until the bridge's CPU time reaches where it settles
    over the next 500 ms, ms of CPU it used after the cancellation, ms until the call's
    own POST ended); CPU at clock-tick resolution."""
    session.next_id += 1
    call_id = session.next_id
    body = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
            "params": {"name": "searchWorkspace", "arguments": {"query": NEEDLE}}}
    ended = {}

    def call():
        try:
            session._post(body)
        except OSError:
            pass
        ended["at"] = time.monotonic()

    before = cpu_ms(proc.pid)
    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    time.sleep(0.03)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": call_id, "reason": "bench"}}
    req = urllib.request.Request(session.url, data=json.dumps(cancel).encode(), method="POST",
                                 headers=session.headers)
    cancelled_at = time.monotonic()
    urllib.request.urlopen(req, timeout=10).read()
    samples = []
    while time.monotonic() - cancelled_at < 0.5:
        samples.append((time.monotonic() - cancelled_at, cpu_ms(proc.pid)))
        time.sleep(0.002)
    caller.join(timeout=10)
    settled = samples[-1][1]
    assert settled > before, "the search used no CPU: it did not run"
    stopped = next(t for t, cpu in samples if cpu >= settled)
    post_ms = (ended.get("at", float("inf")) - cancelled_at) * 1000
    return stopped * 1000, settled - samples[0][1], post_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="+", help="NAME=BINARY")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--tree", type=pathlib.Path,
                        default=pathlib.Path(tempfile.gettempdir()) / "ide-bridge-search-bench")
    args = parser.parse_args()
    if not shutil.which("rg"):
        sys.exit("ripgrep (rg) is needed as the baseline")
    make_tree(args.tree, args.files)
    builds = [b.split("=", 1) for b in args.builds]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        running = []
        for name, binary in builds:
            os.environ["BRIDGE_BIN"] = binary
            proc, port, token = start_bridge(args.tree, tmp / name, subprocess.DEVNULL,
                                             "--log-level", "warn")
            running.append((name, proc, McpOverHttp(port, token)))
        try:
            for _, _, session in running:
                search_seconds(session)  # warm the page cache and the watcher's walk
            rg_seconds(args.tree)
            ratios = {name: [] for name, _ in builds}
            for r in range(args.rounds):
                rg = rg_seconds(args.tree)
                line = [f"round {r + 1}: rg {rg:.3f} s"]
                for name, _, session in running:
                    s = search_seconds(session)
                    ratios[name].append(s / rg)
                    line.append(f"{name} {s:.3f} s ({s / rg:.2f}x)")
                print(", ".join(line), flush=True)
            for name, values in ratios.items():
                print(f"{name}: {min(values):.2f}-{max(values):.2f}x ripgrep "
                      f"(median {statistics.median(values):.2f}x)")
            for name, proc, session in running:
                stops = [stopped_after(proc, session) for _ in range(3)]
                print(f"{name}: a search cancelled 30 ms in: CPU settled after "
                      + ", ".join(f"{s[0]:.0f}" for s in stops) + " ms (using "
                      + ", ".join(f"{s[1]:.0f}" for s in stops) + " ms of CPU); its POST ended after "
                      + ", ".join(f"{s[2]:.0f}" for s in stops) + " ms")
        finally:
            for _, proc, session in running:
                session.close()
                proc.terminate()
                proc.wait(timeout=10)


if __name__ == "__main__":
    main()
