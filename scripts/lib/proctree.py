"""A process tree's figures from /proc, for the app's benchmark
(scripts/bench-app): each process's footprint as swapsight counts it on
Linux (RssAnon + RssShmem of /proc/PID/status), its PSS (smaps_rollup) and
its CPU over a window (utime + stime of /proc/PID/stat, man 5 proc)."""

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


def figures(root, window_s):
    """Per process of root's tree: footprint, PSS (MB) and CPU % over window_s."""
    pids = tree(root)
    t0 = {p: ticks(p) for p in pids}
    time.sleep(window_s)
    rows = []
    for p in tree(root):
        status = read(f"/proc/{p}/status")
        if not status:
            continue
        pss = kb(read(f"/proc/{p}/smaps_rollup"), "Pss")
        t1, start = ticks(p), t0.get(p)
        cpu = None if t1 is None or start is None else (t1 - start) / HZ / window_s * 100
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
