import csv, sys, os, re
for rd in sys.argv[1:]:
    rows = list(csv.DictReader(open(os.path.join(rd, "model.csv"))))
    e = [float(r["error_pct"]) for r in rows]
    t = open(os.path.join(rd, "times.txt")).read()
    st = re.findall(r": start (\d\d:\d\d:\d\d)", t); en = re.findall(r": end (\d\d:\d\d:\d\d)", t)
    st = [x for x in st]; 
    print("| %s | %s–%s | %d of %d | %+.1f %% | %+.1f %% | %d | %d |" % (os.path.basename(rd.rstrip("/")), st[0] if st else "?", en[-1] if en else "?",
          sum(abs(x) <= 20 for x in e), len(e), max(e, key=abs), sum(e) / len(e), sum(x < 0 for x in e), sum(abs(x) <= 10 for x in e)))
