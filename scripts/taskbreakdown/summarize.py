"""Summarize the TASKLOG lines of a log (patch.py): per workflow type and
kind of task (a worker's task that accepts an Update, one that answers
it, any other), the execution time and the payload walk's, in
microseconds, at the median, p90 and p99."""
import collections
import sys

by, walk = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1], errors="replace"):
    if not line.startswith("TASKLOG"):
        continue
    f = line.split()
    us, visit, wtype = int(f[1]), int(f[2][len("visit="):]), f[3]
    sent = line.split(" cmd=")[1] if " cmd=" in line else ""
    kind = "accepts an Update" if "Acceptance" in sent else "answers an Update" if "Response" in sent else "other"
    for k in (f"{wtype} (all)", f"{wtype}: {kind}"):
        by[k].append(us)
        walk[k].append(visit)


def q(v, x):
    v = sorted(v)
    return v[min(len(v) - 1, int(x * len(v)))]


print(f"{'tasks':40s} {'n':>5s} {'p50':>6s} {'p90':>6s} {'p99':>6s} | walk p50   p99")
for k in sorted(by):
    v = by[k]
    if len(v) >= 50:
        print(f"{k:40s} {len(v):5d} {q(v, .5):6d} {q(v, .9):6d} {q(v, .99):6d} | {q(walk[k], .5):8d} {q(walk[k], .99):5d}")
