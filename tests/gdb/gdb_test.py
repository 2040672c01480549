#!/usr/bin/env python3
"""The gdb extension's test: runs blocked_threads under `gdb -batch` until it stops itself with
threads blocked, and checks that `info presto-threads` lists every thread with its name, state
and the object it waits on, that `presto-bt` shows each thread's own functions, that the
registers presto-bt borrows are restored (the program then finishes normally), and that the
extension auto-loads from the program (.debug_gdb_scripts) as well as from the file.

Usage: gdb_test.py BLOCKED_THREADS_PROGRAM PRESTO_PY
Exit status 77 (skipped) only if gdb (with Python) is absent or ptrace is forbidden here.
"""

import os
import re
import shutil
import subprocess
import sys

SKIP = 77
REGS = 'printf "regs %lx %lx %lx %lx %lx %lx %lx %lx %lx\\n", $pc, $sp, $rbp, $rbx, $r12, $r13, $r14, $r15, $rax'

# name -> (runtime, state, a regex for the last column, functions its presto-bt shows)
EXPECTED = {
    "main": ("presto", "running", r"^runs on gdb thread \d+ \(LWP \d+\)$", ["presto_test_stop_here"]),
    "consumer": ("presto", "blocked", r"^presto::Condition 'nonempty' \(0x[0-9a-f]+\)$",
                 ["presto::Condition::wait", "wait_for_item"]),
    "locker": ("presto", "blocked", r"^presto::Lock 'table' \(0x[0-9a-f]+\), held by thread 'main' \(id \d+\)$",
               ["presto::Lock::lock", "take_table"]),
    "enterer": ("presto", "blocked", r"^presto::Monitor 'buffer' \(0x[0-9a-f]+\), held by thread 'main' \(id \d+\)$",
                ["presto::Monitor::Entry::Entry", "enter_buffer"]),
    "yielder": ("presto", "ready", r"^$", ["Dispatch::yield", "keep_yielding"]),
    "pending": ("idle", "ready", r"^\(not run yet\)$", []),
}

ROW = re.compile(r"^\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(0x[0-9a-f]+)\s*(.*)$")
RUNTIME = re.compile(r"^Runtime '([^']*)' \(RuntimeImpl 0x[0-9a-f]+\): (\d+) processor\(s\), (\d+) live thread\(s\)$")


TRANSCRIPTS = []  # every gdb run's output, printed if a check fails


class Failure(Exception):
    pass


def gdb(program, *commands, init=()):
    argv = ["gdb", "-batch", "-nx"]
    for c in init:
        argv += ["-iex", c]
    for c in commands:
        argv += ["-ex", c]
    argv.append(program)
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240,
                            stdin=subprocess.DEVNULL)
    TRANSCRIPTS.append("$ %s\n%s" % (" ".join(repr(a) for a in argv), result.stdout))
    return result.stdout


def skip_reason(output):
    if "hit Breakpoint 1" in output:
        return None
    for sign in ("ptrace: Operation not permitted", "Could not trace the inferior", "Couldn't get registers",
                 "Cannot create process: Operation not permitted"):
        if sign in output:
            return "ptrace is forbidden here (%s)" % sign
    return None


def parse_table(output):
    """{name: (runtime, id, state, proc, address, last column)} from `info presto-threads`."""
    rows, runtime = {}, None
    for line in output.splitlines():
        m = RUNTIME.match(line)
        if m:
            runtime = m.group(1)
            continue
        m = ROW.match(line)
        if m and runtime is not None:
            number, name, state, proc, address, rest = m.groups()
            rows[name] = (runtime, int(number), state, proc, address, rest.strip())
    return rows


def sections(output, names):
    """The presto-bt output of each thread, keyed by name (each begins with "thread 'NAME'")."""
    found, current = {}, None
    for line in output.splitlines():
        m = re.match(r"^thread '([^']+)' \(id \d+\)", line)
        if m and m.group(1) in names:
            current = m.group(1)
            found[current] = []
        elif line.startswith("regs ") or line.startswith("presto-bt:"):
            current = None
        if current is not None:
            found[current].append(line)
    return {k: "\n".join(v) for k, v in found.items()}


def check(condition, message):
    if not condition:
        raise Failure(message)


def run_checks(program, presto_py, library):
    # The script is embedded in the PRESTO library (a shared object): gdb loads it from there.
    library_dir = os.path.dirname(os.path.abspath(library))
    auto_load = ["add-auto-load-safe-path " + library_dir]
    first = gdb(program, "break presto_test_stop_here", "run", "info presto-threads", init=auto_load)
    reason = skip_reason(first)
    if reason:
        return reason
    check("hit Breakpoint 1" in first, "the program never reached presto_test_stop_here")
    check("Undefined info command" not in first, "the extension did not auto-load from the program")
    rows = parse_table(first)
    for name, (runtime, state, where, _) in EXPECTED.items():
        check(name in rows, "info presto-threads does not list thread '%s'" % name)
        got = rows[name]
        check(got[0] == runtime, "thread '%s' is listed under runtime '%s', not '%s'" % (name, got[0], runtime))
        check(got[2] == state, "thread '%s' is listed as %s, not %s" % (name, got[2], state))
        check(re.search(where, got[5]), "thread '%s': last column %r does not match %r" % (name, got[5], where))
    check(len(rows) == len(EXPECTED), "info presto-threads lists %s, expected %s" % (sorted(rows), sorted(EXPECTED)))
    check("Runtime 'presto'" in first and "Runtime 'idle'" in first, "info presto-threads misses a runtime")

    # presto-bt by id, or by address where another runtime has a thread with the same id (ids
    # are per runtime: 'consumer' and 'pending' are both 1), which the id form must refuse.
    ids = [row[1] for row in rows.values()]
    keys = {name: str(row[1]) if ids.count(row[1]) == 1 else row[4] for name, row in rows.items()}
    ambiguous = next(i for i in ids if ids.count(i) > 1)
    commands = ["break presto_test_stop_here", "run", REGS]
    commands += ["presto-bt " + keys[name] for name in EXPECTED]
    commands += ["presto-bt %d" % ambiguous, "presto-bt 4242", REGS, "continue"]
    second = gdb(program, *commands, init=auto_load)
    found = sections(second, EXPECTED)
    for name, (_, _, _, functions) in EXPECTED.items():
        check(name in found, "presto-bt printed nothing for thread '%s'" % name)
        for f in functions:
            check(f in found[name], "presto-bt of thread '%s' does not show %s" % (name, f))
    check("is running on processor 0, gdb thread" in found["main"], "presto-bt of 'main' does not say where it runs")
    check("has not run yet" in found["pending"], "presto-bt of 'pending' does not say it has not run")
    check("2 runtimes have a thread %d" % ambiguous in second, "presto-bt did not refuse an ambiguous id")
    check("no live presto thread with id or address 4242" in second, "presto-bt did not refuse an unknown id")
    regs = [line for line in second.splitlines() if line.startswith("regs ")]
    check(len(regs) == 2 and regs[0] == regs[1], "presto-bt did not restore the registers: %s" % regs)
    check("released and joined 5 threads" in second and "exited normally" in second,
          "the program did not finish normally after presto-bt")

    # The installable file works when sourced by hand, without auto-loading.
    third = gdb(program, "source " + presto_py, "break presto_test_stop_here", "run", "info presto-threads",
                init=["set auto-load python-scripts off"])
    check(parse_table(third).keys() == EXPECTED.keys(), "the sourced presto.py does not list the threads")
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: gdb_test.py BLOCKED_THREADS_PROGRAM PRESTO_PY PRESTO_LIBRARY")
    program, presto_py, library = sys.argv[1], sys.argv[2], sys.argv[3]
    if shutil.which("gdb") is None:
        print("SKIP: gdb is not installed (tools/setup installs it)")
        return SKIP
    if "yes" not in gdb("/bin/true", "python print('yes')"):
        print("SKIP: this gdb has no Python support")
        return SKIP
    try:
        reason = run_checks(program, presto_py, library)
    except Failure as e:
        print("\n\n".join(TRANSCRIPTS))
        print("FAIL:", e)
        print("(rerun: gdb -nx -iex 'add-auto-load-safe-path %s' -ex 'break presto_test_stop_here' -ex run "
              "-ex 'info presto-threads' %s)" % (os.path.dirname(os.path.abspath(library)), program))
        return 1
    if reason:
        print("SKIP:", reason)
        return SKIP
    print("gdb test: info presto-threads and presto-bt checked on %d threads in 2 runtimes" % len(EXPECTED))
    return 0


sys.exit(main())
