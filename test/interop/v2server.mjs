// v2server.mjs
//
// A 2026-07-28 MCP server built on the TypeScript SDK v2
// (@modelcontextprotocol/server createMcpHandler, mounted with
// @modelcontextprotocol/node toNodeHandler on node:http), for mcpx's HTTP
// upstream tests (internal/e2e/upstream_http_test.go). It listens on
// 127.0.0.1 on a free port and reports on stdout, one JSON object a line,
// "at" being ms since the epoch:
//
//   {"event":"listening","url":"http://127.0.0.1:PORT/mcp"}
//   {"event":"call","tool":T,"marker":M,"progressToken":P,"headers":{...}}
//       a tools/call reached a tool; headers are the request's MCP ones
//   {"event":"aborted","tool":"slow","marker":M,"reason":R}
//       the call's abort signal fired (the client closed its stream)
//   {"event":"finished","tool":"slow","marker":M}
//
// Tools:
//   slow {steps, interval_ms, marker}   progress each step, until aborted
//   region {region}                     region carries x-mcp-header Region;
//                                       answers with the header it got
//   bad_number {p}                      an x-mcp-header on a number: a client
//                                       must leave this tool out
//
// It exits on SIGTERM, SIGINT, or when its stdin closes.
import http from 'node:http';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const emit = ev => process.stdout.write(JSON.stringify({ ...ev, at: performance.timeOrigin + performance.now() }) + '\n');

const mcpHeaders = req => {
  const out = {};
  if (!req?.headers) return out;
  for (const [k, v] of req.headers) {
    if (k.startsWith('mcp-')) out[k] = v;
  }
  return out;
};

const sleep = (ms, signal) =>
  new Promise(resolve => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });

function factory() {
  const server = new McpServer({ name: 'v2-upstream', version: '1.0.0' });

  server.registerTool(
    'slow',
    {
      description: 'Counts steps, sending progress, until its request is aborted',
      inputSchema: fromJsonSchema({
        type: 'object',
        properties: { steps: { type: 'integer' }, interval_ms: { type: 'integer' }, marker: { type: 'string' } },
        required: ['steps', 'marker'],
      }),
    },
    async (args, ctx) => {
      const { steps, interval_ms: interval = 10, marker } = args;
      const signal = ctx.mcpReq.signal;
      const token = ctx.mcpReq._meta?.progressToken;
      emit({ event: 'call', tool: 'slow', marker, progressToken: token ?? null, headers: mcpHeaders(ctx.http?.req) });
      signal.addEventListener('abort', () => emit({ event: 'aborted', tool: 'slow', marker, reason: String(signal.reason ?? '') }), { once: true });
      for (let i = 1; i <= steps && !signal.aborted; i++) {
        if (token !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
        }
        await sleep(interval, signal);
      }
      if (!signal.aborted) emit({ event: 'finished', tool: 'slow', marker });
      return { content: [{ type: 'text', text: `done ${marker}` }] };
    },
  );

  server.registerTool(
    'region',
    {
      description: 'Answers with the region and the Mcp-Param-Region header it got',
      inputSchema: fromJsonSchema({
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      }),
    },
    async (args, ctx) => {
      const headers = mcpHeaders(ctx.http?.req);
      emit({ event: 'call', tool: 'region', headers });
      return { content: [{ type: 'text', text: `region ${args.region} header ${headers['mcp-param-region'] ?? '(none)'}` }] };
    },
  );

  server.registerTool(
    'bad_number',
    {
      description: 'x-mcp-header on a number: invalid',
      inputSchema: fromJsonSchema({ type: 'object', properties: { p: { type: 'number', 'x-mcp-header': 'P' } } }),
    },
    async () => ({ content: [{ type: 'text', text: 'bad_number was called' }] }),
  );

  return server;
}

const handler = createMcpHandler(factory, { onerror: err => process.stderr.write(`v2server: ${err?.stack ?? err}\n`) });
const httpServer = http.createServer(toNodeHandler(handler));
httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address();
  emit({ event: 'listening', url: `http://127.0.0.1:${port}/mcp` });
});

const stop = () => {
  httpServer.closeAllConnections?.();
  httpServer.close();
  handler.close().finally(() => process.exit(0));
};
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, stop);
process.stdin.on('end', stop);
process.stdin.resume();
