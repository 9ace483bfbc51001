# the frozen files of the seventh and eighth passes side by side (every figure whose value differs)
import sys
def load(path):
    out, keys = {}, []
    for line in open(path):
        w = line.split("#")[0].split()
        if not w or w[0] in ("pems-model", "date"):
            continue
        n = 2 if w[0] in ("agg_at", "bsp") else len(w) - 1
        k = " ".join(w[:n]); keys.append(k); out[k] = [float(x) for x in w[n:]]
    return out, keys
a, ka = load(sys.argv[1]); b, kb = load(sys.argv[2])
print("| figure | seventh (%s) | eighth | eighth / seventh |" % "ef476e8d")
print("|---|---:|---:|---:|")
for k in ka + [k for k in kb if k not in a]:
    va, vb = a.get(k), b.get(k)
    if va == vb:
        continue
    f = lambda v: "–" if v is None else " / ".join("%.4g" % x for x in v)
    r = " / ".join("%.3f" % (y / x) if x else "–" for x, y in zip(va, vb)) if va and vb else "–"
    print("| %s | %s | %s | %s |" % (k, f(va), f(vb), r))
