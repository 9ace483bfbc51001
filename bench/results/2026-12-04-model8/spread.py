# run-to-run spread of the same command within a round: per point max/min of its runs,
# and the runs more than 1.3x their point's median (the seventh pass's slow runs were 1.5-1.7x)
import csv, sys, os, statistics, collections
for rd in sys.argv[1:]:
    g = collections.defaultdict(list)
    for r in csv.DictReader(open(os.path.join(rd, "model-runs.csv"))):
        g[(r["case"], r["bytes"], r["p"])].append(float(r["measured"]))
    ratios = [max(v) / min(v) for v in g.values()]
    slow = [(k, x / statistics.median(v)) for k, v in g.items() for x in v if x > 1.3 * statistics.median(v)]
    n = sum(len(v) for v in g.values())
    print("| %s | %d | %.3f | %.2f | %d | %s |" % (rd.replace("/work/main/bench/results/", "").replace("bench/results/", ""), n, statistics.median(ratios), max(ratios), len(slow),
          ", ".join("%s %s p%s %.2fx" % (k[0], "%.1f GiB" % (int(k[1]) / 2**30), k[2], x) for k, x in slow) or "–"))
