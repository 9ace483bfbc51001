#!/bin/bash
# tests/test_groupby.sh - `pems-run aggregate --by` against sqlite3 on
# small G1 tables (pems-run gen --format groupby, NA 0 % and 10 %, sorted
# and not): the ten db-benchmark questions (median, sd, top2 and corr
# through equivalent SQL), at several --procs; answers equal (integers
# exactly, floats within 1e-9 relative); and under mpirun -np 2 the same
# bytes as one process.
#
#   BUILD=build bash tests/run.sh test_groupby
#
# Skips (exit 77) without sqlite3.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${PEMS_BUILD:-$PWD/build}
RUN=${PEMS_RUN:-$BUILD/pems-run}
TMP=${PEMS_TEST_TMP:-$(mktemp -d)}
mkdir -p "$TMP" || exit 1
export PEMS_TMP=$TMP/scratch
mkdir -p "$PEMS_TMP"

if ! command -v sqlite3 >/dev/null; then
	echo "SKIP: sqlite3 not installed (apt-get install sqlite3)"
	exit 77
fi

fail=0 pass=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# pems flags and SQL of each question; NULLS LAST as pems orders
declare -A BY AGG SQL
BY[q1]=id1 AGG[q1]='sum(v1)'
SQL[q1]='SELECT id1, sum(v1) FROM x GROUP BY id1 ORDER BY id1 NULLS LAST'
BY[q2]=id1,id2 AGG[q2]='sum(v1)'
SQL[q2]='SELECT id1, id2, sum(v1) FROM x GROUP BY id1, id2 ORDER BY id1 NULLS LAST, id2 NULLS LAST'
BY[q3]=id3 AGG[q3]='sum(v1),mean(v3)'
SQL[q3]='SELECT id3, sum(v1), avg(v3) FROM x GROUP BY id3 ORDER BY id3 NULLS LAST'
BY[q4]=id4 AGG[q4]='mean(v1),mean(v2),mean(v3)'
SQL[q4]='SELECT id4, avg(v1), avg(v2), avg(v3) FROM x GROUP BY id4 ORDER BY id4 NULLS LAST'
BY[q5]=id6 AGG[q5]='sum(v1),sum(v2),sum(v3)'
SQL[q5]='SELECT id6, sum(v1), sum(v2), sum(v3) FROM x GROUP BY id6 ORDER BY id6 NULLS LAST'
BY[q6]=id4,id5 AGG[q6]='median(v3),sd(v3)'
SQL[q6]="WITH r AS (SELECT id4, id5, v3, row_number() OVER (PARTITION BY id4, id5 ORDER BY v3) AS rn,
  count(*) OVER (PARTITION BY id4, id5) AS c FROM x WHERE v3 IS NOT NULL),
 m AS (SELECT id4, id5, avg(v3) AS med FROM r WHERE rn IN ((c + 1) / 2, (c + 2) / 2) GROUP BY id4, id5),
 g AS (SELECT id4, id5, count(v3) AS n, sum(v3) AS s, sum(v3 * v3) AS ss FROM x GROUP BY id4, id5)
SELECT g.id4, g.id5, m.med,
  CASE WHEN n > 1 THEN sqrt(max(ss - s * s / n, 0) / (n - 1)) END
FROM g LEFT JOIN m ON g.id4 IS m.id4 AND g.id5 IS m.id5
ORDER BY g.id4 NULLS LAST, g.id5 NULLS LAST"
BY[q7]=id3 AGG[q7]='max(v1)-min(v2)'
SQL[q7]='SELECT id3, max(v1) - min(v2) FROM x GROUP BY id3 ORDER BY id3 NULLS LAST'
BY[q8]=id6 AGG[q8]='top2(v3)'
SQL[q8]='SELECT id6, v3 FROM (SELECT id6, v3, row_number() OVER (PARTITION BY id6 ORDER BY v3 DESC) AS o
  FROM x WHERE v3 IS NOT NULL) WHERE o <= 2 ORDER BY id6 NULLS LAST, o'
BY[q9]=id2,id4 AGG[q9]='pow(corr(v1,v2),2)'
SQL[q9]="WITH p AS (SELECT id2, id4, count(*) AS n, sum(v1) AS sx, sum(v2) AS sy, sum(v1 * v1) AS sxx,
  sum(v2 * v2) AS syy, sum(v1 * v2) AS sxy FROM x WHERE v1 IS NOT NULL AND v2 IS NOT NULL GROUP BY id2, id4),
 g AS (SELECT DISTINCT id2, id4 FROM x)
SELECT g.id2, g.id4, CASE WHEN n > 1 AND n * sxx - sx * sx > 0 AND n * syy - sy * sy > 0 THEN
  pow((n * sxy - sx * sy) * 1.0 / sqrt((n * sxx - sx * sx) * 1.0 * (n * syy - sy * sy)), 2) END
FROM g LEFT JOIN p ON g.id2 IS p.id2 AND g.id4 IS p.id4 ORDER BY g.id2 NULLS LAST, g.id4 NULLS LAST"
BY[q10]=id1,id2,id3,id4,id5,id6 AGG[q10]='sum(v3),count(*)'
SQL[q10]='SELECT id1, id2, id3, id4, id5, id6, sum(v3), count(*) FROM x GROUP BY id1, id2, id3, id4, id5, id6
ORDER BY id1 NULLS LAST, id2 NULLS LAST, id3 NULLS LAST, id4 NULLS LAST, id5 NULLS LAST, id6 NULLS LAST'

# same lines, fields equal as text or as numbers within 1e-9 relative
same() {
	awk -F, 'NR == FNR { a[FNR] = $0; n = FNR; next }
	function num(s) { return s ~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
	{
		m = FNR
		if (a[FNR] == $0) next
		k = split(a[FNR], x, ","); if (k != NF) { print "line " FNR ": " a[FNR] " | " $0; bad = 1; next }
		for (i = 1; i <= NF; i++) {
			if (x[i] == $i) continue
			if (num(x[i]) && num($i)) {
				d = x[i] - $i; if (d < 0) d = -d
				s = x[i] < 0 ? -x[i] : x[i]
				if (d <= 1e-9 * s || d < 1e-12) continue
			}
			print "line " FNR ", field " i ": " x[i] " | " $i; bad = 1; break
		}
	}
	END { if (m != n) { print "lines: " n " vs " m; bad = 1 } exit bad }' "$1" "$2"
}

load() {	# CSV -> sqlite database, empty fields as NULL
	rm -f "$2"
	sqlite3 "$2" <<EOF
CREATE TABLE x(id1 TEXT, id2 TEXT, id3 TEXT, id4 INTEGER, id5 INTEGER, id6 INTEGER,
  v1 INTEGER, v2 INTEGER, v3 REAL);
.import --csv --skip 1 $1 x
UPDATE x SET id1 = NULLIF(id1, ''), id2 = NULLIF(id2, ''), id3 = NULLIF(id3, ''),
  id4 = NULLIF(id4, ''), id5 = NULLIF(id5, ''), id6 = NULLIF(id6, ''),
  v1 = NULLIF(v1, ''), v2 = NULLIF(v2, ''), v3 = NULLIF(v3, '');
EOF
}

for data in "2000 10 0" "3000 8 10 --sorted" "500 3 30"; do
	set -- $data
	csv=$TMP/g_$1_$2_$3${4:+s}.csv db=$TMP/g.db
	"$RUN" gen --format groupby --rows "$1" --k "$2" --na "$3" ${4:-} --quiet "$csv" ||
		{ bad "gen $data"; continue; }
	load "$csv" "$db" || { bad "sqlite3 load $data"; continue; }
	for q in q1 q2 q3 q4 q5 q6 q7 q8 q9 q10; do
		sqlite3 -csv "$db" "${SQL[$q]}" >"$TMP/want.csv" || { bad "sqlite3 $q"; continue; }
		for procs in 1 3 7; do
			if ! "$RUN" aggregate --quiet --procs $procs --mem 64M --by "${BY[$q]}" \
				--agg "${AGG[$q]}" "$csv" "$TMP/got.csv" 2>"$TMP/err"; then
				bad "$q on $data, --procs $procs: $(cat "$TMP/err")"
				continue
			fi
			tail -n +2 "$TMP/got.csv" >"$TMP/got.body"
			if same "$TMP/want.csv" "$TMP/got.body" >"$TMP/diff"; then
				pass=$((pass + 1))
			else
				bad "$q on $data, --procs $procs: $(head -3 "$TMP/diff")"
			fi
		done
	done
done

# two ranks (mpirun): the same bytes as one process
if command -v mpirun >/dev/null; then
	csv=$TMP/g_mpi.csv
	"$RUN" gen --format groupby --rows 20000 --k 10 --na 5 --quiet "$csv"
	mkdir -p "$TMP/r0" "$TMP/r1"
	q='sum(v1),median(v3),top2(v3),count(distinct id3),pow(corr(v1,v2),2)'
	"$RUN" aggregate --quiet --procs 6 --by id2,id4 --agg "$q" "$csv" "$TMP/one.csv"
	if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun --oversubscribe \
		--bind-to none -np 2 "$RUN" aggregate --quiet --procs 6 --tmp "$TMP/r%r" --by id2,id4 \
		--agg "$q" "$csv" "$TMP/two.csv" >"$TMP/mpi.log" 2>&1 && cmp -s "$TMP/one.csv" "$TMP/two.csv"; then
		pass=$((pass + 1))
	else
		bad "mpirun -np 2 differs or failed: $(tail -3 "$TMP/mpi.log")"
	fi
else
	echo "note: mpirun not installed; the two-rank case is skipped"
fi

echo "test_groupby: $pass passed, $fail failed"
((fail == 0))
