// v1host.mjs SPEC
//
// A host built on the TypeScript MCP SDK v1 (@modelcontextprotocol/sdk
// Client + StdioClientTransport) that spawns `mcpx serve`, runs one
// scenario, and prints a JSON report on stdout (one line). mcpx's stderr is
// inherited. mcpx's Go tests (internal/e2e/interop_ts_test.go) run it and
// judge the report; the script itself only observes.
//
// SPEC is a JSON object:
//
//   mcpx        path of the mcpx binary
//   config      path of the mcpx config
//   inProcess   pass --in-process to `mcpx serve`
//   env         extra environment for mcpx (the SDK passes only a small
//               whitelist of this process's environment to its child)
//   scenario    "list", "long" or "abort"
//   tool        exposed name of server-everything's
//               trigger-long-running-operation, e.g.
//               "everything__trigger-long-running-operation"
//   duration    seconds the operation lasts; steps: its progress steps
//   timeoutMs   the request timeout (reset on progress)
//   abortReason the reason given to AbortController.abort
//   settleMs    after an abort, how long to keep listening before closing
//   deadlineMs  the whole run's limit
//
// Scenarios:
//
//   list   listTools: the exposed names and the long tool's input schema.
//   long   callTool with {timeout, resetTimeoutOnProgress: true,
//          onprogress}: the result, elapsed time, the progress seen by
//          onprogress and on the wire.
//   abort  the same call, aborted from onprogress on the first progress:
//          the rejection, the cancellation the SDK sent, and whatever
//          arrived for the call after the abort.
//
// "Wire" means the messages the transport delivered to the client, in
// order, seen by wrapping the transport's onmessage: SDK v1 dispatches
// notifications on a microtask but responses synchronously, so onprogress
// alone may miss a progress notification that arrived just before the
// result.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

const spec = JSON.parse(process.argv[2] ?? '{}');
const t0 = performance.now();
const now = () => Math.round((performance.now() - t0) * 10) / 10;
// Times in the report are ms since t0; t0Epoch is t0 in ms since the epoch.
const report = { scenario: spec.scenario, inProcess: !!spec.inProcess, ok: false, t0Epoch: Date.now() };

const print = () => process.stdout.write(JSON.stringify(report) + '\n');
const watchdog = setTimeout(() => {
  report.error = `v1host: no end within ${spec.deadlineMs} ms`;
  print();
  process.exit(1);
}, spec.deadlineMs ?? 60000);

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

const args = ['serve', '--config', spec.config];
if (spec.inProcess) args.push('--in-process');
const transport = new StdioClientTransport({
  command: spec.mcpx,
  args,
  env: { ...getDefaultEnvironment(), ...(spec.env ?? {}) },
  stderr: 'inherit',
});

// The host's wire: every message sent and received, in order.
const sent = [];
const received = [];
const origSend = transport.send.bind(transport);
transport.send = (msg, opts) => {
  sent.push({ at: now(), msg });
  return origSend(msg, opts);
};

const errors = [];
const client = new Client({ name: 'mcpx-interop-v1host', version: '1.0.0' }, { capabilities: {} });
client.onerror = err => errors.push({ at: now(), message: String(err?.message ?? err) });

async function connect() {
  await client.connect(transport);
  // Client.connect has set transport.onmessage: wrap it to see the wire.
  const deliver = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    received.push({ at: now(), msg });
    deliver(msg, extra);
  };
  report.serverVersion = client.getServerVersion();
  report.mcpxPid = transport.pid;
}

async function listTools() {
  const { tools } = await client.listTools();
  report.tools = tools.map(t => t.name);
  const long = tools.find(t => t.name === spec.tool);
  report.longToolSchema = long?.inputSchema ?? null;
  return long;
}

// wireFor returns what arrived on the wire for request id: its progress
// (progressToken === id, as SDK v1 uses the request id as the token) and
// its responses, each with its arrival time and index.
function wireFor(id) {
  const progress = [];
  const responses = [];
  received.forEach((r, index) => {
    const m = r.msg;
    if (m.method === 'notifications/progress' && m.params?.progressToken === id) {
      progress.push({ at: r.at, index, progress: m.params.progress, total: m.params.total });
    } else if (m.id === id && m.method === undefined) {
      responses.push({ at: r.at, index, error: m.error ?? null });
    }
  });
  return { progress, responses };
}

function callRequestId() {
  const req = sent.find(s => s.msg.method === 'tools/call' && s.msg.params?.name === spec.tool);
  return req ? { id: req.msg.id, progressToken: req.msg.params?._meta?.progressToken } : {};
}

async function long() {
  const tool = await listTools();
  if (!tool) throw new Error(`no tool ${spec.tool} in tools/list`);
  const onprogress = [];
  const start = now();
  const result = await client.callTool(
    { name: spec.tool, arguments: { duration: spec.duration, steps: spec.steps } },
    undefined,
    {
      timeout: spec.timeoutMs,
      resetTimeoutOnProgress: true,
      onprogress: p => onprogress.push({ at: now(), progress: p.progress, total: p.total }),
    },
  );
  const end = now();
  const { id, progressToken } = callRequestId();
  report.call = {
    requestId: id,
    progressToken,
    elapsedMs: end - start,
    result,
    onprogress,
    wire: wireFor(id),
  };
}

async function abort() {
  const tool = await listTools();
  if (!tool) throw new Error(`no tool ${spec.tool} in tools/list`);
  const controller = new AbortController();
  const onprogress = [];
  let abortedAt = null;
  const start = now();
  const call = client.callTool(
    { name: spec.tool, arguments: { duration: spec.duration, steps: spec.steps } },
    undefined,
    {
      timeout: spec.timeoutMs,
      resetTimeoutOnProgress: true,
      signal: controller.signal,
      onprogress: p => {
        onprogress.push({ at: now(), progress: p.progress, total: p.total });
        if (abortedAt === null) {
          abortedAt = now();
          controller.abort(spec.abortReason);
        }
      },
    },
  );
  let outcome;
  try {
    outcome = { resolved: true, result: await call };
  } catch (err) {
    outcome = { resolved: false, error: String(err?.message ?? err) };
  }
  outcome.settledAt = now();
  // Keep listening: anything mcpx sends for the call now is a bug.
  await sleep(spec.settleMs ?? 0);
  const { id, progressToken } = callRequestId();
  const cancel = sent.find(s => s.msg.method === 'notifications/cancelled');
  const wire = wireFor(id);
  report.call = {
    requestId: id,
    progressToken,
    startedAt: start,
    abortedAt,
    ...outcome,
    cancelSent: cancel ? { at: cancel.at, params: cancel.msg.params } : null,
    onprogress,
    wire,
    progressAfterAbort: wire.progress.filter(p => abortedAt !== null && p.at > abortedAt),
    onprogressAfterAbort: onprogress.filter(p => abortedAt !== null && p.at > abortedAt),
    listenedUntil: now(),
  };
}

const scenarios = { list: listTools, long, abort };

try {
  const run = scenarios[spec.scenario];
  if (!run) throw new Error(`unknown scenario ${JSON.stringify(spec.scenario)}`);
  await connect();
  await run();
  report.ok = true;
} catch (err) {
  report.error = String(err?.stack ?? err);
}
report.errors = errors;
const closeStart = now();
try {
  await client.close();
} catch (err) {
  report.closeError = String(err?.message ?? err);
}
report.closeMs = now() - closeStart;
clearTimeout(watchdog);
print();
