// timerhost.mjs SPEC
//
// A host built on the TypeScript MCP SDK whose tool-call timer is reset by
// progress, as opencode's and Claude Code's are: it makes one call of a
// tool that works in silence for longer than its timer, and prints a JSON
// report on stdout (one line). mcpx's Go tests
// (internal/e2e/heartbeat_ts_test.go) judge the report and what the
// upstream saw; the script only observes.
//
// SPEC is a JSON object:
//
//   sdk          "v1": @modelcontextprotocol/sdk 1.x (initialize);
//                "v2": @modelcontextprotocol/client 2.x pinned to
//                2026-07-28 (clientInfo in each request's _meta)
//   transport    "stdio" (spawns mcpx serve: mcpx, config, inProcess, env)
//                or "http" (url, token)
//   clientName   the clientInfo.name the host sends
//   tool, arguments  the call
//   timeoutMs    the call's timeout, with resetTimeoutOnProgress: true
//   deadlineMs   the whole run's limit
//
// Report: the result or the error the call ended with, how long it took,
// and each progress notification onprogress saw (when, value, total,
// message).
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HTTPV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1, getDefaultEnvironment as envV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HTTPV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2, getDefaultEnvironment as envV2 } from '@modelcontextprotocol/client/stdio';

const spec = JSON.parse(process.argv[2] ?? '{}');
const t0 = performance.now();
const now = () => Math.round(performance.now() - t0);
const report = { sdk: spec.sdk, transport: spec.transport, clientName: spec.clientName, ok: false, progress: [] };
const print = () => process.stdout.write(JSON.stringify(report) + '\n');
const watchdog = setTimeout(() => {
  report.error = `timerhost: no end within ${spec.deadlineMs} ms`;
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
  transport = v1 ? new HTTPV1(new URL(spec.url), { requestInit }) : new HTTPV2(new URL(spec.url), { requestInit });
}
const info = { name: spec.clientName, version: '1.0.0' };
const client = v1
  ? new ClientV1(info, { capabilities: {} })
  : new ClientV2(info, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });

try {
  await client.connect(transport);
  const options = {
    timeout: spec.timeoutMs,
    resetTimeoutOnProgress: true,
    onprogress: p => report.progress.push({ at: now(), progress: p.progress, total: p.total, message: p.message }),
  };
  const params = { name: spec.tool, arguments: spec.arguments ?? {} };
  const started = now();
  try {
    report.result = v1 ? await client.callTool(params, undefined, options) : await client.callTool(params, options);
  } catch (err) {
    report.callError = String(err?.message ?? err);
    report.callErrorCode = err?.code ?? null;
  }
  report.elapsedMs = now() - started;
  report.ok = true;
} catch (err) {
  report.error = String(err?.stack ?? err);
} finally {
  try {
    await client.close();
  } catch (err) {
    report.closeError = String(err?.message ?? err);
  }
  clearTimeout(watchdog);
  print();
}
