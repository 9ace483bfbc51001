import sys, glob, statistics, os
d = sys.argv[1]
def load(path):
    out = {}
    for line in open(path):
        body = line.split("#")[0].split()
        if not body or body[0] in ("pems-model",):
            continue
        if body[0] == "date":
            out["date"] = body[1]; continue
        n = 2 if body[0] == "agg_at" else len(body) - 1
        out[" ".join(body[:n])] = [float(x) for x in body[n:]]
    return out
def table(files, keys, title):
    ps = [load(f) for f in files]
    med = load(os.path.join(d, "model-base.params")) if os.path.exists(os.path.join(d, "model-base.params")) else {}
    print("| %s | %s | median (used) |" % (title, " | ".join(os.path.basename(f).split(".")[1] for f in files)))
    print("|---|" + "---:|" * (len(files) + 1))
    for k, scale, fmt in keys:
        def f(v):
            return "–" if v is None else " / ".join(fmt % (x * scale) for x in v)
        print("| %s | %s | %s |" % (k, " | ".join(f(p.get(k)) for p in ps), f(med.get(k))))
base = sorted(glob.glob(os.path.join(d, "model-base.base[0-9].params")))
mpi = sorted(glob.glob(os.path.join(d, "model-base.mpi[0-9].params")))
bk = [("date", 1, "%s")]
bk = [("sort_part_u64", 1e-6, "%.0f"), ("sort_part_rec100", 1e-6, "%.0f"), ("sort_local_u64", 1e-6, "%.0f"),
      ("sort_local_rec100", 1e-6, "%.0f"), ("agg_raw", 1e-6, "%.1f"), ("agg_hash", 1e-6, "%.1f"),
      ("agg_merge", 1e-6, "%.1f"), ("agg_write", 1e-6, "%.0f"), ("agg_compact", 1e-6, "%.2f"), ("agg_fmt", 1e-6, "%.2f"),
      ("sgd", 1e-6, "%.0f"), ("read_bw", 1e-9, "%.2f"), ("write_bw", 1e-9, "%.2f"), ("fwrite_bw", 1e-9, "%.2f"),
      ("iops", 1, "%.0f"), ("lat", 1e3, "%.3f"), ("overlap", 1, "%.3f"), ("spread", 1, "%.2f"), ("flush_bw", 1e-9, "%.1f"),
      ("load", 1, "%.3f"), ("poll", 1, "%.3f"), ("copy_bw", 1e-9, "%.1f"), ("qsort_ns", 1, "%.2f"), ("vp_secs", 1e6, "%.2f")]
ps = [load(f) for f in base]
for k in sorted(set(k for p in ps for k in p if k.startswith(("agg_at", "setup_mpi", "cpu_p", "poll_p")))):
    bk.append((k, 1e-6 if k.startswith("agg_at") else 1, "%.2f" if k.startswith("agg_at") else "%.4f"))
print("dates: " + ", ".join(p.get("date", "?") for p in ps))
print()
table(base, bk, "base parameter (MB/s, M rows/s, GB/s, ms, us)")
if mpi:
    print()
    pm = [load(f) for f in mpi]
    keys = []
    for p in pm:
        for k in p:
            if k not in keys: keys.append(k)
    table(mpi, [(k, 1e3 if k.startswith("lbusy") else 1, "%.2f" if k.startswith("lbusy") else "%.3f") for k in keys], "calibrate-mpi line (lbusy in ms)")
