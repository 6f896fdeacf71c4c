// tap.mjs LOG -- COMMAND [ARGS...]
//
// A wire tap for a stdio MCP server: runs COMMAND as a child, copies this
// process's stdin to the child's stdin and the child's stdout to this
// process's stdout, line by line, and appends each line to LOG before
// passing it on, as one JSON object a line:
//
//   {"at": <ms since the epoch>, "dir": "in" | "out", "line": "<the line>"}
//
// "in" is what the tap read on stdin (the MCP client, i.e. mcpx, to the
// server); "out" is what the server wrote (the server to mcpx). A first
// record with dir "pids" gives the tap's and the child's pids, as JSON in
// "line". stderr is inherited. The tap exits with the child's exit code.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [log, sep, command, ...args] = process.argv.slice(2);
if (!log || sep !== '--' || !command) {
  console.error('usage: node tap.mjs LOG -- COMMAND [ARGS...]');
  process.exit(2);
}

const record = (dir, line) => appendFileSync(log, JSON.stringify({ at: Date.now(), dir, line }) + '\n');

const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
child.on('error', err => {
  console.error(`tap: starting ${command}: ${err.message}`);
  process.exit(127);
});
record('pids', JSON.stringify({ tap: process.pid, child: child.pid }));
child.stdin.on('error', () => {}); // the child left; its exit ends the tap
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', line => {
    record('in', line);
    child.stdin.write(line + '\n');
  })
  .on('close', () => child.stdin.end());

createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', line => {
  record('out', line);
  process.stdout.write(line + '\n');
});

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => child.kill(sig));
}
