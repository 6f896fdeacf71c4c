// jobhost.mjs SPEC
//
// A host with a hard tool-call timer, built on the TypeScript MCP SDK: it
// calls a long, silent tool through mcpx with a timeout shorter than the
// work, retries it as a model would, then collects the result with
// mcpx_job, each request under the same hard timeout. It prints a JSON
// report (one line) on stdout; mcpx's Go tests
// (internal/e2e/jobs_ts_test.go) judge it and count the upstream's
// executions.
//
// SPEC is a JSON object:
//
//   sdk         "v1": @modelcontextprotocol/sdk 1.x (legacy); "v2":
//               @modelcontextprotocol/client 2.x pinned to 2026-07-28
//   transport   "stdio" (spawns mcpx serve: mcpx, config, inProcess, env)
//               or "http" (url, token)
//   clientName  the clientInfo.name the host sends (its profile's name)
//   tool        exposed name of the demo's sleep_then
//   seconds     how long the tool works, silent
//   timeoutMs   the host's hard timer on every request
//   deadlineMs  the whole run's limit
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1, getDefaultEnvironment as envV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2, getDefaultEnvironment as envV2 } from '@modelcontextprotocol/client/stdio';

const spec = JSON.parse(process.argv[2] ?? '{}');
const report = { sdk: spec.sdk, transport: spec.transport, ok: false };
const print = () => process.stdout.write(JSON.stringify(report) + '\n');
const watchdog = setTimeout(() => {
  report.error = `jobhost: no end within ${spec.deadlineMs} ms`;
  print();
  process.exit(1);
}, spec.deadlineMs ?? 60000);

const v1 = spec.sdk === 'v1';
let transport;
if (spec.transport === 'stdio') {
  const args = ['serve', '--config', spec.config];
  if (spec.inProcess) args.push('--in-process');
  const env = { ...(v1 ? envV1() : envV2()), ...(spec.env ?? {}) };
  transport = v1
    ? new StdioV1({ command: spec.mcpx, args, env, stderr: 'inherit' })
    : new StdioV2({ command: spec.mcpx, args, env, stderr: 'inherit' });
} else {
  const requestInit = spec.token ? { headers: { Authorization: `Bearer ${spec.token}` } } : undefined;
  const url = new URL(spec.url);
  transport = v1 ? new TransportV1(url, { requestInit }) : new TransportV2(url, { requestInit });
}
const info = { name: spec.clientName, version: '1.0.0' };
const client = v1
  ? new ClientV1(info, { capabilities: {} })
  : new ClientV2(info, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
// A hard timer: progress does not reset it.
const opts = { timeout: spec.timeoutMs, resetTimeoutOnProgress: false };
const call = params => (v1 ? client.callTool(params, undefined, opts) : client.callTool(params, opts));
const timed = async params => {
  const start = Date.now();
  const res = await call(params);
  return { ms: Date.now() - start, text: res.content?.[0]?.text ?? null, isError: !!res.isError, structured: res.structuredContent ?? null };
};

try {
  await client.connect(transport);
  const args = { seconds: spec.seconds, text: 'the export is done' };
  report.first = await timed({ name: spec.tool, arguments: args });
  // The model calls it again, as models do after a timeout.
  report.retry = await timed({ name: spec.tool, arguments: args });
  const jobId = report.first.structured?.job_id;
  report.polls = [];
  for (let i = 0; jobId && i < 20; i++) {
    const r = await timed({ name: 'mcpx_job', arguments: { job_id: jobId, wait_seconds: 600 } });
    report.polls.push({ ms: r.ms, status: r.structured?.status ?? null });
    if (r.structured?.status !== 'running') {
      report.final = r;
      break;
    }
  }
  report.ok = true;
} catch (err) {
  report.error = String(err?.stack ?? err);
}
try {
  await client.close();
} catch (err) {
  report.closeError = String(err?.message ?? err);
}
clearTimeout(watchdog);
print();
process.exit(0);
