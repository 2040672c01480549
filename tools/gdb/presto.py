# PRESTO's gdb extension: lists the presto threads of every live runtime and prints the
# backtrace of a thread that is not running (its frame is rebuilt from the context Boost.Context
# saved when it was switched out).
#
#   (gdb) info presto-threads      every thread: id, name, state, processor, what it waits on
#   (gdb) presto-bt ID [BT-ARGS]   the backtrace of thread ID (or of the Thread at an address);
#                                  BT-ARGS go to `bt` (e.g. `full`, `-3`)
#
# gdb loads it by itself from the program (the PRESTO library embeds it in the
# .debug_gdb_scripts section) once the program is in the auto-load safe-path:
#   gdb -iex 'add-auto-load-safe-path /directory/of/libpresto.so' program
# or by hand: (gdb) source PREFIX/share/presto/gdb/presto.py
#
# It reads the program's debug information (build with -g; the default debugoptimized build
# has it). Its way in is presto::detail::debug_runtimes (presto/src/debug_anchor.hpp states
# the contract). presto-bt changes the registers of the selected OS thread for the duration of
# a `bt` and restores them, so it needs a live process; rebuilding a suspended frame is done
# for x86-64 only (elsewhere `info presto-threads` works and presto-bt says why it cannot).

import struct

import gdb


def _fields_with_bases(value):
    """The value's non-static fields, base-class sub-objects included, as (field, value) pairs."""
    t = value.type.strip_typedefs()
    return [(f, value[f]) for f in t.fields() if hasattr(f, "bitpos") and not f.artificial]


def _first_leaf(value, wanted):
    """The first scalar inside `value` (depth first) whose type code is in `wanted`: the
    pointer of a std::unique_ptr, the integer of a std::atomic, whatever their library's
    internal field names are."""
    code = value.type.strip_typedefs().code
    if code in wanted:
        return value
    if code in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION):
        for _, v in _fields_with_bases(value):
            found = _first_leaf(v, wanted)
            if found is not None:
                return found
    return None


def _pointer(value):
    p = _first_leaf(value, (gdb.TYPE_CODE_PTR,))
    if p is None:
        raise gdb.GdbError("presto: no pointer inside a %s" % value.type)
    return p


def _integer(value):
    i = _first_leaf(value, (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_ENUM, gdb.TYPE_CODE_BOOL))
    if i is None:
        raise gdb.GdbError("presto: no integer inside a %s" % value.type)
    return int(i)


def _string(value):
    """A libstdc++ std::string's text (or its pretty-printed form with another library)."""
    try:
        return value["_M_dataplus"]["_M_p"].string(length=int(value["_M_string_length"]))
    except gdb.error:
        return value.format_string(raw=False).strip('"')


def _vector(value):
    """The elements of a libstdc++ std::vector."""
    impl = value["_M_impl"]
    p, end = impl["_M_start"], impl["_M_finish"]
    items = []
    while p != end:
        items.append(p.dereference())
        p += 1
    return items


class PrestoThread:
    """What the extension knows of one presto::Thread in the inferior."""

    def __init__(self, thread_ptr, state_names):
        t = thread_ptr.dereference()
        self.address = int(thread_ptr)
        self.id = int(t["id_"])
        self.name = _string(t["name_"]) or "<unnamed>"
        self.label = _describe_thread(t)
        code = _integer(t["state_"])
        self.state = state_names.get(code, "state %d" % code)
        proc = t["processor_"]
        self.processor = int(proc.dereference()["index_"]) if int(proc) != 0 else None
        self.waiting_on = _describe_object(t["waiting_on_"])
        self.fctx = int(t["context_"]["fctx"])
        self.stack_base = int(t["stack_"]["base"])
        self.stack_top = self.stack_base + int(t["stack_"]["size"])

    def on_stack(self, sp):
        return self.stack_base != 0 and self.stack_base <= sp < self.stack_top


def _derives_from(t, name):
    t = t.strip_typedefs()
    return t.name == name or any(f.is_base_class and _derives_from(f.type, name) for f in t.fields())


def _describe_thread(t):
    """What `Thread::describe()` says of the presto::Thread `t`."""
    name = _string(t["name_"]) or "<unnamed>"
    if bool(t["external_"]):
        return "external thread '%s'" % name
    return "thread '%s' (id %d)" % (name, int(t["id_"]))


def _type_name(t):
    """`presto::Condition` for the type t. A type gdb knows only from the run-time type
    information (a program built without -g, e.g. a release build) prints as
    `class presto::Condition`: the keyword is dropped."""
    t = t.unqualified().strip_typedefs()
    name = t.name or t.tag or str(t)
    for keyword in ("class ", "struct "):
        if name.startswith(keyword):
            return name[len(keyword):]
    return name


def _describe_object(ptr):
    """`presto::Lock 'table' (0x...), held by thread 'main' (id 2)` for a SynchroObject*
    (the holder for a Lock or Monitor); None for nullptr."""
    if int(ptr) == 0:
        return None
    try:
        dynamic = ptr.dynamic_type.target()
        obj = ptr.dereference()
        name = _string(obj["name_"]) or "<unnamed>"
        text = "%s '%s' (0x%x)" % (_type_name(dynamic), name, int(ptr))
        if _derives_from(dynamic, "presto::Lock"):
            lock = ptr.cast(gdb.lookup_type("presto::Lock").pointer()).dereference()
            holder = _integer(lock["word_"]) & ~1  # the holder's address | a waiters bit
            thread_ptr = gdb.lookup_type("presto::Thread").pointer()
            text += ", held by " + (_describe_thread(gdb.Value(holder).cast(thread_ptr).dereference())
                                    if holder else "nobody")
        return text
    except gdb.error:
        return "object at 0x%x" % int(ptr)


class PrestoRuntime:
    """One live presto runtime (its RuntimeImpl) and its threads."""

    def __init__(self, impl_ptr):
        impl = impl_ptr.dereference()
        self.address = int(impl_ptr)
        self.name = _string(impl["name"])
        # A ProcessorSet: slots made once (set_processors reuses them), the first `active_` in
        # use; threads may still be registered on a retired one, so every made slot is read.
        processor_set = impl["processors"]
        made = _integer(processor_set["made_"])
        slot = processor_set["slots_"]["_M_impl"]["_M_start"]
        self.processors = [_pointer((slot + i).dereference()).dereference() for i in range(made)]
        self.active_processors = _integer(processor_set["active_"])
        registries = [_pointer(p["state_"]).dereference()["registry"] for p in self.processors]
        registries += [impl["external_registry"], impl["retained"]]
        state_names = {int(f.enumval): f.name.rsplit("::", 1)[-1]
                       for f in gdb.lookup_type("presto::ThreadState").fields()}
        self.threads = []
        thread_ptr = gdb.lookup_type("presto::Thread").pointer()
        inferior = gdb.selected_inferior()
        word = gdb.lookup_type("unsigned long").sizeof
        for registry in registries:
            # Chunks of slots, each a Thread* or null (presto/src/registry.hpp); a chunk's slots
            # are read in one go, so a million threads list in seconds.
            chunk = _pointer(registry["head_"])
            while int(chunk) != 0:
                size = _integer(chunk.dereference()["size"])
                slots = int(_pointer(chunk.dereference()["slots"]))
                data = bytes(inferior.read_memory(slots, size * word))
                for address in struct.unpack("<%dQ" % size, data):
                    if address != 0:
                        self.threads.append(PrestoThread(gdb.Value(address).cast(thread_ptr), state_names))
                chunk = _pointer(chunk.dereference()["next"])
        self.threads.sort(key=lambda t: t.id)


def runtimes():
    """Every live runtime of the inferior, the one made last first."""
    symbol = gdb.lookup_global_symbol("presto::detail::debug_runtimes")
    if symbol is None:
        raise gdb.GdbError("presto: this program has no presto::detail::debug_runtimes: it does not link "
                           "the PRESTO library, or was built without debug information (-g)")
    found = []
    anchor = symbol.value()["head"]
    while int(anchor) != 0:
        found.append(PrestoRuntime(anchor["runtime"]))
        anchor = anchor["next"]
    return found


def _os_thread_running(thread):
    """The gdb thread (an OS thread) whose stack pointer lies on `thread`'s stack, or None."""
    selected = gdb.selected_thread()
    frame_level = gdb.selected_frame().level() if selected is not None else None
    try:
        for os_thread in gdb.selected_inferior().threads():
            if not os_thread.is_valid() or not os_thread.is_stopped():
                continue
            os_thread.switch()
            if thread.on_stack(int(gdb.newest_frame().read_register("sp"))):
                return os_thread
        return None
    finally:
        if selected is not None:
            selected.switch()
            gdb.execute("frame %d" % frame_level, to_string=True)


def _os_thread_label(os_thread):
    return "gdb thread %d (LWP %d)" % (os_thread.num, os_thread.ptid[1])


class InfoPrestoThreads(gdb.Command):
    """List the presto threads of every live runtime: id, name, state, the processor that runs
it (or ran it last) and the object it waits on; a running thread shows the OS thread (gdb
thread) running it. Usage: info presto-threads"""

    def __init__(self):
        super().__init__("info presto-threads", gdb.COMMAND_STATUS)

    def invoke(self, argument, from_tty):
        found = runtimes()
        if not found:
            gdb.write("No live presto runtime.\n")
            return
        for rt in found:
            gdb.write("Runtime '%s' (RuntimeImpl 0x%x): %d processor(s), %d live thread(s)\n"
                      % (rt.name, rt.address, rt.active_processors, len(rt.threads)))
            gdb.write("  %4s  %-16s %-10s %-4s  %-18s  %s\n"
                      % ("Id", "Name", "State", "Proc", "Thread", "Waits on / runs on"))
            for t in rt.threads:
                if t.state == "running":
                    os_thread = _os_thread_running(t)
                    where = "runs on " + (_os_thread_label(os_thread) if os_thread else "an unknown OS thread")
                elif t.waiting_on is not None:
                    where = t.waiting_on
                elif t.state == "ready" and t.fctx == 0:
                    where = "(not run yet)"
                else:
                    where = ""
                proc = "-" if t.processor is None else str(t.processor)
                row = "  %4d  %-16s %-10s %-4s  0x%-16x  %s" % (t.id, t.name, t.state, proc, t.address, where)
                gdb.write(row.rstrip() + "\n")


def _find_thread(argument):
    words = argument.split()
    if not words:
        raise gdb.GdbError("usage: presto-bt ID [BT-ARGS]  (ID: a thread id or a Thread address, "
                           "from `info presto-threads`)")
    key = words[0]
    try:
        number = int(key, 0)
    except ValueError:
        raise gdb.GdbError("presto-bt: '%s' is not a thread id or address" % key)
    threads = [t for rt in runtimes() for t in rt.threads]
    matches = [t for t in threads if t.address == number] or [t for t in threads if t.id == number]
    if not matches:
        raise gdb.GdbError("presto-bt: no live presto thread with id or address %s (see `info presto-threads`)" % key)
    if len(matches) > 1:
        raise gdb.GdbError("presto-bt: %d runtimes have a thread %s; name it by its address: %s"
                           % (len(matches), key, ", ".join("0x%x" % t.address for t in matches)))
    return matches[0], " ".join(words[1:])


# A switch (PRESTO's presto_jump_context, or Boost.Context's jump_fcontext, which share the
# x86-64 System V layout) leaves the saved stack pointer `fctx` pointing at: MXCSR/x87 control
# words, r12, r13, r14, r15, rbx, rbp, then the return address; the switched-out code resumes
# there with rsp = fctx + 0x40.
_X86_64_SAVED = (("r12", 0x08), ("r13", 0x10), ("r14", 0x18), ("r15", 0x20), ("rbx", 0x28), ("rbp", 0x30))


def _saved_registers(fctx):
    arch = gdb.selected_inferior().architecture().name()
    if arch != "i386:x86-64":
        raise gdb.GdbError("presto-bt: rebuilding a suspended thread's frame is implemented for x86-64 "
                           "(Boost.Context's System V fcontext layout) only, not for %s; "
                           "`info presto-threads` works there" % arch)
    words = struct.unpack("<8Q", bytes(gdb.selected_inferior().read_memory(fctx, 0x40)))
    regs = {name: words[offset // 8] for name, offset in _X86_64_SAVED}
    regs["rsp"] = fctx + 0x40
    regs["rip"] = words[7]
    return regs


def _backtrace_from(regs, bt_args, from_tty):
    """Runs `bt` on the selected OS thread with `regs` in place of its own, then restores them."""
    os_thread = gdb.selected_thread()
    if os_thread is None or not os_thread.is_stopped():
        raise gdb.GdbError("presto-bt: needs a stopped process with a selected OS thread")
    frame_level = gdb.selected_frame().level()
    gdb.execute("frame 0", to_string=True)
    frame = gdb.newest_frame()
    original = {name: int(frame.read_register(name)) for name in regs}
    try:
        for name, value in regs.items():
            gdb.execute("set $%s = %#x" % (name, value), to_string=True)
        gdb.execute("bt " + bt_args, from_tty)
    finally:
        failed = []
        for name, value in original.items():
            try:
                gdb.execute("set $%s = %#x" % (name, value), to_string=True)
            except gdb.error as e:
                failed.append("$%s = %#x (%s)" % (name, value, e))
        if failed:
            gdb.write("presto-bt: could not restore the registers of %s; set them by hand: %s\n"
                      % (_os_thread_label(os_thread), "; ".join(failed)), gdb.STDERR)
        gdb.execute("frame %d" % frame_level, to_string=True)


class PrestoBacktrace(gdb.Command):
    """Print the backtrace of a presto thread. Usage: presto-bt ID [BT-ARGS]
ID is a thread id or a Thread's address, as `info presto-threads` shows them; BT-ARGS are passed
to `bt` (for example `full` or `-3`). A blocked or ready thread's frame is rebuilt from the
context saved when it was switched out (x86-64, live process); for a running thread the
backtrace of the OS thread running it is shown."""

    def __init__(self):
        super().__init__("presto-bt", gdb.COMMAND_STACK)

    def invoke(self, argument, from_tty):
        thread, bt_args = _find_thread(argument)
        if thread.state == "running":
            os_thread = _os_thread_running(thread)
            if os_thread is None:
                raise gdb.GdbError("presto-bt: %s is running, but no OS thread's stack pointer is on its stack"
                                   % thread.label)
            gdb.write("%s is running on processor %s, %s:\n"
                      % (thread.label, thread.processor, _os_thread_label(os_thread)))
            selected = gdb.selected_thread()
            frame_level = gdb.selected_frame().level()
            os_thread.switch()
            try:
                gdb.execute("bt " + bt_args, from_tty)
            finally:
                selected.switch()
                gdb.execute("frame %d" % frame_level, to_string=True)
            return
        if thread.fctx == 0 and thread.state == "blocked":
            # An inline join (RuntimeConfig::inline_joins): its stack runs the thread it joins.
            gdb.write("%s runs %s inline on its own stack: that thread's backtrace shows both.\n"
                      % (thread.label, thread.waiting_on))
            return
        if thread.fctx == 0:
            gdb.write("%s is %s and has not run yet: it has no stack or frames.\n" % (thread.label, thread.state))
            return
        if thread.state not in ("ready", "blocked"):
            raise gdb.GdbError("presto-bt: %s is %s: it has no saved frame to show" % (thread.label, thread.state))
        waits = " on " + thread.waiting_on if thread.waiting_on else ""
        gdb.write("%s, %s%s, switched out at sp 0x%x:\n" % (thread.label, thread.state, waits, thread.fctx))
        _backtrace_from(_saved_registers(thread.fctx), bt_args, from_tty)


InfoPrestoThreads()
PrestoBacktrace()
