#!/usr/bin/env python3
"""How users consume PRESTO, checked on every test run (suite 'consumers').

    consumers_test.py MODE SOURCE_ROOT BUILD_ROOT WORK_DIR VERSION CXX...

MODE is one of
  pkgconfig   install BUILD_ROOT into a temporary DESTDIR; build consumer.cpp with
              `pkg-config --cflags --libs presto-futures presto-psim` and run it; link it
              again with presto-instrument (under --as-needed) and check that PRESTO_PROFILE
              writes its report; check that the program without the library warns about
              PRESTO_PROFILE, and that LD_PRELOAD of the installed libpresto-instrument.so
              makes it write the report; check that compiling without C++20 says so.
  subproject  a Meson project using PRESTO as a subproject, in release mode: dependency('presto-psim')
              and dependency('presto-futures'); builds only what the consumer needs, and
              checks that the subproject defined no tests, benchmarks or apps.
  cmake       install into a temporary DESTDIR and build consumer.cpp with CMake's
              find_package(presto) and presto::psim, presto::futures, presto::instrument (under
              --as-needed; PRESTO_PROFILE must write its report); skipped (exit status 77)
              when cmake is not installed.
CXX is the compiler command of the build (ccache included) used for the outside builds.
WORK_DIR is emptied first; it lies in the build tree so that ccache sees the same paths each
run.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def run(cmd, env=None, cwd=None, expect_ok=True):
    """Runs cmd; prints it and its output; returns the CompletedProcess."""
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.stdout:
        print(p.stdout, end="" if p.stdout.endswith("\n") else "\n")
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAILED (status {p.returncode}): {' '.join(cmd)}")
    return p


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok:", message)


def install(build_root, work):
    """Installs build_root under work/dest; returns (destdir, prefix dir, lib dir) as paths."""
    dest = os.path.join(work, "dest")
    run(["meson", "install", "-C", build_root, "--no-rebuild", "--quiet", "--destdir", dest])
    info = json.loads(subprocess.run(["meson", "introspect", "--buildoptions", build_root],
                                     stdout=subprocess.PIPE, text=True, check=True).stdout)
    opts = {o["name"]: o["value"] for o in info}
    prefix = dest + opts["prefix"]
    libdir = os.path.join(prefix, opts["libdir"])
    return dest, prefix, libdir


def with_env(**changes):
    env = dict(os.environ)
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def pkgconfig(source_root, build_root, work, version, cxx):
    dest, prefix, libdir = install(build_root, work)
    pc_env = with_env(PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"), PKG_CONFIG_SYSROOT_DIR=dest)

    def flags(*args):
        return run(["pkg-config", *args], env=pc_env).stdout.split()

    cflags = flags("--cflags", "presto-futures", "presto-psim")
    check("-std=c++20" in cflags, "pkg-config --cflags presto carries -std=c++20")
    check("-lboost_context" in flags("--libs", "--static", "presto"), "presto.pc names Boost.Context for static links")
    obj = os.path.join(work, "consumer.o")
    run([*cxx, *cflags, "-c", os.path.join(HERE, "consumer.cpp"), "-o", obj])
    plain = os.path.join(work, "consumer")
    run([*cxx, obj, "-o", plain, "-Wl,--as-needed", *flags("--libs", "presto-futures", "presto-psim")])
    run_env = with_env(LD_LIBRARY_PATH=libdir, PRESTO_TRACE=None, PRESTO_PROFILE=None)
    out = run([plain, version], env=run_env).stdout
    check("sum 1.." in out and "right" in out, "the pkg-config-built program runs")

    # The SONAME is versioned, and the program records it.
    soname = run(["objdump", "-p", plain], env=run_env).stdout
    check(any(line.split()[-1].startswith("libpresto.so.") for line in soname.splitlines() if "NEEDED" in line),
          "the program needs a versioned libpresto.so.N")

    # PRESTO_PROFILE without the instrument library: a warning, not silence.
    report = os.path.join(work, "report.txt")
    p = run([plain, version], env=with_env(LD_LIBRARY_PATH=libdir, PRESTO_PROFILE=report))
    check("PRESTO_PROFILE is set but presto::instrument is not in this program" in p.stdout,
          "PRESTO_PROFILE without presto::instrument warns on stderr")
    check(not os.path.exists(report), "and writes no report")

    # The same program with the installed shared instrument library preloaded.
    preload = os.path.join(libdir, "libpresto-instrument.so")
    p = run([plain, version], env=with_env(LD_LIBRARY_PATH=libdir, PRESTO_PROFILE=report, LD_PRELOAD=preload))
    check(os.path.exists(report) and "is not in this program" not in p.stdout,
          "LD_PRELOAD=libpresto-instrument.so makes PRESTO_PROFILE write the report")
    os.remove(report)

    # Linked with pkg-config presto-instrument under --as-needed: the library is kept.
    traced = os.path.join(work, "consumer-instrumented")
    run([*cxx, obj, "-o", traced, "-Wl,--as-needed",
         *flags("--libs", "presto-futures", "presto-psim", "presto-instrument")])
    p = run([traced, version], env=with_env(LD_LIBRARY_PATH=libdir, PRESTO_PROFILE=report))
    check(os.path.exists(report), "a program linking presto-instrument by pkg-config writes PRESTO_PROFILE's report")

    # Without C++20: one clear message.
    p = run([*cxx, *cflags, "-std=c++17", "-fsyntax-only", os.path.join(HERE, "consumer.cpp")], expect_ok=False)
    check(p.returncode != 0 and "PRESTO needs C++20" in p.stdout, "compiling without C++20 says 'PRESTO needs C++20'")


def subproject(source_root, build_root, work, version, cxx):
    project = os.path.join(work, "project")
    os.makedirs(os.path.join(project, "subprojects"))
    os.symlink(source_root, os.path.join(project, "subprojects", "presto"))
    shutil.copy(os.path.join(HERE, "consumer.cpp"), project)
    with open(os.path.join(project, "meson.build"), "w") as f:
        f.write("project('consumer', 'cpp', default_options: ['cpp_std=c++20', 'buildtype=release'])\n"
                "subproject('presto')\n"
                "executable('consumer', 'consumer.cpp',\n"
                "  dependencies: [dependency('presto-futures'), dependency('presto-psim')])\n")
    builddir = os.path.join(project, "build")
    env = with_env(CXX=" ".join(cxx))
    run(["meson", "setup", builddir, project], env=env)
    targets = json.loads(subprocess.run(["meson", "introspect", "--targets", builddir],
                                        stdout=subprocess.PIPE, text=True, check=True).stdout)
    names = {t["name"] for t in targets}
    check("core_tests" not in names and "presto-matmul" not in names and not any("bench" in n for n in names),
          "PRESTO as a subproject defines no tests, benchmarks or apps (%d targets)" % len(names))
    run(["meson", "compile", "-C", builddir, "consumer"], env=env)
    out = run([os.path.join(builddir, "consumer"), version]).stdout
    check("right" in out, "the release-mode subproject consumer runs")


def cmake(source_root, build_root, work, version, cxx):
    if shutil.which("cmake") is None:
        print("SKIP: cmake is not installed (tools/setup installs it); the CMake package is not checked")
        sys.exit(SKIP)
    dest, prefix, libdir = install(build_root, work)
    project = os.path.join(work, "project")
    os.makedirs(project)
    shutil.copy(os.path.join(HERE, "consumer.cpp"), project)
    with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.16)\n"
                "project(consumer CXX)\n"
                "find_package(presto %s REQUIRED)\n"
                "add_executable(consumer consumer.cpp)\n"
                "target_link_libraries(consumer PRIVATE presto::futures presto::psim presto::instrument)\n" % version)
    builddir = os.path.join(project, "build")
    launcher = [f"-DCMAKE_CXX_COMPILER_LAUNCHER={cxx[0]}"] if len(cxx) > 1 else []
    # --as-needed, as on Ubuntu: presto::instrument must still be kept.
    run(["cmake", "-S", project, "-B", builddir, f"-DCMAKE_PREFIX_PATH={prefix}",
         f"-DCMAKE_CXX_COMPILER={cxx[-1]}", "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed", *launcher])
    run(["cmake", "--build", builddir])
    report = os.path.join(work, "report.txt")
    out = run([os.path.join(builddir, "consumer"), version],
              env=with_env(LD_LIBRARY_PATH=libdir, PRESTO_PROFILE=report)).stdout
    check("right" in out, "the CMake-built consumer runs")
    check(os.path.exists(report), "presto::instrument, linked with --as-needed, writes PRESTO_PROFILE's report")


def main():
    mode, source_root, build_root, work, version, *cxx = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    {"pkgconfig": pkgconfig, "subproject": subproject, "cmake": cmake}[mode](
        os.path.abspath(source_root), os.path.abspath(build_root), work, version, cxx)


if __name__ == "__main__":
    main()
