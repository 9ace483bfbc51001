#!/usr/bin/env python3
"""fit-spread.py PEMS_RUN PARAMS ROUND_DIR... - the seventh pass's fit of
the superstep form (docs/cost-model.md, seventh pass).

Each ROUND_DIR holds a validation round's logs/model-*-r*.{json,txt}
(`model predict --stats-json` tables of the build that ran them, with
PARAMS, the fifth pass's frozen file).  For each spread s the script
re-prices every superstep: the max of disk D and compute C becomes the
expected max of the two with relative deviation s (Clark's formula), and
each "overlap_alg ALGO P" share is lowered by what a calibration with the
spread would have measured less: the median over the calibration job's
supersteps (1 GiB, seed 7, predicted with PEMS_RUN from PARAMS; both terms
>= 0.1 s) of excess(D, C) / min(D, C), clamped at 0.  Prints, per s: per
round the points within 20 % and the largest error; the median of
measured / predicted of the supersteps with both terms >= 0.1 s, by
balance r = min / max; the rms of log(predicted / measured) over the
points (round 4's sgd of 512 MiB, a disturbed window, left out) and over
the supersteps, and the supersteps' median log.
"""
import collections, glob, math, os, re, statistics as st, subprocess, sys

RUN, PAR, ROUNDS = sys.argv[1], sys.argv[2], sys.argv[3:]
Phi = lambda z: 0.5 * math.erfc(-z / math.sqrt(2))
phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

def excess(a, b, s):
    th = s * math.hypot(a, b)
    if th <= 0 or a <= 0 or b <= 0:
        return 0.0
    z = (a - b) / th
    return a * Phi(z) + b * Phi(-z) + th * phi(z) - max(a, b)

def steps_of(text):
    out = []
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 9 and re.match(r"^[0-9-]+$", w[0]):
            out.append(dict(D=float(w[2]), C=max(float(w[3]), float(w[4])), pred=float(w[8]),
                            meas=float(w[9]) if len(w) > 9 else 0.0))
    return out

KIND = {"sort-u64": "sort --format u64", "sort-rec100": "sort --format rec100",
        "aggregate": "aggregate --groups 1000000", "aggregate-pre": "aggregate --groups 1000",
        "sgd": "sgd --dim 64 --local-steps 64 --epochs 1"}
cal = {}
for k, a in KIND.items():
    for p in (1, 2, 4):
        t = subprocess.run([RUN, "model", "predict"] + a.split() + ["--size", "1G", "--mem",
                           "%dM" % (1024 // p), "--procs-mpi", str(p), "--params", PAR],
                           capture_output=True, text=True, check=True).stdout
        cal[(k, p)] = [s for s in steps_of(t) if s["D"] >= 0.1 and s["C"] >= 0.1]
ovl = {(m.group(1), int(m.group(2))): float(m.group(3))
       for m in re.finditer(r"^overlap_alg (\S+) (\d+) (\S+)", open(PAR).read(), re.M)}
runs = collections.defaultdict(list)
for rd in ROUNDS:
    for t in glob.glob(os.path.join(rd, "logs", "model-*-r*.txt")):
        m = re.match(r"model-(.*)-(\d+M)-p(\d)-r(\d+)\.txt$", os.path.basename(t))
        txt = open(t).read()
        tot = [l.split() for l in txt.splitlines() if l.strip().startswith("total")][0]
        runs[(m.group(1), m.group(2), int(m.group(3)))].append(
            (os.path.basename(rd.rstrip("/")), steps_of(txt), float(tot[1]), float(tot[2])))

def evaluate(s):
    anew = {}
    for (k, p), a in ovl.items():
        adj = [excess(x["D"], x["C"], s) / min(x["D"], x["C"]) for x in cal.get((k, p), [])]
        anew[(k, p)] = min(1, max(0, a - (st.median(adj) if adj else 0)))
    res, bins, slog = collections.defaultdict(dict), collections.defaultdict(list), []
    for (case, size, p), rl in runs.items():
        key = {"agg-1e3": "aggregate-pre", "agg-1e7": "aggregate"}.get(case, case)
        a0, a1 = ovl[(key, p)], anew[(key, p)]
        byr = collections.defaultdict(lambda: ([], []))
        for rd, steps, tp, tm in rl:
            new = tp
            for x in steps:
                D, C = x["D"], x["C"]
                d = (a1 - a0) * min(D, C) + excess(D, C, s)
                new += d
                if D >= 0.1 and C >= 0.1 and x["meas"] > 0:
                    r = min(D, C) / max(D, C)
                    bins[0 if r < 0.5 else 1 if r < 0.75 else 2 if r < 0.9 else 3].append(x["meas"] / (x["pred"] + d))
                    slog.append(math.log((x["pred"] + d) / x["meas"]))
            byr[rd][0].append(new)
            byr[rd][1].append(tm)
        for rd, (pp, mm) in byr.items():
            res[rd][(case, size, p)] = st.median(pp) / st.median(mm) - 1
    plog = [math.log(1 + e) for rd in res for k, e in res[rd].items()
            if not (rd in ("round4", "m6r4") and k[0] == "sgd" and k[1] == "512M")]
    return res, bins, plog, slog, anew

print("rounds: " + " ".join(sorted(os.path.basename(r.rstrip("/")) for r in ROUNDS)))
for s in (0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5):
    res, bins, plog, slog, anew = evaluate(s)
    print("spread %.2f | %s | steps meas/pred by r <.5 .5-.75 .75-.9 >=.9: %s | rms log points %.4f steps %.4f, steps median log %+.4f"
          % (s, " ".join("%d/%+.1f" % (sum(abs(e) <= .2 for e in res[rd].values()),
                                       100 * max(res[rd].values(), key=abs)) for rd in sorted(res)),
             " ".join("%.3f" % st.median(bins[b]) for b in sorted(bins)),
             math.sqrt(sum(x * x for x in plog) / len(plog)), math.sqrt(sum(x * x for x in slog) / len(slog)),
             st.median(slog)))
    if s == 0.3:
        print("  overlap_alg a calibration with spread 0.3 would measure (estimate): " +
              " ".join("%s/%d %.3f->%.3f" % (k, p, ovl[(k, p)], v) for (k, p), v in sorted(anew.items())))
