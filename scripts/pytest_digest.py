#!/usr/bin/env python3
"""The few lines worth reading in one pytest run's log, for scripts/gpu-python.sh, whose output reaches the
reader only through its last 12,000 characters: the counts and time, the slowest tests, and on a failure or a
time-out the failing tests with their own frames (tests/python and the pscan package: site-packages frames and
faulthandler's long "Extension modules" line are left out), each thread's stack once, and what the process's
threads were doing in the kernel (gpu-python.sh appends that to the log before it aborts a run).

Usage: python3 scripts/pytest_digest.py LOG LABEL RC SECONDS TIMED_OUT(0/1)   (prints; exits 0)
The last line is the run's summary row, "LABEL  p passed  f failed  s skipped  T s  STATUS", which gpu-python.sh
collects into the table it prints last.
"""
import re
import sys

OURS = re.compile(r"(tests/python/|/pscan/|^test_|[\s\"]test_\w+\.py|conftest\.py)")
FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+) in (\S+)')
SECTION = re.compile(r"^(=+|_+) (.*?) [=_]+$")


def short_path(path):
    """site-packages/dask/order.py -> dask/order.py; .../python/pscan/_api.py -> pscan/_api.py."""
    for cut in ("site-packages/", "dist-packages/", "/python/pscan/", "tests/python/"):
        i = path.rfind(cut)
        if i >= 0:
            rest = path[i + len(cut):]
            return ("pscan/" if cut == "/python/pscan/" else "") + rest
    return path.rsplit("/", 1)[-1] if "/lib/python3" in path else path


def counts(lines):
    """{'passed': 3, ...} and the seconds from pytest's closing line, or ({}, None) when it never closed."""
    for line in reversed(lines):
        m = re.match(r"^=+ (.*) in ([\d.]+)s", line.strip()) or re.match(r"^(\d+ \w+.*) in ([\d.]+)s", line.strip())
        if m:
            found = dict((k, int(v)) for v, k in re.findall(r"(\d+) (\w+)", m.group(1)))
            return found, float(m.group(2))
    found = {}  # stopped before pytest's closing line: its -v lines
    for line in lines:
        m = re.match(r"^\S+\.py::\S+ (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)", line)
        if m:
            found[m.group(1).lower()] = found.get(m.group(1).lower(), 0) + 1
    return found, None


def section(lines, title_re):
    """The lines after the ==== title ==== line that matches, up to the next such line."""
    out, inside = [], False
    for line in lines:
        m = SECTION.match(line.strip())
        if m and m.group(1).startswith("="):
            if inside:
                break
            inside = bool(re.search(title_re, m.group(2)))
            continue
        if inside:
            out.append(line)
    return out


def durations(lines):
    rows = []
    for line in section(lines, r"slowest \d+ durations"):
        m = re.match(r"^([\d.]+)s (call|setup|teardown)\s+(\S+)", line.strip())
        if m and float(m.group(1)) >= 0.1:
            name = m.group(3).split("::", 1)[-1]
            rows.append(f"{float(m.group(1)):.1f}s {name}" + ("" if m.group(2) == "call" else f" ({m.group(2)})"))
    return rows


def failures(lines, budget=60):
    """Per failed test (pytest --tb=short): its title, the frames in our files with their source line, and the
    first E lines."""
    out = []
    for line in section(lines, r"^(FAILURES|ERRORS)$"):
        s = line.rstrip()
        m = SECTION.match(s.strip())
        if m and m.group(1).startswith("_"):
            out.append(f"  -- {m.group(2)}")
            keep_next = False
            e_lines = 0
            continue
        if not out:
            continue
        if re.match(r"^\S+:\d+: in \S+", s):
            keep_next = bool(OURS.search(s))
            if keep_next:
                out.append("   " + s)
            continue
        if s.startswith("E "):
            e_lines += 1
            if e_lines <= 6:
                out.append("   " + s[:200])
            continue
        if keep_next and s.startswith("    "):
            out.append("   " + s[:200])
            keep_next = False
    if len(out) > budget:
        out = out[:budget] + [f"  ... {len(out) - budget} more lines in the log"]
    return out


def stacks(lines, budget=70):
    """faulthandler's dumps ("Timeout (0:02:00)!" from pytest's faulthandler_timeout, "Fatal Python error:
    Aborted" from the time-out's SIGABRT): per thread the innermost frame and our frames; identical threads
    once, with a count."""
    out, i = [], 0
    while i < len(lines):
        m = re.search(r"(Timeout \(\S+\)!|Fatal Python error: \w+)", lines[i])
        if not m:
            i += 1
            continue
        out.append(f"  {m.group(1)}")
        threads, cur = [], None
        i += 1
        while i < len(lines):
            s = lines[i].rstrip()
            if s.startswith("Thread 0x") or s.startswith("Current thread 0x"):
                cur = {"current": s.startswith("Current"), "gc": False, "frames": []}
                threads.append(cur)
            elif cur is not None and s.strip() == "Garbage-collecting":
                cur["gc"] = True
            elif cur is not None and FRAME.match(s):
                cur["frames"].append(FRAME.match(s).groups())
            elif not (not s.strip() or s.startswith("Extension modules") or s.startswith("  <") or
                      s.startswith("Python runtime state") or s.startswith("  ...")):
                break
            i += 1
        seen = {}
        for t in threads:
            kept = [f"{short_path(path)}:{ln} {fn}" for k, (path, ln, fn) in enumerate(t["frames"])
                    if k == 0 or OURS.search(path)]
            key = (t["current"], t["gc"], tuple(kept))
            seen[key] = seen.get(key, 0) + 1
        for (current, collecting, kept), n in seen.items():
            head = ("current thread" if current else "thread") + (" x%d" % n if n > 1 else "")
            head += " [Garbage-collecting]" if collecting else ""
            out.append(f"   {head}: " + (" <- ".join(kept) if kept else "(no Python frames)"))
    if len(out) > budget:
        out = out[:budget] + [f"  ... {len(out) - budget} more lines in the log"]
    return out


def main():
    log, label, rc, secs, timed_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == "1"
    with open(log, errors="replace") as f:
        lines = f.read().splitlines()
    found, _ = counts(lines)
    slow = durations(lines)
    if slow:
        print("  slowest: " + "; ".join(slow))
    gc_line = [s for s in lines if s.startswith("gc: ")]
    if gc_line:
        print("  " + gc_line[-1])
    long_gc = [m.group(0) for m in (re.search(r"\[gc\] .*", s) for s in lines) if m]
    for s in long_gc[:5]:
        print("  " + s[:220])
    if len(long_gc) > 5:
        print(f"  ... {len(long_gc) - 5} more long collections")
    skipped = sorted(set(re.sub(r"^SKIPPED \[\d+\] \S+: ", "", s) for s in lines if s.startswith("SKIPPED [")))
    for s in skipped[:3]:
        print("  skipped: " + s[:160])
    if rc != 0 or timed_out:
        failed = [s for s in lines if s.startswith("FAILED ") or s.startswith("ERROR ")]
        if not failed:  # no closing summary (stopped): the -v lines
            failed = ["FAILED " + m.group(1) for m in (re.match(r"^(\S+\.py::\S+) (FAILED|ERROR)", s) for s in lines) if m]
        for s in failed[:12]:
            print("  " + s[:220])
        if len(failed) > 12:
            print(f"  ... {len(failed) - 12} more failed")
        for s in failures(lines):
            print(s)
    for s in stacks(lines):
        print(s)
    if timed_out:
        running = [s for s in lines if re.match(r"^\S+\.py::\S+", s) and not re.search(r"(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)", s)]
        if running:
            print(f"  running when stopped: {running[-1].split()[0]}")
        kernel = section(lines, r"^threads in the kernel")
        for s in kernel[:24]:
            print("  " + s[:200])
    status = "TIMEOUT" if timed_out else ("ok" if rc in (0, 5) else f"FAILED (rc {rc})")
    print(f"{label:22s} {found.get('passed', 0):4d} passed {found.get('failed', 0) + found.get('error', 0) + found.get('errors', 0):3d} "
          f"failed {found.get('skipped', 0):3d} skipped {secs:7.1f} s  {status}")


if __name__ == "__main__":
    main()
