// bench/sort_text_duckdb.js - DuckDB side of bench/sort_text.sh (needs
// @duckdb/node-api, installed by the script into bench/.node).
//
//   node sort_text_duckdb.js IN OUT TMPDIR MEM THREADS
//
// SET memory_limit=MEM, threads=THREADS, temp_directory=TMPDIR; times
// COPY (SELECT * FROM read_csv(IN) ORDER BY ...) TO OUT for the lines of
// `pems-run gen --format lines` (NAME,INT,DEC,WORDS, no header): ORDER BY
// INT, NAME, DEC, WORDS with DEC and WORDS as text, which is the order
// of LC_ALL=C sort -t, -k2,2n -k1,1 (its last resort compares the rest of
// the line, ",DEC,WORDS", and ',' sorts before every byte of DEC).
// Prints "duckdb_secs=S".
'use strict';
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
	const [inp, out, tmp, mem, threads] = process.argv.slice(2);
	if (!threads) {
		console.error('usage: sort_text_duckdb.js IN OUT TMPDIR MEM THREADS');
		process.exit(2);
	}
	const inst = await DuckDBInstance.create(':memory:');
	const con = await inst.connect();
	await con.run(`SET memory_limit = '${mem}'`);
	await con.run(`SET threads = ${Number(threads)}`);
	await con.run(`SET temp_directory = '${tmp}'`);
	const t0 = process.hrtime.bigint();
	await con.run(`COPY (SELECT * FROM read_csv('${inp}', header = false, delim = ',',
		quote = '', escape = '', auto_detect = false,
		columns = {'name': 'VARCHAR', 'i': 'BIGINT', 'd': 'VARCHAR', 'w': 'VARCHAR'})
		ORDER BY i, name, d, w) TO '${out}' (FORMAT csv, HEADER false, DELIMITER ',',
		QUOTE '', ESCAPE '')`);
	const secs = Number(process.hrtime.bigint() - t0) / 1e9;
	console.log(`duckdb_secs=${secs.toFixed(3)}`);
}

main().catch((e) => {
	console.error(`sort_text_duckdb.js: error: ${e.message}`);
	process.exit(1);
});
