"""Instructions the bridge executes per tool call, counted by valgrind's callgrind: a
measure that does not move with the machine's load (the roundtrip bench's CPU time
does, by a tenth between runs here), for comparing builds of the same call path.

    .venv-test/bin/python benches/instructions.py NAME=BINARY [NAME=BINARY ...] \\
        [--short 2000] [--long 6000] [--agents 1]

Each build runs the roundtrip bench twice under callgrind (`cargo bench --bench
roundtrip --no-run` builds it; `BENCH_BRIDGE_BIN` points it at a wrapper that starts the
build under valgrind), `--short` and then `--long` tool calls of `getWorkspaceFolders`;
what the longer run executed beyond the shorter one, divided by the difference in calls,
is the cost of one call without start-up's. Every thread of the bridge is counted (the
activity log's writer too), in user space only: the kernel's share (the socket) is not
in it. Needs `valgrind` (`apt-get install valgrind`)."""

import argparse
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def roundtrip_bench():
    """The newest built roundtrip bench binary."""
    found = [
        p
        for p in (ROOT / "target" / "release" / "deps").glob("roundtrip-*")
        if p.suffix == "" and os.access(p, os.X_OK)
    ]
    if not found:
        sys.exit("no roundtrip bench binary: run `cargo bench --bench roundtrip --no-run` first")
    return max(found, key=lambda p: p.stat().st_mtime)


def total_instructions(bench, binary, calls, agents, tmp):
    """Instructions of the bridge that served `calls` tool calls (its first process:
    the bench starts another one afterwards for its memory rows)."""
    out = tmp / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    wrapper = tmp / "bridge-under-callgrind"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'exec valgrind --tool=callgrind --callgrind-out-file={out}/out.%p "{binary}" "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, BENCH_BRIDGE_BIN=str(wrapper))
    subprocess.run(
        [str(bench), "--requests", str(calls), "--agents", str(agents)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=900,
    )
    first = min(out.glob("out.*"), key=lambda p: int(p.suffix[1:]))
    summary = subprocess.run(
        ["callgrind_annotate", str(first)], capture_output=True, text=True, check=True
    ).stdout
    match = re.search(r"^([\d,]+)\s.*PROGRAM TOTALS", summary, re.M)
    if not match:
        sys.exit(f"no total in callgrind_annotate's output for {first}")
    return int(match.group(1).replace(",", ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="+", help="NAME=BINARY")
    parser.add_argument("--short", type=int, default=2000)
    parser.add_argument("--long", type=int, default=6000)
    parser.add_argument("--agents", type=int, default=1)
    args = parser.parse_args()
    if args.long <= args.short:
        sys.exit("--long must be more calls than --short")
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed")
    bench = roundtrip_bench()
    builds = [b.split("=", 1) for b in args.builds]
    print("| build | instructions per tool call |")
    print("|---|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for name, binary in builds:
            short = total_instructions(bench, binary, args.short, args.agents, tmp)
            long = total_instructions(bench, binary, args.long, args.agents, tmp)
            per_call = (long - short) / (args.long - args.short)
            print(f"| {name} | {per_call:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
