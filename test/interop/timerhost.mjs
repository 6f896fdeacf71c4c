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
import { run, connectTo } from './hostkit.mjs';

const t0 = performance.now();
const now = () => Math.round(performance.now() - t0);
const { spec, report, end } = run('timerhost', { progress: [] });
report.clientName = spec.clientName;
const { client, transport, v1 } = connectTo(spec, { name: spec.clientName, version: '1.0.0' });

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
}
await end(client);
