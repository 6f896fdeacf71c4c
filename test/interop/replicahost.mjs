// replicahost.mjs SPEC
//
// A 2026-07-28 host (TypeScript SDK v2, @modelcontextprotocol/client)
// in front of several mcpx replicas behind a load balancer: each of its
// requests is stateless, so each may land on another replica. It prints a
// JSON report (one line) on stdout; mcpx's Go tests
// (internal/e2e/replicas_test.go) judge it against what the upstreams
// recorded.
//
// SPEC is a JSON object:
//
//   url, token   the balancer's MCP endpoint and the bearer token
//   mode         "jobs": start `count` background jobs of demo__sleep_then
//                (`seconds` each, text "job-<i>"), `parallel` at a time, and
//                poll each with mcpx_job until it ends;
//                "cancel": `count` times, one after another, start a
//                background demo__scan, poll until it reports progress (it
//                runs upstream), then cancel it with mcpx_job_cancel sent to
//                `cancelUrl` (a replica's own endpoint), noting the time;
//                "start": start `count` background jobs of `tool` with
//                `arguments` (plus {text: "<tag>-<i>"} for sleep_then, else
//                {tag: "<tag>-<i>"}) and
//                report their ids at once;
//                "poll": poll each job of `ids` with mcpx_job until it ends;
//                "call": call `tool` with `arguments` once and report its
//                result's text and isError
//   deadlineMs   the whole run's limit
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const spec = JSON.parse(process.argv[2] ?? '{}');
const report = { ok: false };
const print = () => process.stdout.write(JSON.stringify(report) + '\n');
const watchdog = setTimeout(() => {
  report.error = `replicahost: no end within ${spec.deadlineMs} ms`;
  print();
  process.exit(1);
}, spec.deadlineMs ?? 120000);

const connect = async url => {
  const requestInit = { headers: { Authorization: `Bearer ${spec.token}` } };
  const client = new Client(
    { name: 'mcpx-interop-replicahost', version: '2.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  return client;
};
const opts = { timeout: 60000 };
let client;
const call = (name, args, c = client) => c.callTool({ name, arguments: args }, opts);
const start = async (tool, args) => {
  const res = await call('mcpx_call', { name: tool, arguments: args, background: true });
  const id = res.structuredContent?.job_id;
  if (!id) throw new Error(`no job id: ${JSON.stringify(res)}`);
  return id;
};
const poll = async id => {
  for (let polls = 1; ; polls++) {
    const r = await call('mcpx_job', { job_id: id, wait_seconds: 2 });
    // A completed job answers with the tool's own result, which has no
    // job status; every other answer is the job's state.
    const status = r.structuredContent?.job_id === id ? r.structuredContent.status : 'completed';
    if (status !== 'running') return { id, status, text: r.content?.[0]?.text ?? null, isError: !!r.isError, polls };
  }
};

try {
  client = await connect(spec.url);
  if (spec.mode === 'jobs') {
    report.jobs = [];
    let next = 0;
    const worker = async () => {
      while (next < spec.count) {
        const i = next++;
        const id = await start('demo__sleep_then', { seconds: spec.seconds, text: `job-${i}` });
        report.jobs.push({ i, ...(await poll(id)) });
      }
    };
    await Promise.all(Array.from({ length: spec.parallel ?? 10 }, worker));
  } else if (spec.mode === 'cancel') {
    const direct = await connect(spec.cancelUrl);
    report.cancels = [];
    for (let i = 0; i < spec.count; i++) {
      // Round-robin over two replicas with a fixed number of requests an
      // iteration would start every job on the same one: an extra request
      // every other time moves the next start along.
      if (i % 2) await client.listTools();
      const id = await start('demo__scan', { seconds: 600, steps: 6000, tag: i });
      for (;;) {
        const r = await call('mcpx_job', { job_id: id, wait_seconds: 1 });
        if (r.structuredContent?.progress) break;
        if (r.structuredContent?.status !== 'running') throw new Error(`job ${id} ended: ${JSON.stringify(r)}`);
      }
      const at = Date.now();
      const r = await call('mcpx_job_cancel', { job_id: id }, direct);
      report.cancels.push({ id, at, status: r.structuredContent?.status ?? null });
    }
    await direct.close();
  } else if (spec.mode === 'start') {
    report.ids = [];
    for (let i = 0; i < spec.count; i++) {
      const args = { ...spec.arguments };
      // Distinct arguments: the same call again would attach to the job.
      if (spec.tool.endsWith('sleep_then')) args.text = `${spec.tag}-${i}`;
      else args.tag = `${spec.tag}-${i}`;
      report.ids.push(await start(spec.tool, args));
    }
  } else if (spec.mode === 'call') {
    const r = await call(spec.tool, spec.arguments ?? {});
    report.result = { text: r.content?.[0]?.text ?? null, isError: !!r.isError };
  } else if (spec.mode === 'poll') {
    report.jobs = await Promise.all(spec.ids.map(poll));
  }
  report.ok = true;
} catch (err) {
  report.error = String(err?.stack ?? err);
}
try {
  await client?.close();
} catch (err) {
  report.closeError = String(err?.message ?? err);
}
clearTimeout(watchdog);
print();
process.exit(0);
