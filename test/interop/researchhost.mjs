// researchhost.mjs SPEC
//
// A host that calls server-everything's simulate-research-query through
// mcpx, whose server runs it as a task of its own (taskSupport required)
// and, with ambiguous: true, asks the host which interpretation it means
// halfway (an elicitation). Built on the TypeScript MCP SDK v1
// (@modelcontextprotocol/sdk, 2025-11-25 tasks: callToolStream, which
// calls tasks/result on input_required and answers the elicitation that
// comes on it) or v2 (@modelcontextprotocol/client): pinned to 2025-11-25
// it drives the tasks with plain requests (the v2 client has the wire
// types of 2025-11-25 tasks but no runtime for them; and it cannot read a
// 2026-07-28 CreateTaskResult, whose resultType it refuses), pinned to
// 2026-07-28 it makes a plain call (mcpx follows the server's task, and
// the question reaches the host as input_required, which the SDK answers
// and retries). In each, a second call is cancelled mid-way. It prints a
// JSON report (one line) on stdout; mcpx's Go tests
// (internal/e2e/research_ts_test.go) judge it and read the server's side
// in a tap.
//
// SPEC is a JSON object:
//
//   sdk         "v1" or "v2"
//   era         for v2: "2025-11-25" (tasks) or "2026-07-28" (plain calls)
//   transport   "http" (url, token) or "stdio" (spawns mcpx serve: mcpx,
//               config, inProcess, env)
//   tool        exposed name of simulate-research-query
//   answer      the interpretation the host picks ("historical")
//   deadlineMs  the whole run's limit
import { CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { run, connectTo } from './hostkit.mjs';

const { spec, report, end } = run('researchhost');
report.era = spec.era ?? '2025-11-25';
const { client, transport, v1 } = connectTo(
  spec,
  { name: 'mcpx-interop-researchhost', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } }, era: report.era },
);

// The host's answer to the server's question, and what it was asked.
report.questions = [];
const elicit = params => {
  report.questions.push({
    message: params.message,
    relatedTask: params._meta?.['io.modelcontextprotocol/related-task']?.taskId ?? null,
    options: (params.requestedSchema?.properties?.interpretation?.oneOf ?? []).map(o => o.const),
  });
  return { action: 'accept', content: { interpretation: spec.answer } };
};
if (v1) client.setRequestHandler(ElicitRequestSchema, req => elicit(req.params));
else client.setRequestHandler('elicitation/create', req => elicit(req.params ?? req));

// Any result, as the SDK's era registry would not read it (a v2 client's
// explicit schema for the 2025-11-25 task methods).
const anything = { '~standard': { version: 1, vendor: 'mcpx-interop', validate: value => ({ value }) } };
const sleep = ms => new Promise(r => setTimeout(r, ms));
const textOf = res => res?.content?.[0]?.text ?? null;
const errorOf = err => ({ code: err?.code ?? null, message: String(err?.message ?? err) });

// v2 on 2025-11-25: a task-augmented call, tasks/get until the task asks
// or ends, then tasks/result (on which the question comes).
async function taskByHand(args, statuses) {
  const created = await client.request({ method: 'tools/call', params: { name: spec.tool, arguments: args, task: { ttl: 60000 } } }, anything);
  const id = created.task.taskId;
  for (let i = 0; i < 600; i++) {
    const t = await client.request({ method: 'tasks/get', params: { taskId: id } }, anything);
    if (statuses.at(-1) !== t.status) statuses.push(t.status);
    if (t.status !== 'working') break;
    await sleep(t.pollInterval ?? 200);
  }
  return { id, result: await client.request({ method: 'tasks/result', params: { taskId: id } }, anything, { timeout: 60000 }) };
}

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  report.taskSupport = tools.find(t => t.name === spec.tool)?.execution?.taskSupport ?? null;
  const args = { topic: 'the tides', ambiguous: true };
  report.research = { statuses: [] };
  if (v1) {
    const stream = client.experimental.tasks.callToolStream({ name: spec.tool, arguments: args }, undefined, { task: { ttl: 60000 }, timeout: 60000 });
    for await (const m of stream) {
      if (m.type === 'taskCreated') report.research.taskId = m.task.taskId;
      if (m.type === 'taskStatus' && report.research.statuses.at(-1) !== m.task.status) report.research.statuses.push(m.task.status);
      if (m.type === 'result') report.research.text = textOf(m.result);
      if (m.type === 'error') report.research.error = String(m.error.message);
    }
  } else if (report.era === '2025-11-25') {
    const { id, result } = await taskByHand(args, report.research.statuses);
    report.research.taskId = id;
    report.research.text = textOf(result);
  } else {
    const res = await client.callTool({ name: spec.tool, arguments: args }, { timeout: 60000 });
    report.research.text = textOf(res);
  }

  // A second one, cancelled once it is under way.
  report.cancel = {};
  const quiet = { topic: 'kelp forests', ambiguous: false };
  if (v1 || report.era === '2025-11-25') {
    const created = v1
      ? await client.request({ method: 'tools/call', params: { name: spec.tool, arguments: quiet, task: {} } }, CreateTaskResultSchema)
      : await client.request({ method: 'tools/call', params: { name: spec.tool, arguments: quiet, task: {} } }, anything);
    const id = created.task.taskId;
    report.cancel.taskId = id;
    const get = () => client.request({ method: 'tasks/get', params: { taskId: id } }, v1 ? undefined : anything);
    for (let i = 0; i < 600; i++) {
      const t = v1 ? await client.experimental.tasks.getTask(id) : await get();
      report.cancel.statusMessage = t.statusMessage ?? null;
      if (t.statusMessage) break;
      await sleep(100);
    }
    const cancelled = v1 ? await client.experimental.tasks.cancelTask(id) : await client.request({ method: 'tasks/cancel', params: { taskId: id } }, anything);
    report.cancel.answer = cancelled.status;
  } else {
    const ac = new AbortController();
    const call = client.callTool({ name: spec.tool, arguments: quiet }, { signal: ac.signal, timeout: 60000 });
    await sleep(1500);
    ac.abort('the user gave up');
    report.cancel.error = await call.then(() => null, errorOf);
  }
  report.ok = true;
} catch (err) {
  report.error = String(err?.stack ?? err);
}
await end(client);
process.exit(0);
