// Runs SQL in DuckDB through @duckdb/node-api, for test_tables.py:
//   node duckdb_run.cjs NPM_DIR < {"dir": DIR, "setup": SQL, "queries": {NAME: SQL, ...}}
// NPM_DIR holds node_modules/@duckdb/node-api. The setup (schema.sql) runs first, in DIR (its
// paths are relative to it); prints {NAME: [row, ...]} as JSON, integers as strings.
const npmDir = process.argv[2];
const { DuckDBInstance } = require(require.resolve("@duckdb/node-api", { paths: [npmDir] }));

async function main() {
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    const job = JSON.parse(input);
    process.chdir(job.dir);
    const db = await DuckDBInstance.create(":memory:");
    const con = await db.connect();
    await con.run(job.setup);
    const out = {};
    for (const [name, sql] of Object.entries(job.queries)) {
        const reader = await con.runAndReadAll(sql);
        out[name] = reader.getRowObjectsJson();
    }
    process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
    process.stderr.write(`duckdb_run: ${e.message}\n`);
    process.exit(1);
});
