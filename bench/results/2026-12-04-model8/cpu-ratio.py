# each run's measured CPU over the CPU its own round's parameter file predicts (runs predicted >= 0.3 CPU s)
import csv, sys, os, statistics
print("| round | runs | median | 90th percentile | largest | runs > 1.3 |")
print("|---|---:|---:|---:|---:|---:|")
for rd in sys.argv[1:]:
    r = [x for x in csv.DictReader(open(os.path.join(rd, "model-runs.csv"))) if float(x["pred_cpu"]) >= 0.3]
    q = sorted(float(x["meas_cpu"]) / float(x["pred_cpu"]) for x in r)
    print("| %s | %d | %.3f | %.3f | %.2f | %d |" % (rd.replace("/work/main/bench/results/", "").replace("bench/results/", ""), len(q),
          statistics.median(q), q[int(.9 * len(q))], q[-1], sum(v > 1.3 for v in q)))
