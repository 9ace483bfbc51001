# bench/lib.sh - shared by the bench/ scripts (sort, aggregate, sgd, budget,
# ranks, ...)
# (sourced, not run).  The caller sets NAME (message prefix) and ROOT.
#
# Every measured run becomes one row of $RESULTS_DIR/<bench>.csv:
#   bench,impl,bytes,mem,ranks,rep,secs,mbps,rss_bytes,cg_peak_bytes,rc,status,note
# (bytes = input bytes of the job, mem = budget in bytes, mbps = 10^6
# bytes of input per second, status ok | skip | refused | fail(...)).
# bench_summary turns it into <bench>-summary.csv (median of the ok runs):
#   bench,impl,bytes,mem,ranks,runs,secs,mbps
# and ratio_rows appends to $RESULTS_DIR/ratios.csv:
#   bench,case,pems,peer,pems_secs,peer_secs,ratio
# with ratio = peer_secs / pems_secs (> 1: pems faster), which
# bench/report.sh prints as the summary table of the whole run.

msg() { echo "$NAME: $*" >&2; }
die() { msg "error: $*"; exit 1; }

to_bytes() {	# to_bytes 1.5G -> bytes (binary suffixes)
	awk -v s="$1" 'BEGIN {
		if (s !~ /^[0-9]+(\.[0-9]+)?[KkMmGgTt]?$/) exit 1
		m = 1; u = substr(s, length(s), 1)
		if (u ~ /[Kk]/) m = 1024; else if (u ~ /[Mm]/) m = 1024^2
		else if (u ~ /[Gg]/) m = 1024^3; else if (u ~ /[Tt]/) m = 1024^4
		if (m > 1) s = substr(s, 1, length(s) - 1)
		printf "%.0f\n", s * m }'
}

human() {	# human BYTES -> 64M, 1G, 1.5G
	awk -v b="$1" 'BEGIN {
		if (b >= 1073741824) printf "%gG\n", b / 1073741824
		else printf "%gM\n", b / 1048576 }'
}

jfield() {	# jfield FILE KEY: a top-level number of a --stats-json file
	# (the totals are on its first line; per-superstep "steps" follow)
	head -n 1 "$1" | sed -n "s/.*\"$2\": *\([0-9.eE+-]*\).*/\1/p"
}

json_traffic() {	# json_traffic FILE: the run's disk traffic in bytes (contexts,
	# message store and files, read and written)
	local k t=0
	for k in ctx_read ctx_written msg_read msg_written file_read file_written; do
		t=$((t + $(jfield "$1" "$k")))
	done
	echo "$t"
}

csv_header() {	# csv_header CSV: create it with the header if absent
	[[ -s "$1" ]] ||
		echo "bench,impl,bytes,mem,ranks,rep,secs,mbps,rss_bytes,cg_peak_bytes,rc,status,note" >"$1"
}

# cg_measure LIMIT LOG CMD...: run CMD through bench/cgrun.sh (cold page
# cache, memory cgroup of LIMIT bytes), output to LOG.  Sets M_SECS,
# M_RSS (bytes), M_PEAK (bytes), M_RC, M_STATUS; never fails itself, even
# under set -e.  A caller that wraps CMD in `timeout M_CAP` sets M_CAP
# (seconds, else 0): rc 124 is then status "timeout" with M_SECS = M_CAP,
# a lower bound of the command's time rather than a failure.
cg_measure() {
	local limit=$1 log=$2 line
	shift 2
	"$ROOT/bench/cgrun.sh" "$limit" -- "$@" >"$log" 2>&1 || true
	line=$(grep '^cg_peak_bytes=' "$log" | tail -n 1 || true)
	M_PEAK=$(sed -n 's/.*cg_peak_bytes=\([0-9]*\).*/\1/p' <<<"$line")
	M_RSS=$(sed -n 's/.* rss_kb=\([0-9]*\).*/\1/p' <<<"$line")
	M_SECS=$(sed -n 's/.* secs=\([0-9.]*\).*/\1/p' <<<"$line")
	M_RC=$(sed -n 's/.* rc=\([0-9]*\).*/\1/p' <<<"$line")
	M_PEAK=${M_PEAK:-0} M_SECS=${M_SECS:-0} M_RC=${M_RC:-125}
	M_RSS=$((${M_RSS:-0} * 1024))
	M_STATUS=ok
	if ((M_RC == 124 && ${M_CAP:-0} > 0)); then
		M_STATUS=timeout M_SECS=$M_CAP
	elif ((M_RC != 0)); then
		M_STATUS="fail(rc=$M_RC$([[ "$line" == *oom_kills=* ]] && echo "+oom" || true))"
		msg "run failed (rc=$M_RC); last lines of $log:"
		tail -n 5 "$log" | sed 's/^/    | /' >&2
	fi
	return 0
}

# record CSV BENCH IMPL BYTES MEM RANKS REP [NOTE]: one row from the last
# cg_measure, printed as a key=value line too.  Counts failures in NFAIL.
record() {
	local csv=$1 bench=$2 impl=$3 bytes=$4 mem=$5 ranks=$6 rep=$7 note=${8:-} mbps
	mbps=$(awk -v b="$bytes" -v s="$M_SECS" 'BEGIN { printf "%.1f", (s > 0 ? b / s / 1e6 : 0) }')
	echo "bench=$bench impl=$impl bytes=$bytes mem=$mem ranks=$ranks secs=$M_SECS mbps=$mbps" \
		"rss=$M_RSS cg_peak=$M_PEAK status=$M_STATUS${note:+ note=$note}"
	echo "$bench,$impl,$bytes,$mem,$ranks,$rep,$M_SECS,$mbps,$M_RSS,$M_PEAK,$M_RC,$M_STATUS,$note" >>"$csv"
	[[ "$M_STATUS" == ok || "$M_STATUS" == skip || "$M_STATUS" == refused ]] ||
		NFAIL=$((NFAIL + 1))
}

# bench_summary CSV OUT: medians of the ok runs per bench,impl,bytes,mem,ranks.
bench_summary() {
	echo "bench,impl,bytes,mem,ranks,runs,secs,mbps" >"$2"
	awk -F, 'NR > 1 && $12 == "ok" {
		k = $1 "," $2 "," $3 "," $4 "," $5; n[k]++; v[k, n[k]] = $7 }
	END {
		for (k in n) {
			m = n[k]
			for (i = 1; i <= m; i++) a[i] = v[k, i] + 0
			for (i = 2; i <= m; i++)	# insertion sort (mawk has no asort)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
			med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
			split(k, f, ",")
			printf "%s,%d,%.2f,%.1f\n", k, m, med, (med > 0 ? f[3] / med / 1e6 : 0)
		}
	}' "$1" | sort -t, -k1,1 -k3,3n -k4,4n -k5,5n -k2,2 >>"$2"
}

# ratio_rows SUMMARY BENCH PEMS PEER [SCALE]: for every
# bytes,mem,ranks where both PEMS and PEER have a median, append
# bench,case,pems,peer,pems_secs,peer_secs,ratio to ratios.csv.  The case
# is "N=<bytes> M=<mem>" (and "p=<ranks>" when ranks > 1); SCALE
# multiplies the peer's time first (e.g. epochs for a per-epoch peer).
ratio_rows() {
	local sum=$1 bench=$2 pems=$3 peer=$4 scale=${5:-1} out=$RESULTS_DIR/ratios.csv
	[[ -s "$out" ]] || echo "bench,case,pems,peer,pems_secs,peer_secs,ratio" >"$out"
	# a rerun into the same directory replaces its rows
	awk -F, -v b="$bench" -v p="$pems" -v q="$peer" '!($1 == b && $3 == p && $4 == q)' \
		"$out" >"$out.tmp" && mv "$out.tmp" "$out"
	awk -F, -v b="$bench" -v p="$pems" -v q="$peer" -v sc="$scale" '
	function hb(x) { x += 0; return x >= 1e9 ? sprintf("%.3gG", x / 1073741824) : sprintf("%.3gM", x / 1048576) }
	NR > 1 && $1 == b { k = $3 "," $4 "," $5; t[$2, k] = $7; keys[k] = 1 }
	END {
		for (k in keys) {
			if (!((p, k) in t) || !((q, k) in t) || t[p, k] <= 0) continue
			split(k, f, ",")
			c = "N=" hb(f[1]) " M=" hb(f[2]) (f[3] > 1 ? " p=" f[3] : "")
			printf "%s,%s,%s,%s,%.2f,%.2f,%.2f\n", b, c, p, q, t[p, k], t[q, k] * sc,
				t[q, k] * sc / t[p, k]
		}
	}' "$sum" | sort -t, -k2,2V >>"$out"
}
