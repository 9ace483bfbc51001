// bench/aggregate_duckdb.js - DuckDB side of bench/aggregate.sh (needs
// @duckdb/node-api, installed by the script into bench/.node).
//
//   node aggregate_duckdb.js load DB.duckdb IN.csv
//       (untimed) CREATE TABLE t(key UBIGINT, value BIGINT) in the
//       database file DB from the csv "key,value" (DuckDB's own storage:
//       its best input for a repeated GROUP BY), then CHECKPOINT
//   node aggregate_duckdb.js query DB.duckdb TMPDIR MEM THREADS
//       SET memory_limit=MEM, threads=THREADS, temp_directory=TMPDIR;
//       times CREATE TABLE r AS SELECT key, count(*), sum(value),
//       min(value), max(value), avg(value) FROM t GROUP BY key (the
//       result written to the database file, like pems writes its
//       output file), then (untimed) prints the totals of r and drops it
//
// Prints "duckdb_secs=S" (the GROUP BY only) and, for query,
// "groups=G count=C sum=S min=M max=X" (column sums over the groups).
'use strict';
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
	const [mode, db, a, b, c] = process.argv.slice(2);
	if (mode === 'load' && db && a) {
		const inst = await DuckDBInstance.create(db);
		const con = await inst.connect();
		const t0 = process.hrtime.bigint();
		await con.run('DROP TABLE IF EXISTS t');
		await con.run(`CREATE TABLE t AS SELECT * FROM read_csv('${a}', header = true,
			columns = {'key': 'UBIGINT', 'value': 'BIGINT'})`);
		await con.run('CHECKPOINT');
		const secs = Number(process.hrtime.bigint() - t0) / 1e9;
		console.log(`duckdb_load_secs=${secs.toFixed(2)}`);
		return;
	}
	if (mode === 'query' && db && a && b && c) {
		const inst = await DuckDBInstance.create(db);
		const con = await inst.connect();
		await con.run(`SET memory_limit = '${b}'`);
		await con.run(`SET threads = ${Number(c)}`);
		await con.run(`SET temp_directory = '${a}'`);
		await con.run('SET preserve_insertion_order = false');
		await con.run('DROP TABLE IF EXISTS r');
		const t0 = process.hrtime.bigint();
		await con.run(`CREATE TABLE r AS SELECT key, count(*) AS c, sum(value) AS s,
			min(value) AS mn, max(value) AS mx, avg(value) AS av FROM t GROUP BY key`);
		const secs = Number(process.hrtime.bigint() - t0) / 1e9;
		console.log(`duckdb_secs=${secs.toFixed(3)}`);
		const rd = await con.runAndReadAll(`SELECT count(*)::VARCHAR, sum(c)::VARCHAR,
			sum(s)::VARCHAR, sum(mn)::VARCHAR, sum(mx)::VARCHAR FROM r`);
		const row = rd.getRows()[0];
		console.log(`groups=${row[0]} count=${row[1]} sum=${row[2]} min=${row[3]} max=${row[4]}`);
		await con.run('DROP TABLE r');
		await con.run('CHECKPOINT');
		return;
	}
	console.error('usage: aggregate_duckdb.js load DB IN.csv | query DB TMPDIR MEM THREADS');
	process.exit(2);
}

main().catch((e) => {
	console.error(`aggregate_duckdb.js: error: ${e.message}`);
	process.exit(1);
});
