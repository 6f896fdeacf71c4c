// taskhost.mjs SPEC
//
// A 2025-11-25 host that uses MCP tasks, built on the TypeScript MCP SDK
// v1 (@modelcontextprotocol/sdk) and its experimental tasks client: it
// reads the server's tasks capability and a tool's execution.taskSupport,
// makes a task-augmented call of a slow tool and polls it to its result
// (callToolStream), starts a second one and cancels it mid-way, lists its
// tasks, and asks for an unknown task and a second cancel. It prints a
// JSON report (one line) on stdout; mcpx's Go tests (internal/e2e/tasks_ts_test.go) judge
// it and check the upstream saw the cancel.
//
// SPEC is a JSON object:
//
//   transport   "http" (url, token) or "stdio" (spawns mcpx serve: mcpx,
//               config, inProcess, env)
//   tool        exposed name of the demo's sleep_then
//   seconds     the most the completed call works
//   gate        a file the call waits for (sleep_then's gate): created
//               once a poll has shown the task working, so that the
//               call cannot end before the host's first poll
//   cancelTool  exposed name of the demo's export (cancelled mid-way, once
//               its progress shows in the task's statusMessage)
//   deadlineMs  the whole run's limit
import { writeFileSync } from 'node:fs';
import { CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { run, connectTo } from './hostkit.mjs';

const { spec, report, end } = run('taskhost');
const { client, transport } = connectTo({ ...spec, sdk: 'v1' }, { name: 'mcpx-interop-taskhost', version: '1.0.0' });
report.notifications = [];
client.setNotificationHandler(TaskStatusNotificationSchema, n => {
  report.notifications.push({ taskId: n.params.taskId, status: n.params.status });
});
const errorOf = async fn => {
  try {
    await fn();
    return null;
  } catch (err) {
    return { code: err.code ?? null, message: String(err.message ?? err) };
  }
};

try {
  await client.connect(transport);
  report.capability = client.getServerCapabilities()?.tasks ?? null;
  const { tools } = await client.listTools();
  report.taskSupport = tools.find(t => t.name === spec.tool)?.execution?.taskSupport ?? null;
  report.metaTaskSupport = tools.find(t => t.name === 'mcpx_search')?.execution?.taskSupport ?? null;

  // A task polled to its result.
  report.done = { messages: [] };
  const stream = client.experimental.tasks.callToolStream(
    { name: spec.tool, arguments: { seconds: spec.seconds, text: 'the task is done', gate: spec.gate } },
    undefined,
    { task: { ttl: 60000 } },
  );
  for await (const m of stream) {
    if (m.type === 'taskCreated') {
      report.done.taskId = m.task.taskId;
      report.done.created = m.task;
    }
    report.done.messages.push(m.type === 'taskStatus' ? m.task.status : m.type);
    if (m.type === 'taskStatus' && m.task.status === 'working' && spec.gate) writeFileSync(spec.gate, '');
    if (m.type === 'result') {
      report.done.text = m.result.content?.[0]?.text ?? null;
      report.done.related = m.result._meta?.['io.modelcontextprotocol/related-task']?.taskId ?? null;
    }
    if (m.type === 'error') report.done.error = String(m.error.message);
  }

  // A task cancelled mid-way: its progress (its call is at the upstream)
  // shows in its statusMessage before the cancel.
  const created = await client.request(
    { method: 'tools/call', params: { name: spec.cancelTool, arguments: { seconds: 60, steps: 600 }, task: {} } },
    CreateTaskResultSchema,
  );
  const cancelId = created.task.taskId;
  report.cancel = { taskId: cancelId, pollInterval: created.task.pollInterval, ttl: created.task.ttl };
  for (let i = 0; i < 200; i++) {
    const t = await client.experimental.tasks.getTask(cancelId);
    report.cancel.before = t.status;
    report.cancel.statusMessage = t.statusMessage ?? null;
    if (t.statusMessage) break;
    await new Promise(r => setTimeout(r, t.pollInterval ?? 100));
  }
  report.cancel.answer = (await client.experimental.tasks.cancelTask(cancelId)).status;
  report.cancel.after = (await client.experimental.tasks.getTask(cancelId)).status;
  report.cancel.again = await errorOf(() => client.experimental.tasks.cancelTask(cancelId));
  report.cancel.result = await errorOf(() => client.experimental.tasks.getTaskResult(cancelId));

  const listed = await client.experimental.tasks.listTasks();
  report.listed = listed.tasks.map(t => t.taskId);
  report.unknown = await errorOf(() => client.experimental.tasks.getTask('job_nosuchtask'));
  report.ok = true;
} catch (err) {
  report.error = String(err?.stack ?? err);
}
await end(client);
process.exit(0);
