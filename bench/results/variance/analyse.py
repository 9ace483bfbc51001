#!/usr/bin/env python3
"""analyse.py RAWDIR: tables of bench/variance.sh's runs (runs.txt, faults.txt, json/)."""
import glob, json, math, os, statistics as st, sys

raw = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "raw")
HZ = 100.0


def kv(line):
    d = {}
    for w in line.split():
        if "=" in w:
            k, v = w.split("=", 1)
            try:
                d[k] = float(v)
            except ValueError:
                d[k] = v
    return d


def pearson(x, y):
    if len(x) < 3:
        return float("nan")
    mx, my = st.mean(x), st.mean(y)
    sx = math.sqrt(sum((a - mx) ** 2 for a in x))
    sy = math.sqrt(sum((b - my) ** 2 for b in y))
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / (sx * sy) if sx and sy else float("nan")


def rank(v):
    o = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    for k, i in enumerate(o):
        r[i] = k
    return r


def spearman(x, y):
    return pearson(rank(x), rank(y))


excluded = set()
if os.path.exists(os.path.join(raw, "excluded.txt")):
    for line in open(os.path.join(raw, "excluded.txt")):
        for w in line.split():
            if not w.isdigit():
                break
            excluded.add(int(w))
runs = []
for line in open(os.path.join(raw, "runs.txt")):
    if not line.startswith("run "):
        continue
    d = kv(line)
    if int(d["n"]) in excluded:
        continue
    d["cpu"] = d["usr"] + d["sys"]
    d["probe_c"] = (d["pre_compute_s"] + d["post_compute_s"]) / 2
    d["probe_m"] = (d["pre_mem_s"] + d["post_mem_s"]) / 2
    d["rk_gap_mib"] = (d["a_rk"] - d["g_rk"]) / 1024
    d["rk_run_mib"] = (d["b_rk"] - d["a_rk"]) / 1024
    d["thp"] = d["b_vm_thp_fault_alloc"] - d["a_vm_thp_fault_alloc"]
    d["pgf"] = d["b_vm_pgfault"] - d["a_vm_pgfault"]
    tot = sum(d["b_st_" + k] - d["a_st_" + k] for k in ("user", "nice", "sys", "idle", "iowait", "irq", "softirq", "steal"))
    d["steal_pct"] = 100 * (d["b_st_steal"] - d["a_st_steal"]) / tot if tot else 0
    d["iowait_pct"] = 100 * (d["b_st_iowait"] - d["a_st_iowait"]) / tot if tot else 0
    d["stsys_s"] = (d["b_st_sys"] - d["a_st_sys"]) / HZ
    d["stusr_s"] = (d["b_st_user"] - d["a_st_user"]) / HZ
    busy = sum(d["b_st_" + k] - d["a_st_" + k] for k in ("user", "nice", "sys", "irq", "softirq")) / HZ
    d["foreign_s"] = busy - d["usr"] - d["sys"]	# CPU of everything else on the machine (probe-free window)
    # the run's supersteps from its --stats-json (per rank: cpu, secs)
    js = glob.glob(os.path.join(raw, "json", "%s-*.json" % d["tag"]))
    d["steps"] = None
    if js:
        try:
            j = json.load(open(js[0]))
            d["steps"] = [(s.get("cpu", 0) * j.get("p", 1), s.get("secs", 0)) for s in j["steps"]]
            d["cpu_part"] = d["steps"][2][0]
            d["cpu_sortw"] = d["steps"][3][0]
        except Exception:
            pass
    runs.append(d)

faults = [kv(l) for l in open(os.path.join(raw, "faults.txt"))] if os.path.exists(os.path.join(raw, "faults.txt")) else []

def fmt_stats(v):
    v = sorted(v)
    return "%.3f | %.3f | %.3f | %.2fx | %.1f %%" % (v[0], st.median(v), v[-1], v[-1] / v[0], 100 * st.pstdev(v) / st.mean(v))

print("# runs: %d (excluded: %s), probes: %d, fault probes: %d\n" % (len(runs), sorted(excluded) or "none", 2 * len(runs), len(faults)))
print("## Spread (min | median | max | max/min | cv)\n")
print("| quantity | n | min | median | max | max/min | cv |")
print("|---|---:|---:|---:|---:|---:|---:|")
pc = [r["pre_compute_s"] for r in runs] + [r["post_compute_s"] for r in runs]
pm = [r["pre_mem_s"] for r in runs] + [r["post_mem_s"] for r in runs]
print("| probe compute s | %d | %s |" % (len(pc), fmt_stats(pc)))
print("| probe mem s | %d | %s |" % (len(pm), fmt_stats(pm)))
for key, lab in (("fault1_sys", "fault probe 1 sys s (512 MiB, 4 KiB pages, first touch)"), ("fault2_sys", "fault probe 2 sys s (again at once)"), ("fault3_sys", "fault probe 3 sys s (after 3 s)"),
                 ("thp1_sys", "thp probe 1 sys s (512 MiB, 2 MiB pages, first touch)"), ("thp2_sys", "thp probe 2 sys s (again at once)"), ("thp3_sys", "thp probe 3 sys s (after 3 s)")):
    v = [f[key] for f in faults if key in f]
    if v:
        print("| %s | %d | %s |" % (lab, len(v), fmt_stats(v)))
cases = sorted({(r["fmt"], int(r["p"])) for r in runs})
for c in cases:
    rs = [r for r in runs if (r["fmt"], int(r["p"])) == c]
    for key, lab in (("wall", "wall s"), ("cpu", "CPU s (user+sys)"), ("usr", "user s"), ("sys", "sys s")):
        print("| %s p=%d %s | %d | %s |" % (c[0], c[1], lab, len(rs), fmt_stats([r[key] for r in rs])))

print("\n## Correlation with the run's CPU (Pearson r / Spearman rho), per case\n")
xs = [("probe_c", "probe compute s"), ("probe_m", "probe mem s"), ("sys", "sys s"), ("usr", "user s"),
      ("perf_page_faults", "page faults"), ("thp", "THP faults"), ("perf_context_switches", "context switches"),
      ("perf_cpu_migrations", "migrations"), ("steal_pct", "steal %"), ("iowait_pct", "iowait %"), ("foreign_s", "other CPU s"),
      ("rk_gap_mib", "MiB reported to host in the gap"), ("rk_run_mib", "MiB reported during run"), ("gap", "gap s")]
print("| case | n | " + " | ".join(l for _, l in xs) + " |")
print("|---|---:|" + "---:|" * len(xs))
for c in cases:
    rs = [r for r in runs if (r["fmt"], int(r["p"])) == c]
    y = [r["cpu"] for r in rs]
    cells = []
    for k, _ in xs:
        x = [r.get(k, 0) for r in rs]
        cells.append("%+.2f / %+.2f" % (pearson(x, y), spearman(x, y)))
    print("| %s p=%d | %d | %s |" % (c[0], c[1], len(rs), " | ".join(cells)))

print("\n## Fast and slow thirds of each case (by CPU s): medians\n")
cols = [("cpu", "CPU s"), ("usr", "user s"), ("sys", "sys s"), ("wall", "wall s"), ("probe_c", "probe compute"),
        ("probe_m", "probe mem"), ("perf_page_faults", "faults"), ("thp", "THP faults"),
        ("perf_context_switches", "ctx sw"), ("perf_cpu_migrations", "migr"), ("steal_pct", "steal %"), ("foreign_s", "other CPU s"),
        ("rk_gap_mib", "rep. MiB gap"), ("rk_run_mib", "rep. MiB run")]
print("| case | third | n | " + " | ".join(l for _, l in cols) + " |")
print("|---|---|---:|" + "---:|" * len(cols))
for c in cases:
    rs = sorted([r for r in runs if (r["fmt"], int(r["p"])) == c], key=lambda r: r["cpu"])
    k = max(1, len(rs) // 3)
    for name, part in (("fast", rs[:k]), ("middle", rs[k:-k]), ("slow", rs[-k:])):
        if not part:
            continue
        print("| %s p=%d | %s | %d | %s |" % (c[0], c[1], name, len(part), " | ".join(
            ("%.0f" if k_ in ("perf_page_faults", "thp", "perf_context_switches", "perf_cpu_migrations") else "%.3f") % st.median(r.get(k_, 0) for r in part) for k_, _ in cols)))

print("\n## Per gap (0 or 4 s idle before the run): medians\n")
print("| case | gap s | n | CPU s | user s | sys s | wall s | rep. MiB gap |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for c in cases:
    for g in sorted({r["gap"] for r in runs}):
        part = [r for r in runs if (r["fmt"], int(r["p"])) == c and r["gap"] == g]
        if part:
            print("| %s p=%d | %g | %d | %.3f | %.3f | %.3f | %.3f | %.0f |" % (c[0], c[1], g, len(part),
                  st.median(r["cpu"] for r in part), st.median(r["usr"] for r in part), st.median(r["sys"] for r in part),
                  st.median(r["wall"] for r in part), st.median(r["rk_gap_mib"] for r in part)))

envs = sorted({r["env"] for r in runs})
if len(envs) > 1:
    print("\n## Environment x gap: medians (min - max of CPU s)\n")
    print("| case | env | gap s | n | CPU s | CPU min - max | user s | sys s | wall s | THP faults | page faults | partition CPU s | sort+write CPU s |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in cases:
        for e in envs:
            for g in sorted({r["gap"] for r in runs}):
                part = [r for r in runs if (r["fmt"], int(r["p"])) == c and r["env"] == e and r["gap"] == g]
                if part:
                    cp = [r["cpu"] for r in part]
                    print("| %s p=%d | %s | %g | %d | %.3f | %.2f - %.2f | %.3f | %.3f | %.3f | %.0f | %.0f | %.3f | %.3f |" % (c[0], c[1], e, g, len(part),
                          st.median(cp), min(cp), max(cp), *(st.median(r.get(k, 0) for r in part) for k in ("usr", "sys", "wall", "thp", "perf_page_faults", "cpu_part", "cpu_sortw"))))
    print("\n## Per environment: medians\n")
    print("| case | env | n | CPU s | user s | sys s | wall s | THP faults | faults |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in cases:
        for e in envs:
            part = [r for r in runs if (r["fmt"], int(r["p"])) == c and r["env"] == e]
            if part:
                print("| %s p=%d | %s | %d | %.3f | %.3f | %.3f | %.3f | %.0f | %.0f |" % (c[0], c[1], e, len(part),
                      *(st.median(r[k] for r in part) for k in ("cpu", "usr", "sys", "wall", "thp", "perf_page_faults"))))

with open(os.path.join(raw, "runs.csv"), "w") as f:
    keys = ["n", "tag", "fmt", "p", "gap", "env", "a_t", "wall", "usr", "sys", "cpu", "probe_c", "probe_m", "pre_compute_s", "post_compute_s",
            "pre_mem_s", "post_mem_s", "perf_task_clock", "perf_page_faults", "thp", "perf_context_switches", "perf_cpu_migrations",
            "steal_pct", "iowait_pct", "rk_gap_mib", "rk_run_mib"]
    f.write(",".join(keys) + "\n")
    for r in runs:
        f.write(",".join(str(r.get(k, "")) for k in keys) + "\n")

# pooled over the cases: each run relative to the median of its case (default environment)
print("\n## Pooled, default environment (no PEMS_NO_THP, no warming): each quantity over its case's median\n")
base = [r for r in runs if r["env"] == "-"]
med = {}
for c in cases:
    part = [r for r in base if (r["fmt"], int(r["p"])) == c]
    if part:
        med[c] = {k: st.median(r[k] for r in part) for k in ("cpu", "usr", "sys", "probe_c", "probe_m", "wall")}
rel = []
for r in base:
    m = med[(r["fmt"], int(r["p"]))]
    rel.append({"cpu": r["cpu"] / m["cpu"], "usr": r["usr"] / m["cpu"], "sys": r["sys"] / m["cpu"], "wall": r["wall"] / m["wall"],
                "probe_c": r["probe_c"] / m["probe_c"], "probe_m": r["probe_m"] / m["probe_m"], "gap": r["gap"],
                "rk_gap": r["rk_gap_mib"], "steal": r["steal_pct"], "foreign": r["foreign_s"],
                "pre_c": r["pre_compute_s"], "post_c": r["post_compute_s"]})
y = [x["cpu"] for x in rel]
print("%d runs; relative CPU: min %.2f, median %.2f, max %.2f (max/min %.2fx), cv %.1f %%" % (len(y), min(y), st.median(y), max(y), max(y) / min(y), 100 * st.pstdev(y) / st.mean(y)))
for k, lab in (("probe_c", "probe compute (relative)"), ("probe_m", "probe mem (relative)"), ("sys", "sys s / case median CPU"), ("usr", "user s / case median CPU"),
               ("gap", "gap s"), ("rk_gap", "MiB reported in the gap"), ("steal", "steal %"), ("foreign", "other CPU s")):
    x = [q[k] for q in rel]
    print("- r(relative CPU, %s) = %+.2f (Spearman %+.2f)" % (lab, pearson(x, y), spearman(x, y)))

print("\n## The controlled contrasts, per case: medians, and what of the difference is user and sys\n")
print("| case | A | B | CPU s A | CPU s B | B / A | user s B - A | sys s B - A | sys share of B - A |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
def cell(c, e, g):
    return [r for r in runs if (r["fmt"], int(r["p"])) == c and r["env"] == e and (g is None or r["gap"] == g)]
for c in cases:
    for (ea, ga, la), (eb, gb, lb) in (((("-", 0, "default, gap 0")), ("-", 4, "default, gap 4")),
                                       (("WARM", None, "warmed"), ("-", 4, "default, gap 4")),
                                       (("WARM", None, "warmed"), ("PEMS_NO_THP=1", None, "PEMS_NO_THP=1"))):
        A, B = cell(c, ea, ga), cell(c, eb, gb)
        if not A or not B:
            continue
        ca, cb = st.median(r["cpu"] for r in A), st.median(r["cpu"] for r in B)
        du = st.median(r["usr"] for r in B) - st.median(r["usr"] for r in A)
        ds = st.median(r["sys"] for r in B) - st.median(r["sys"] for r in A)
        print("| %s p=%d | %s (%d) | %s (%d) | %.3f | %.3f | %.2f | %+.3f | %+.3f | %s |" % (c[0], c[1], la, len(A), lb, len(B), ca, cb, cb / ca, du, ds,
              "%.0f %%" % (100 * ds / (du + ds)) if abs(du + ds) > 0.05 else "-"))

print("\n## Every run over its case's warmed median (WARM runs): the default environment, by gap\n")
print("| case | gap s | n | min | median | max | runs >= 1.2 | runs >= 1.4 |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for c in cases:
    W = cell(c, "WARM", None)
    if not W:
        continue
    ref = st.median(r["cpu"] for r in W)
    for g in (0, 4):
        v = sorted(r["cpu"] / ref for r in cell(c, "-", g))
        if v:
            print("| %s p=%d | %g | %d | %.2f | %.2f | %.2f | %d | %d |" % (c[0], c[1], g, len(v), v[0], st.median(v), v[-1],
                  sum(x >= 1.2 for x in v), sum(x >= 1.4 for x in v)))
    v = sorted(r["cpu"] / ref for r in W)
    print("| %s p=%d | warmed | %d | %.2f | %.2f | %.2f | %d | %d |" % (c[0], c[1], len(v), v[0], st.median(v), v[-1],
          sum(x >= 1.2 for x in v), sum(x >= 1.4 for x in v)))
