// oauthhost.mjs SPEC
//
// A person's host built on the TypeScript MCP SDK (1.x) and its OAuth
// client: it connects to mcpx with no token, is refused with 401, and the
// SDK finds mcpx's protected resource metadata, the authorization
// server's metadata, and starts the authorization code flow with PKCE;
// the browser step is driven over HTTP as a person would (the login form,
// the redirects); the SDK then redeems the code and the host connects
// again with the access token and calls a tool. It prints a JSON report
// on stdout (one line); mcpx's Go tests (internal/e2e) judge it.
//
// SPEC is a JSON object:
//
//   url                       mcpx's MCP endpoint
//   redirectUrl               the client's redirect URI (nothing listens)
//   clientId, clientSecret    the client registered at the provider
//   scope                     the scope the client asks for
//   user, password            the person at the login form
//   tool, args                the tool to call once signed in
//   deadlineMs                the whole run's limit
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const spec = JSON.parse(process.argv[2] ?? '{}');
const report = { ok: false, refusedFirst: false, authUrl: '', resource: '', result: null };
const print = () => process.stdout.write(JSON.stringify(report) + '\n');
const watchdog = setTimeout(() => {
  report.error = `oauthhost: no end within ${spec.deadlineMs} ms`;
  print();
  process.exit(1);
}, spec.deadlineMs ?? 60000);

let tokens, verifier, authUrl;
const provider = {
  get redirectUrl() { return spec.redirectUrl; },
  get clientMetadata() {
    return { redirect_uris: [spec.redirectUrl], client_name: 'mcpx interop host', grant_types: ['authorization_code'],
      response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic', scope: spec.scope };
  },
  state() { return 'state-1'; },
  clientInformation() { return { client_id: spec.clientId, client_secret: spec.clientSecret }; },
  tokens() { return tokens; },
  saveTokens(t) { tokens = t; },
  redirectToAuthorization(u) { authUrl = u; },
  saveCodeVerifier(v) { verifier = v; },
  codeVerifier() { return verifier; },
};

// browse follows url's redirects as a browser does (cookies kept) until
// one leads to the redirect URI, whose code it returns, or a page.
const cookies = new Map();
async function browse(url, init = {}) {
  for (let i = 0; i < 20; i++) {
    if (url.startsWith(spec.redirectUrl)) {
      return { code: new URL(url).searchParams.get('code') };
    }
    const headers = { ...(init.headers ?? {}) };
    if (cookies.size) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const resp = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of resp.headers.getSetCookie?.() ?? []) {
      const [kv] = c.split(';');
      const eq = kv.indexOf('=');
      cookies.set(kv.slice(0, eq).trim(), kv.slice(eq + 1));
    }
    const loc = resp.headers.get('location');
    if (resp.status >= 300 && resp.status < 400 && loc) {
      url = new URL(loc, url).toString();
      init = {};
      continue;
    }
    return { page: url, status: resp.status, body: await resp.text() };
  }
  throw new Error('too many redirects');
}

async function signIn(u) {
  const form = await browse(u.toString());
  const id = new URL(form.page).searchParams.get('authRequestID');
  if (!id) throw new Error(`the authorization URL led to ${form.page} (${form.status}), not the login form`);
  const login = new URL('/login/username', form.page).toString();
  const body = new URLSearchParams({ username: spec.user, password: spec.password, id }).toString();
  const back = await browse(login, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  if (!back.code) throw new Error(`the sign-in ended at ${back.page} (${back.status}) without a code`);
  return back.code;
}

try {
  const url = new URL(spec.url);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  try {
    await new Client({ name: 'mcpx-oauth-host', version: '1.0.0' }).connect(first);
    throw new Error('mcpx let the host in without a token');
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    report.refusedFirst = true;
  }
  if (!authUrl) throw new Error('the SDK did not start the authorization');
  report.authUrl = authUrl.toString();
  report.resource = authUrl.searchParams.get('resource') ?? '';
  const code = await signIn(authUrl);
  await first.finishAuth(code);
  const client = new Client({ name: 'mcpx-oauth-host', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  report.result = await client.callTool({ name: spec.tool, arguments: spec.args ?? {} });
  report.ok = true;
  await client.close();
} catch (err) {
  report.error = String(err?.stack ?? err);
}
clearTimeout(watchdog);
print();
process.exit(report.ok ? 0 : 1);
