#!/usr/bin/env python3
"""presto-perf's test, without perf: the parts it files functions under (as perf names them
in a profile of Figure 3's product, presto-matmul on 2 processors, 2026-12-05), and its table
from counts made up here: each part's share of each OS thread's samples and its time, in ms
and per unit; and that a call without a program is refused.

Usage: perf_test.py PATH/TO/presto-perf
"""

import contextlib
import importlib.machinery
import importlib.util
import io
import subprocess
import sys

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL:", message)


def rows(text):
    """The table's rows by their first word (a part's), from print_table's output."""
    return {line.split()[0]: line for line in text.splitlines() if line and not line.startswith(" ")}


def load(path):
    loader = importlib.machinery.SourceFileLoader("presto_perf", path)
    spec = importlib.util.spec_from_loader("presto_perf", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


# (dso, symbol as perf prints it, part)
FILED = [
    ("presto-matmul", "[.] presto::detail::TaskSlot::invoke_callable<presto::detail::TaskSlot::emplace<"
                      "(anonymous namespace)::multiply(...)::{lambda()#1}>(...)::{lambda()#1}>", "thread bodies"),
    ("libpresto.so.0.1.0", "[.] presto::detail::launch_record", "forks"),
    ("libpresto.so.0.1.0", "[.] presto::detail::new_record_here", "forks"),
    ("presto-matmul", "[.] presto::detail::new_record_here@plt", "forks"),
    ("libpresto.so.0.1.0", "[.] presto::detail::join_record", "joins"),
    ("presto-matmul", "[.] presto::JoinHandle<void>::join", "joins"),
    ("libpresto.so.0.1.0", "[.] presto::detail::free_record", "joins"),
    ("libpresto.so.0.1.0", "[.] presto::detail::Dispatch::run_records", "runners"),
    ("libpresto.so.0.1.0", "[.] presto::detail::OwnedQueue::owner_push_all", "steals"),
    ("libpresto.so.0.1.0", "[.] presto::detail::OwnedQueue::take_half", "steals"),
    ("libpresto.so.0.1.0", "[.] presto::Processor::idle", "idle"),
    ("libpresto.so.0.1.0", "[.] presto::detail::RuntimeImpl::idle_loop", "idle"),
    ("libpresto.so.0.1.0", "[.] presto::detail::Dispatch::finish", "switches"),
    ("libpresto.so.0.1.0", "[.] jump_fcontext", "switches"),
    ("libpresto.so.0.1.0", "[.] presto::detail::ttas_lock_contended", "synchronization"),
    ("libpresto.so.0.1.0", "[.] presto::Condition::wait", "synchronization"),
    ("libpresto.so.0.1.0", "[.] presto::detail::OwnedQueue::withdraw_record", "joins"),  # a joiner takes its child back
    ("[kernel.kallsyms]", "[k] smp_call_function_many_cond", "OS kernel"),
    ("libpresto.so.0.1.0", "[.] presto::detail::RuntimeImpl::run_until_halt", "runtime, other"),
    ("presto-matmul", "[.] presto::Thread::run_body", "runtime, other"),  # the core's, inlined in the program
    ("hot_path", "[.] presto::bench::skynet", "program, other"),  # the program's own, in a presto namespace
    ("presto-matmul", "[.] main", "program, other"),
    ("libc.so.6", "[.] __memset_avx512_unaligned_erms", "program, other"),
]


def main():
    tool = sys.argv[1]
    profile = load(tool)
    for dso, symbol, part in FILED:
        got = profile.part_of(dso, symbol)
        check(got == part, f"{symbol[:60]} ({dso}) filed under {got!r}, not {part!r}")

    # 1,000 samples at 1,000 Hz: one second. Processor 0 (the program's OS thread) 600, presto-1 400.
    counts = {
        ("prog", "prog", "[.] presto::detail::TaskSlot::invoke_callable<body>"): 450,
        ("prog", "libpresto.so", "[.] presto::detail::launch_record"): 90,
        ("prog", "libpresto.so", "[.] presto::detail::join_record"): 60,
        ("presto-1", "prog", "[.] presto::detail::TaskSlot::invoke_callable<body>"): 300,
        ("presto-1", "libpresto.so", "[.] presto::Processor::idle"): 100,
    }
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        profile.print_table(counts, 1000, None, 1)
    text = out.getvalue()
    lines = rows(text)
    check("1000 samples at 1000 Hz, 1.00 s of processor time" in text, "the header's totals:\n" + text)
    header = next(line for line in text.splitlines() if line.startswith("part"))
    check(header.index("prog") < header.index("presto-1") < header.index("all"),
          "columns: the busiest OS thread first, then the others, then all:\n" + header)
    # forks: 90 of prog's 600 samples (15.0%, 90 ms), none of presto-1's, 9.0% of all.
    check(lines.get("forks", "").split() == ["forks", "15.0", "90.0", "-", "9.0", "90.0"], "forks' row:\n" + text)
    check(lines.get("idle", "").split() == ["idle", "-", "25.0", "100.0", "10.0", "100.0"], "idle's row:\n" + text)
    check("steals" not in lines, "a part with no sample has no row:\n" + text)
    # --top 1: the heaviest function of each part, over every OS thread (the bodies: 450 + 300 samples).
    check("  75.0%  presto::detail::TaskSlot::invoke_callable<body>" in text, "--top 1 lists the heaviest:\n" + text)

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        profile.print_table(counts, 1000, (1e6, "element"), 0)  # 1,000,000 elements
    per = rows(out.getvalue())
    check(per.get("joins", "").split() == ["joins", "10.0", "60.0", "-", "6.0", "60.0"],
          "joins per element (60 ms over 1,000,000 elements: 60 ns):\n" + out.getvalue())
    check("ns/element" in out.getvalue(), "the unit is named:\n" + out.getvalue())

    refused = subprocess.run([sys.executable, tool], capture_output=True, text=True, timeout=60)
    check(refused.returncode != 0 and "no program given" in refused.stderr,
          f"a call without a program is refused: {refused.returncode} {refused.stderr!r}")
    refused = subprocess.run([sys.executable, tool, "--per", "lots", "x", "--", "true"], capture_output=True, text=True,
                             timeout=60)
    check(refused.returncode != 0 and "--per: N must be a number" in refused.stderr,
          f"--per with no number is refused: {refused.returncode} {refused.stderr!r}")

    print(f"{len(FAILURES)} failure(s)")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
