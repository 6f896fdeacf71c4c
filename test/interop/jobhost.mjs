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
//   capabilities the client capabilities to declare (default none)
//   arguments   the tool's arguments (default: seconds, and a text)
//   noRetry     true: no retry of the first call
//   elicit      (v1) the result to answer elicitation/create with; the
//               host declares form elicitation (capabilities) and
//               reports each question it is asked in asked, with
//               afterJob: whether it came after the job answer
//   leave       true: close the client at once after the first answer
//               (the host is gone when the job asks)
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { run, connectTo } from './hostkit.mjs';

const { spec, report, end } = run('jobhost');
const { client, transport, v1 } = connectTo(spec, { name: spec.clientName, version: '1.0.0' }, { capabilities: spec.capabilities ?? {} });
let answered = false; // the first call has its answer
if (spec.elicit) {
  report.asked = [];
  client.setRequestHandler(ElicitRequestSchema, async request => {
    report.asked.push({ method: request.method, params: request.params, afterJob: answered });
    return spec.elicit;
  });
}
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
  const args = spec.arguments ?? { seconds: spec.seconds, text: 'the export is done' };
  report.first = await timed({ name: spec.tool, arguments: args });
  answered = true;
  if (spec.leave) {
    report.ok = true;
    await end(client);
    process.exit(0);
  }
  // The model calls it again, as models do after a timeout.
  if (!spec.noRetry) report.retry = await timed({ name: spec.tool, arguments: args });
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
await end(client);
process.exit(0);
