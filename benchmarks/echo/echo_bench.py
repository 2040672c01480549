#!/usr/bin/env python3
"""The echo benchmark: presto-echo (one presto thread per connection, presto::io) beside a Go
server (a goroutine per connection) and a Boost.Fiber + Boost.Asio one (a fiber per
connection), each driven by the same client, presto-echo-load, in the same run: requests per
second and latency p50/p99 at 1, 100 and 10,000 connections (64-byte messages, closed loop).

    benchmarks/echo/echo_bench.py [--quick] [--build-dir build] [--processors N]

benchmarks/run.py calls run_echo() and echo_table(). Standard library only.
"""

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVERS = ["presto", "go", "boost.fiber+asio"]
FULL_CONNECTIONS, QUICK_CONNECTIONS = [1, 100, 10000], [1, 50]


def log(msg):
    print(f"echo_bench: {msg}", flush=True)


def fd_limit():
    """Raises this process's descriptor limit to its hard limit (children inherit it); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


def build(build_dir, ninja):
    """Builds (with `ninja`) the three servers and the client; returns {server: command prefix}
    for those that exist."""
    if ninja:
        subprocess.run(["ninja", "-C", build_dir, "apps/presto-echo", "apps/presto-echo-load",
                        "benchmarks/fiber-asio-echo"], check=True, stdout=sys.stderr)
    servers = {}
    presto = os.path.join(build_dir, "apps", "presto-echo")
    if os.path.exists(presto):
        servers["presto"] = [presto, "--port", "0", "--processors"]
    fiber = os.path.join(build_dir, "benchmarks", "fiber-asio-echo")
    if os.path.exists(fiber):
        servers["boost.fiber+asio"] = [fiber, "--port", "0", "--processors"]
    else:
        log("fiber-asio-echo not built (Boost.Fiber missing): its column is skipped")
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)
    if go:
        exe = os.path.join(build_dir, "benchmarks", "go-echo")
        env = dict(os.environ, GOTOOLCHAIN="local", GOPROXY="off", GOFLAGS="-mod=mod",
                   GOCACHE=os.path.join(build_dir, "benchmarks", "go-cache"))
        subprocess.run([go, "build", "-o", exe, "."], cwd=os.path.join(ROOT, "benchmarks", "echo", "go"),
                       env=env, check=True)
        servers["go"] = [exe, "-port", "0", "-processors"]
    else:
        log("no Go toolchain: the Go server is skipped")
    return servers


def start(command):
    """Starts a server; returns (process, port) once it prints its listening line."""
    p = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if "listening on" not in line:
        p.kill()
        p.wait()
        raise RuntimeError(f"{' '.join(command)} did not start: {line!r}")
    port = int(line.split("listening on", 1)[1].split()[0].rsplit(":", 1)[1])
    return p, port


def stop(proc, command):
    """Stops a server with SIGTERM; kills it and raises if it is still there after 30 s (a server
    that does not stop must fail the run, not hold it)."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"{' '.join(command)} did not stop within 30 s of SIGTERM: killed")


def run_echo(quick, processors, build_dir, seconds=None, ninja=True):
    """Runs every server at every connection count; returns the client's JSON records (none
    when the apps are not built: -Dapps=false)."""
    servers = build(build_dir, ninja)
    client = os.path.join(build_dir, "apps", "presto-echo-load")
    if "presto" not in servers or not os.path.exists(client):
        log("apps/presto-echo or presto-echo-load not built (apps disabled?): the echo benchmark is skipped")
        return []
    limit = fd_limit()
    counts = QUICK_CONNECTIONS if quick else FULL_CONNECTIONS
    # The server and the client each hold one descriptor per connection, plus a few.
    fitting = [c for c in counts if c + 64 <= limit]
    if fitting != counts:
        log(f"descriptor limit {limit}: connection counts {counts} reduced to {fitting}")
    seconds = seconds or (0.3 if quick else 3.0)
    records = []
    for c in fitting:
        for name in SERVERS:  # the servers in turn at each count: drift hits them alike
            if name not in servers:
                continue
            proc, port = start(servers[name] + [str(processors)])
            try:
                out = subprocess.run([client, "--port", str(port), "--connections", str(c), "--seconds", str(seconds),
                                      "--processors", str(processors), "--system", name, "--json"],
                                     stdout=subprocess.PIPE, text=True, check=True, timeout=300).stdout
            finally:
                stop(proc, servers[name])
            for line in out.splitlines():
                if line.startswith("{"):
                    rec = json.loads(line)
                    rec.update(unit="ns", repetitions=1, spread_pct=0.0, server_processors=processors)
                    records.append(rec)
                    log(f"{name:18} {c:6} connections: {rec['requests_per_s']:10.0f} requests/s, "
                        f"p50 {rec['p50_us']:9.1f} us, p99 {rec['p99_us']:9.1f} us")
            time.sleep(0.2)  # let the sockets of a large run go before the next server binds
    return records


def echo_table(records):
    """Requests/s and p50/p99 per server and connection count, with PRESTO's throughput over each peer's."""
    if not records:
        return ""
    counts = sorted({r["param"] for r in records})
    rows = ["| connections | server | requests/s | p50 | p99 | PRESTO's requests/s over this server's |",
            "|---|---|---|---|---|---|"]
    for c in counts:
        presto = next((r for r in records if r["param"] == c and r["system"] == "presto"), None)
        for r in (r for r in records if r["param"] == c):
            ratio = f"{presto['requests_per_s'] / r['requests_per_s']:.2f}×" if presto and r["requests_per_s"] else ""
            rows.append(f"| {c:,} | {r['system']} | {r['requests_per_s']:,.0f} | {r['p50_us']:.1f} µs | "
                        f"{r['p99_us']:.1f} µs | {ratio if r['system'] != 'presto' else '—'} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 and 50 connections, 0.3 s each")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--processors", type=int, default=os.cpu_count(), help="of each server and of the client")
    ap.add_argument("--seconds", type=float, default=None, help="of measuring per server and count")
    args = ap.parse_args()
    records = run_echo(args.quick, args.processors, os.path.abspath(args.build_dir), args.seconds)
    for r in records:
        print(json.dumps(r))
    print(echo_table(records))


if __name__ == "__main__":
    main()
