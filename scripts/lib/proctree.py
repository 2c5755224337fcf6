"""A process tree's figures from /proc, for the app's benchmark
(scripts/bench-app): each process's footprint as swapsight counts it on
Linux (RssAnon + RssShmem of /proc/PID/status), its PSS (smaps_rollup) and
its CPU over a window: the nanoseconds its threads ran
(/proc/PID/task/TID/schedstat, first field), where the kernel gives them,
else utime + stime of /proc/PID/stat (man 5 proc), which counts in clock
ticks of 10 ms: over a 30 s window that is 0.03 % of a core a tick, too
coarse for a hidden app's 0.1 %."""

import os
import time

HZ = os.sysconf("SC_CLK_TCK")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def children():
    """ppid → [pid] for every process now."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        stat = read(f"/proc/{d}/stat")
        if not stat:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree(root):
    kids, out, todo = children(), [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def free_display():
    """An X display number no server holds, for an Xvfb of our own."""
    for n in range(90, 200):
        if not os.path.exists(f"/tmp/.X{n}-lock") and not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            return f":{n}"
    raise SystemExit("no free X display number")


def name_of(pid):
    return read(f"/proc/{pid}/comm").strip() or f"pid {pid}"


def kb(status, key):
    for line in status.splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def ticks(pid):
    stat = read(f"/proc/{pid}/stat")
    if not stat:
        return None
    f = stat[stat.rindex(")") + 2 :].split()
    return int(f[11]) + int(f[12])  # utime, stime (fields 14, 15)


def run_ns(pid):
    """tid → ns on CPU, for every thread of pid now; {} where not given."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        first = read(f"/proc/{pid}/task/{tid}/schedstat").split()[:1]
        if first and first[0].isdigit():
            out[tid] = int(first[0])
    return out


def cpu_pct(before, after, t0, t1, window_s):
    """CPU % of one core over window_s: by the threads' run time when both
    reads gave it (a thread that ended within the window leaves out what it
    ran in it; one that started counts from its start), else by ticks."""
    if before and after:
        ns = sum(v - before.get(tid, 0) for tid, v in after.items())
        return max(ns, 0) / 1e9 / window_s * 100
    if t1 is None or t0 is None:
        return None
    return (t1 - t0) / HZ / window_s * 100


def figures(root, window_s):
    """Per process of root's tree: footprint, PSS (MiB) and CPU % over window_s."""
    pids = tree(root)
    t0 = {p: ticks(p) for p in pids}
    ns0 = {p: run_ns(p) for p in pids}
    time.sleep(window_s)
    rows = []
    for p in tree(root):
        status = read(f"/proc/{p}/status")
        if not status:
            continue
        pss = kb(read(f"/proc/{p}/smaps_rollup"), "Pss")
        cpu = cpu_pct(ns0.get(p), run_ns(p), t0.get(p), ticks(p), window_s)
        rows.append(
            {
                "pid": p,
                "name": name_of(p),
                "footprint_mb": (kb(status, "RssAnon") + kb(status, "RssShmem")) / 1024,
                "pss_mb": pss / 1024,
                "rss_mb": kb(status, "VmRSS") / 1024,
                "cpu_pct": cpu,
            }
        )
    return rows


def total(rows):
    return {
        "footprint_mb": sum(r["footprint_mb"] for r in rows),
        "pss_mb": sum(r["pss_mb"] for r in rows),
        "cpu_pct": sum(r["cpu_pct"] or 0 for r in rows),
    }
