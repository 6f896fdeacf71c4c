// httphost.mjs SPEC
//
// An HTTP host built on the TypeScript MCP SDK that connects to mcpx's
// Streamable HTTP endpoint, runs three steps, and prints a JSON report on
// stdout (one line). mcpx's Go tests (internal/e2e/host_http_ts_test.go)
// judge the report and what the upstream saw; the script only observes.
//
// SPEC is a JSON object:
//
//   sdk          "v1": @modelcontextprotocol/sdk 1.x, legacy (initialize,
//                Mcp-Session-Id); "v2": @modelcontextprotocol/client 2.x
//                pinned to 2026-07-28 (stateless requests)
//   url, token   the endpoint and its bearer token ("" for none)
//   tool         exposed name of the demo's export, e.g. "demo__export"
//   steps        the long call's progress steps (0.1 s each)
//   abortReason  the reason given to AbortController.abort
//   deadlineMs   the whole run's limit
//
// Steps: listTools; a call of tool with {seconds, steps} and onprogress
// (its result and the progress seen); the same call of 60 s aborted on its
// first progress (the rejection, and every message the transport sent).
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';

const spec = JSON.parse(process.argv[2] ?? '{}');
const report = { sdk: spec.sdk, ok: false };
const print = () => process.stdout.write(JSON.stringify(report) + '\n');
const watchdog = setTimeout(() => {
  report.error = `httphost: no end within ${spec.deadlineMs} ms`;
  print();
  process.exit(1);
}, spec.deadlineMs ?? 60000);

const requestInit = spec.token ? { headers: { Authorization: `Bearer ${spec.token}` } } : undefined;
const url = new URL(spec.url);
const v1 = spec.sdk === 'v1';
const transport = v1 ? new TransportV1(url, { requestInit }) : new TransportV2(url, { requestInit });
const sent = [];
const origSend = transport.send.bind(transport);
transport.send = (msg, opts) => {
  sent.push(msg);
  return origSend(msg, opts);
};
const client = v1
  ? new ClientV1({ name: 'mcpx-interop-httphost-v1', version: '1.0.0' }, { capabilities: {} })
  : new ClientV2(
      { name: 'mcpx-interop-httphost-v2', version: '2.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
const call = (params, options) => (v1 ? client.callTool(params, undefined, options) : client.callTool(params, options));

try {
  await client.connect(transport);
  report.sessionId = transport.sessionId ?? null;
  const { tools } = await client.listTools();
  report.tools = tools.map(t => t.name);

  const progress = [];
  const result = await call(
    { name: spec.tool, arguments: { seconds: spec.steps / 10, steps: spec.steps } },
    { timeout: 30000, onprogress: p => progress.push(p.progress) },
  );
  report.long = { text: result.content?.[0]?.text ?? null, isError: !!result.isError, progress };

  const controller = new AbortController();
  const abortProgress = [];
  let outcome;
  try {
    await call(
      { name: spec.tool, arguments: { seconds: 60, steps: 600 } },
      {
        timeout: 90000,
        signal: controller.signal,
        onprogress: p => {
          abortProgress.push(p.progress);
          if (abortProgress.length === 1) controller.abort(spec.abortReason);
        },
      },
    );
    outcome = { resolved: true };
  } catch (err) {
    outcome = { resolved: false, error: String(err?.message ?? err) };
  }
  await new Promise(resolve => setTimeout(resolve, 300)); // let a cancel go out
  report.abort = { ...outcome, progress: abortProgress };
  report.sentCancels = sent.filter(m => m.method === 'notifications/cancelled').map(m => m.params);
  report.sentMethods = sent.map(m => m.method ?? 'response');
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
