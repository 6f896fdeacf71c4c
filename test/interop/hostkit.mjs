// hostkit.mjs: what the TypeScript interop hosts (jobhost, timerhost,
// surfacehost, taskhost, researchhost) share: their SPEC from the command line, a report printed
// once as one JSON line on stdout, a watchdog that prints it and exits
// when the run passes spec.deadlineMs, and the SDK client and transport
// the spec names.
//
// The spec's common fields:
//
//   sdk          "v1": @modelcontextprotocol/sdk 1.x (legacy); "v2":
//                @modelcontextprotocol/client 2.x pinned to 2026-07-28
//   transport    "stdio" (spawns mcpx serve: mcpx, config, inProcess, env)
//                or "http" (url, token)
//   deadlineMs   the whole run's limit (default 60 s)
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HTTPV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1, getDefaultEnvironment as envV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HTTPV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2, getDefaultEnvironment as envV2 } from '@modelcontextprotocol/client/stdio';

// run starts a host named name: it returns the spec, the report (sdk,
// transport, ok: false, and fields), print (writes the report), stop
// (ends the watchdog) and end, which closes a client (a failure to close
// goes in report.closeError), stops and prints.
export function run(name, fields = {}) {
  const spec = JSON.parse(process.argv[2] ?? '{}');
  const report = { sdk: spec.sdk, transport: spec.transport, ok: false, ...fields };
  const print = () => process.stdout.write(JSON.stringify(report) + '\n');
  const watchdog = setTimeout(() => {
    report.error = `${name}: no end within ${spec.deadlineMs} ms`;
    print();
    process.exit(1);
  }, spec.deadlineMs ?? 60000);
  const stop = () => clearTimeout(watchdog);
  const end = async client => {
    try {
      await client.close();
    } catch (err) {
      report.closeError = String(err?.message ?? err);
    }
    stop();
    print();
  };
  return { spec, report, print, stop, end };
}

// connectTo returns a client of the spec's SDK, with clientInfo info and
// capabilities (none unless given), not yet connected, and the transport
// the spec names. A v2 client pins era (2026-07-28 unless given; at
// 2025-11-25 it negotiates as a legacy client).
export function connectTo(spec, info, { capabilities = {}, era = '2026-07-28' } = {}) {
  const v1 = spec.sdk === 'v1';
  let transport;
  if (spec.transport === 'stdio') {
    const args = ['serve', '--config', spec.config];
    if (spec.inProcess) args.push('--in-process');
    const env = { ...(v1 ? envV1() : envV2()), ...(spec.env ?? {}) };
    transport = v1
      ? new StdioV1({ command: spec.mcpx, args, env, stderr: 'inherit' })
      : new StdioV2({ command: spec.mcpx, args, env, stderr: 'inherit' });
  } else {
    const requestInit = spec.token ? { headers: { Authorization: `Bearer ${spec.token}` } } : undefined;
    const url = new URL(spec.url);
    transport = v1 ? new HTTPV1(url, { requestInit }) : new HTTPV2(url, { requestInit });
  }
  const client = v1
    ? new ClientV1(info, { capabilities })
    : new ClientV2(info, { capabilities, versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' } });
  return { client, transport, v1 };
}
