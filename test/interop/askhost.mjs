// askhost.mjs SPEC
//
// A legacy host built on the TypeScript MCP SDK v1 that answers what an
// upstream asks through mcpx: elicitation/create, sampling/createMessage
// and roots/list. It connects to `mcpx serve` over stdio (spawning it) or
// to mcpx's Streamable HTTP endpoint, calls tools in order, and prints a
// JSON report on stdout (one line). mcpx's Go tests
// (internal/e2e/ask_ts_test.go) judge the report and what the upstream
// saw; the script only observes and answers.
//
// SPEC is a JSON object:
//
//   sdk           "v1" (default): @modelcontextprotocol/sdk, legacy; the
//                 requests arrive as server-to-client requests. "v2":
//                 @modelcontextprotocol/client pinned to 2026-07-28, HTTP
//                 only; they arrive inside input_required results, which
//                 the SDK answers from the same handlers and retries.
//   transport     "stdio" or "http"
//   mcpx, config, inProcess, env   (stdio) as in v1host.mjs
//   url, token    (http) the endpoint and its bearer token
//   capabilities  the client capabilities to declare
//   elicit        the result to answer elicitation/create with
//   sample        the result to answer sampling/createMessage with
//   roots         the roots to answer roots/list with
//   calls         [{name, arguments}] called one after the other
//   deadlineMs    the whole run's limit
//
// Report: asked (every request mcpx sent the host: id, method, params, in
// order), handled (every question a handler answered), inputRequired
// (the inputRequests keys and requestState of each input_required
// result), retries (the requestState of each retry sent), results (each
// call's result or error), ok, error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';

const spec = JSON.parse(process.argv[2] ?? '{}');
const report = { ok: false, asked: [], handled: [], inputRequired: [], retries: [], results: [] };
const v2 = spec.sdk === 'v2';
const print = () => process.stdout.write(JSON.stringify(report) + '\n');
const watchdog = setTimeout(() => {
  report.error = `askhost: no end within ${spec.deadlineMs} ms`;
  print();
  process.exit(1);
}, spec.deadlineMs ?? 60000);

let transport;
if (spec.transport === 'http') {
  const requestInit = spec.token ? { headers: { Authorization: `Bearer ${spec.token}` } } : undefined;
  transport = v2 ? new TransportV2(new URL(spec.url), { requestInit }) : new StreamableHTTPClientTransport(new URL(spec.url), { requestInit });
  const origSend = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    if (msg.params?.requestState !== undefined) report.retries.push(msg.params.requestState);
    return origSend(msg, opts);
  };
} else {
  const args = ['serve', '--config', spec.config];
  if (spec.inProcess) args.push('--in-process');
  transport = new StdioClientTransport({
    command: spec.mcpx, args, env: { ...getDefaultEnvironment(), ...(spec.env ?? {}) }, stderr: 'inherit',
  });
}

// Every request the transport delivers, before the SDK dispatches it.
const wrap = () => {
  const orig = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg.method && msg.id !== undefined) report.asked.push({ id: msg.id, method: msg.method, params: msg.params });
    if (msg.result?.resultType === 'input_required') {
      report.inputRequired.push({ keys: Object.keys(msg.result.inputRequests ?? {}), requestState: msg.result.requestState });
    }
    orig?.(msg, extra);
  };
};

const handled = (method, answer) => async request => {
  report.handled.push({ method, params: request.params });
  return answer();
};
const answers = {
  'elicitation/create': () => spec.elicit,
  'sampling/createMessage': () => spec.sample,
  'roots/list': () => ({ roots: spec.roots ?? [] }),
};
let client;
if (v2) {
  client = new ClientV2({ name: 'askhost-v2', version: '2.0.0' },
    { capabilities: spec.capabilities ?? {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  for (const [method, answer] of Object.entries(answers)) client.setRequestHandler(method, handled(method, answer));
} else {
  client = new Client({ name: 'askhost', version: '1.0.0' }, { capabilities: spec.capabilities ?? {} });
  client.setRequestHandler(ElicitRequestSchema, handled('elicitation/create', answers['elicitation/create']));
  client.setRequestHandler(CreateMessageRequestSchema, handled('sampling/createMessage', answers['sampling/createMessage']));
  client.setRequestHandler(ListRootsRequestSchema, handled('roots/list', answers['roots/list']));
}

try {
  await client.connect(transport);
  wrap();
  for (const c of spec.calls ?? []) {
    try {
      const params = { name: c.name, arguments: c.arguments ?? {} };
      const res = v2 ? await client.callTool(params, { timeout: 30000 }) : await client.callTool(params, undefined, { timeout: 30000 });
      report.results.push({ name: c.name, result: res });
    } catch (err) {
      report.results.push({ name: c.name, error: String(err?.message ?? err) });
    }
  }
  report.ok = true;
} catch (err) {
  report.error = String(err?.stack ?? err);
} finally {
  try {
    await client.close();
  } catch (err) {
    report.closeError = String(err);
  }
  clearTimeout(watchdog);
  print();
}
