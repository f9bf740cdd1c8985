#!/usr/bin/env python3
"""Sequential echo calls over pipes and over socketpairs, reporting the server's CPU per call.

The stdio benchmark's harness (Node/libuv) gives its child Unix socketpairs for stdin and
stdout, while a shell or Python gives pipes; this probe shows what the kind of descriptor costs
the server per sequential call. Usage: bench/stdio_transport_probe.py SERVER [ARGS...]
"""
import json
import socket
import statistics
import subprocess
import sys

CALLS = 20000
RUNS = 3
INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "probe", "version": "1"}}}).encode() + b"\n"
CALL = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"text":"hello"}}}\n')


def cpu_ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])  # utime, stime in clock ticks


def run(argv, kind):
    if kind == "pipe":
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        send, reader = proc.stdin.write, proc.stdout
    else:
        a, b = socket.socketpair()
        c, d = socket.socketpair()
        proc = subprocess.Popen(argv, stdin=b.fileno(), stdout=d.fileno())
        b.close()
        d.close()
        send, reader = a.sendall, c.makefile("rb")
    send(INIT)
    reader.readline()
    for _ in range(2000):
        send(CALL)
        reader.readline()
    u0, s0 = cpu_ticks(proc.pid)
    for _ in range(CALLS):
        send(CALL)
        if not reader.readline():
            raise SystemExit("server closed its output")
    u1, s1 = cpu_ticks(proc.pid)
    if kind == "pipe":
        proc.stdin.close()
    else:
        a.close()
    proc.wait()
    tick_us = 1e6 / 100
    return (u1 - u0) * tick_us / CALLS, (s1 - s0) * tick_us / CALLS


def main():
    argv = sys.argv[1:]
    if not argv:
        raise SystemExit(__doc__)
    for kind in ("pipe", "socketpair"):
        results = [run(argv, kind) for _ in range(RUNS)]
        user = statistics.median(r[0] for r in results)
        system = statistics.median(r[1] for r in results)
        print(f"{kind:10s} server CPU per sequential call: user {user:.1f} us + sys {system:.1f} us"
              f" = {user + system:.1f} us (median of {RUNS} runs of {CALLS} calls)")


if __name__ == "__main__":
    main()
