// surfacehost.mjs SPEC
//
// A host built on the TypeScript MCP SDK that uses mcpx's resources,
// prompts, completion and logging, and prints a JSON report on stdout
// (one line). mcpx's Go tests (internal/e2e/surface_ts_test.go) judge the
// report and what the upstreams saw; the script only observes.
//
// SPEC is a JSON object:
//
//   sdk          "v1": @modelcontextprotocol/sdk 1.x (legacy, initialize);
//                "v2": @modelcontextprotocol/client 2.x pinned to 2026-07-28
//   transport    "http" (url, token) or "stdio" (v1 only: spawns mcpx,
//                inProcess, config, env)
//   reads        URIs to read; prompts: [{name, arguments}] to get;
//   completions  [{ref, argument}] to complete
//   bad          {uri, prompt, cursor}: each must be refused (the error's
//                code and message are reported)
//   touch        (stdio) {tool, uri}: subscribe to uri, call tool with
//                {uri}, and wait for notifications/resources/updated
//   listen       (v2) {tool, uri}: touch as above, subscribed through
//                client.listen({resourceSubscriptions: [uri]})
//   log          (stdio) {tool, level, levels}: setLoggingLevel(level), call
//                tool with {levels}, and report the messages received
//   deadlineMs   the whole run's limit
import { ResourceUpdatedNotificationSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { run, connectTo } from './hostkit.mjs';

const { spec, report, end } = run('surfacehost');
const received = [];
const v1 = spec.sdk === 'v1';
const { client, transport } = connectTo(
  spec,
  v1 ? { name: 'mcpx-interop-surfacehost-v1', version: '1.0.0' } : { name: 'mcpx-interop-surfacehost-v2', version: '2.0.0' },
);

const refusal = async f => {
  try {
    await f();
    return { refused: false };
  } catch (err) {
    return { refused: true, code: err?.code ?? null, message: String(err?.message ?? err) };
  }
};

const all = async (list, field) => {
  const out = [];
  let cursor;
  for (let page = 0; page < 50; page++) {
    const res = await list(cursor ? { cursor } : {});
    out.push(...res[field]);
    if (!res.nextCursor) return { items: out, pages: page + 1 };
    cursor = res.nextCursor;
  }
  throw new Error('the list never ended');
};

try {
  await client.connect(transport);
  report.capabilities = client.getServerCapabilities() ?? null;
  const resources = await all(p => client.listResources(p), 'resources');
  report.resources = resources.items.map(r => r.uri);
  report.resourcePages = resources.pages;
  report.templates = (await all(p => client.listResourceTemplates(p), 'resourceTemplates')).items.map(t => t.uriTemplate);
  report.reads = [];
  for (const uri of spec.reads ?? []) {
    const res = await client.readResource({ uri });
    report.reads.push({ uri, contents: res.contents });
  }
  report.prompts = (await all(p => client.listPrompts(p), 'prompts')).items.map(p => p.name);
  report.gets = [];
  for (const p of spec.prompts ?? []) {
    const res = await client.getPrompt(p);
    report.gets.push({ name: p.name, messages: res.messages });
  }
  report.completions = [];
  for (const c of spec.completions ?? []) {
    const res = await client.complete(c);
    report.completions.push(res.completion.values);
  }
  report.bad = {
    uri: await refusal(() => client.readResource({ uri: spec.bad.uri })),
    prompt: await refusal(() => client.getPrompt({ name: spec.bad.prompt })),
    cursor: await refusal(() => client.listPrompts({ cursor: spec.bad.cursor })),
  };
  if (spec.touch) {
    const updated = new Promise(resolve =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, n => resolve(n.params)));
    await client.subscribeResource({ uri: spec.touch.uri });
    await client.callTool({ name: spec.touch.tool, arguments: { uri: spec.touch.uri } });
    report.updated = await updated;
    await client.unsubscribeResource({ uri: spec.touch.uri });
  }
  if (spec.listen) {
    // v2, 2026-07-28: subscribe through subscriptions/listen; the update
    // reaches the same notification handler.
    const updated = new Promise(resolve =>
      client.setNotificationHandler('notifications/resources/updated', n => resolve(n.params)));
    const sub = await client.listen({ resourceSubscriptions: [spec.listen.uri] });
    report.honoredFilter = sub.honoredFilter;
    await client.callTool({ name: spec.listen.tool, arguments: { uri: spec.listen.uri } });
    report.updated = await updated;
    await sub.close();
  }
  if (spec.log) {
    const messages = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, n => messages.push(n.params));
    await client.setLoggingLevel(spec.log.level);
    const res = await client.callTool({ name: spec.log.tool, arguments: { levels: spec.log.levels, message: 'from the ts host' } });
    report.logTool = res.content?.[0]?.text ?? null;
    await new Promise(resolve => setTimeout(resolve, 300)); // notifications after the result
    report.messages = messages;
  }
  report.ok = true;
} catch (err) {
  report.error = String(err?.stack ?? err);
}
await end(client);
