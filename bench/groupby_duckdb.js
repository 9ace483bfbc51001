// bench/groupby_duckdb.js - DuckDB side of bench/groupby.sh (needs
// @duckdb/node-api, installed by the script into bench/.node).
//
//   node groupby_duckdb.js Q IN.csv OUT.csv TMPDIR MEM THREADS
//
// One db-benchmark groupby question Q (q1..q10) end to end from the CSV:
// SET memory_limit=MEM, threads=THREADS, temp_directory=TMPDIR; then
// COPY (SELECT ... FROM read_csv('IN.csv') GROUP BY ...) TO 'OUT.csv'
// (header, NULL as an empty field).  The SQL is the db-benchmark's for
// DuckDB (q6 median as quantile_cont(v3, 0.5), q8 through row_number()).
// Prints "duckdb_secs=S" (the COPY statement, from the CSV to the file).
'use strict';
const { DuckDBInstance } = require('@duckdb/node-api');

const Q = {
	q1: 'SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1',
	q2: 'SELECT id1, id2, sum(v1) AS v1 FROM x GROUP BY id1, id2',
	q3: 'SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3',
	q4: 'SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4',
	q5: 'SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6',
	q6: 'SELECT id4, id5, quantile_cont(v3, 0.5) AS median_v3, stddev(v3) AS sd_v3 FROM x GROUP BY id4, id5',
	q7: 'SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3',
	q8: 'SELECT id6, largest2_v3 FROM (SELECT id6, v3 AS largest2_v3, row_number() OVER ' +
	    '(PARTITION BY id6 ORDER BY v3 DESC) AS order_v3 FROM x WHERE v3 IS NOT NULL) sub_query ' +
	    'WHERE order_v3 <= 2',
	q9: 'SELECT id2, id4, pow(corr(v1, v2), 2) AS r2 FROM x GROUP BY id2, id4',
	q10: 'SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS v3, count(*) AS count FROM x ' +
	     'GROUP BY id1, id2, id3, id4, id5, id6',
};

async function main() {
	const [q, input, out, tmp, mem, threads] = process.argv.slice(2);
	if (!Q[q] || !threads) {
		console.error('usage: node groupby_duckdb.js q1..q10 IN.csv OUT.csv TMPDIR MEM THREADS');
		process.exit(2);
	}
	const inst = await DuckDBInstance.create(':memory:');
	const con = await inst.connect();
	await con.run(`SET memory_limit='${mem}'`);
	await con.run(`SET threads=${threads}`);
	await con.run(`SET temp_directory='${tmp}'`);
	await con.run('SET preserve_insertion_order=false');
	const sql = Q[q].replace(/FROM x/g, `FROM read_csv('${input}', header = true)`);
	const t0 = process.hrtime.bigint();
	await con.run(`COPY (${sql}) TO '${out}' (HEADER, DELIMITER ',')`);
	const secs = Number(process.hrtime.bigint() - t0) / 1e9;
	console.log(`duckdb_secs=${secs.toFixed(3)}`);
}

main().catch((e) => {
	console.error(`groupby_duckdb.js: ${e.message}`);
	process.exit(1);
});
