// mcpx's tools as opencode tools, through mcpx's stable local API (/v1).
//
// Each tool's description and argument schema come from GET /v1/tools.
// A call is POST /v1/call, whose NDJSON stream carries the call's progress
// (shown live through the tool context's metadata) and then its result.
// opencode's abort signal closes the stream: the daemon then cancels the
// call upstream with the reason "the client disconnected (opencode)".
//
// Where the daemon is: MCPX_URL (its HTTP listener, with MCPX_TOKEN) or
// MCPX_SOCKET (its unix socket), else the plugin asks the mcpx command
// (MCPX_BIN, default "mcpx" on PATH; MCPX_CONFIG for --config), which
// starts the daemon if none runs. The same settings may be given as the
// plugin's options: url, token, socket, bin, config.
//
// opencode calls every export of a plugin module: this one exports only
// the plugin.

import { tool, type Plugin, type ToolContext, type ToolDefinition } from "@opencode-ai/plugin"
import { execFile } from "node:child_process"
import * as http from "node:http"
import * as https from "node:https"
import { createInterface } from "node:readline"
import type { z } from "zod"

type Settings = { url?: string; token?: string; socket?: string; bin?: string; config?: string }

type ApiTool = {
  name: string
  server: string
  tool: string
  title?: string
  description?: string
  inputSchema?: JsonSchema
  route?: string
}

type Progress = { progress: number; total?: number; message?: string }

type CallEvent = {
  type: string
  callId?: number
  server?: string
  tool?: string
  progress?: Progress
  result?: { content?: { type: string; text?: string }[]; structuredContent?: unknown; isError?: boolean }
  isError?: boolean
  error?: { code: number; message: string; kind: string }
  exitCode?: number
}

type JsonSchema = {
  type?: string | string[]
  description?: string
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  enum?: unknown[]
  default?: unknown
}

// The name the daemon gives to a call this plugin abandons.
const clientName = "opencode"

export const McpxPlugin: Plugin = async (_input, options) => {
  const api = await connect(settingsOf(options))
  const listing = (await api.json("GET", "/v1/tools")) as { tools: ApiTool[]; meta?: ApiTool[] }
  const tools: Record<string, ToolDefinition> = {}
  for (const t of listing.tools) {
    tools[t.name] = tool({
      description: t.description || t.title || `${t.server}.${t.tool} (through mcpx)`,
      args: shapeOf(t.inputSchema),
      execute: (args, ctx) => stream(api, "/v1/call", { tool: t.name, arguments: args ?? {} }, t.title || t.name, ctx),
    })
  }
  for (const t of listing.meta ?? []) {
    if (t.name !== "mcpx_exec" || t.route !== "/v1/exec") continue // a meta tool this plugin does not know
    tools[t.name] = tool({
      description: t.description ?? "",
      args: shapeOf(t.inputSchema),
      execute: (args, ctx) => {
        const a = args as { code?: string; timeoutSeconds?: number }
        const body = { code: a.code ?? "", timeoutMs: a.timeoutSeconds ? Math.ceil(a.timeoutSeconds * 1000) : undefined }
        return stream(api, t.route!, body, t.title || t.name, ctx)
      },
    })
  }
  return { tool: tools }
}

function settingsOf(options: Record<string, unknown> | undefined): Settings {
  const opt = (k: string) => (typeof options?.[k] === "string" ? (options[k] as string) : undefined)
  const env = process.env
  return {
    url: opt("url") ?? env.MCPX_URL,
    token: opt("token") ?? env.MCPX_TOKEN,
    socket: opt("socket") ?? env.MCPX_SOCKET,
    bin: opt("bin") ?? env.MCPX_BIN,
    config: opt("config") ?? env.MCPX_CONFIG,
  }
}

// stream runs one call (or script) at path, streaming its progress into
// ctx's metadata, and returns its result.
async function stream(api: Api, path: string, req: object, title: string, ctx: ToolContext): Promise<string> {
  if (ctx.abort.aborted) throw new Error("cancelled in opencode before mcpx was called")
  const body = JSON.stringify({ ...req, client: clientName })
  let final: CallEvent | undefined
  let callId: number | undefined
  let updates = 0
  try {
    const res = await api.open("POST", path, body, ctx.abort)
    if (res.statusCode !== 200) throw new Error(`mcpx: ${await errorText(res)}`)
    for await (const line of createInterface({ input: res, crlfDelay: Infinity })) {
      if (!line) continue
      const ev = JSON.parse(line) as CallEvent
      if (ev.type === "started") {
        callId = ev.callId
        ctx.metadata({ title, metadata: { mcpx: { callId, server: ev.server, tool: ev.tool } } })
      } else if (ev.type === "progress" && ev.progress) {
        updates++
        const p = ev.progress
        ctx.metadata({
          title: p.message ? `${title}: ${p.message}` : title,
          metadata: { mcpx: { callId, progress: p.progress, total: p.total, message: p.message, updates } },
        })
      } else if (ev.type === "result" || ev.type === "error") {
        final = ev
      }
    }
  } catch (err) {
    // The signal closed the stream (or stopped the request): the daemon
    // has cancelled the call.
    if (ctx.abort.aborted) throw new Error("cancelled in opencode")
    throw err
  }
  if (ctx.abort.aborted) throw new Error("cancelled in opencode")
  if (!final) throw new Error("mcpx: the call's stream ended without its result")
  if (final.type === "error") throw new Error(`mcpx: ${final.error?.message ?? "the call failed"} (${final.error?.kind})`)
  const text = resultText(final.result)
  if (final.isError) throw new Error(text || "the tool reported an error")
  return text
}

// resultText is a tool result as the model reads it: its text, else its
// structured content, else the whole result, as JSON.
function resultText(r: CallEvent["result"]): string {
  const texts = (r?.content ?? []).filter((c) => c.type === "text" && typeof c.text === "string").map((c) => c.text)
  if (texts.length) return texts.join("\n")
  if (r?.structuredContent !== undefined) return JSON.stringify(r.structuredContent)
  return JSON.stringify(r ?? {})
}

async function errorText(res: http.IncomingMessage): Promise<string> {
  let body = ""
  for await (const chunk of res) body += chunk
  try {
    return (JSON.parse(body) as { error: string }).error
  } catch {
    return `HTTP ${res.statusCode}: ${body.slice(0, 200)}`
  }
}

// shapeOf turns a tool's input JSON Schema into the zod shape opencode
// takes (and hands the model as JSON Schema again): types, descriptions,
// enums, defaults and required properties are kept; what zod cannot say
// simply becomes any value, which mcpx and the server still check.
function shapeOf(schema: JsonSchema | undefined): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {}
  const required = new Set(schema?.required ?? [])
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    const z = zodOf(prop)
    shape[name] = required.has(name) ? z : z.optional()
  }
  return shape
}

function zodOf(s: JsonSchema): z.ZodType {
  const z = tool.schema
  let out: z.ZodType
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((v) => typeof v === "string")) {
    out = z.enum(s.enum as [string, ...string[]])
  } else if (type === "string") {
    out = z.string()
  } else if (type === "integer") {
    out = z.number().int()
  } else if (type === "number") {
    out = z.number()
  } else if (type === "boolean") {
    out = z.boolean()
  } else if (type === "array") {
    out = z.array(s.items ? zodOf(s.items) : z.unknown())
  } else if (type === "object" && s.properties) {
    out = z.object(shapeOf(s)).passthrough()
  } else if (type === "object") {
    out = z.record(z.string(), z.unknown())
  } else {
    out = z.unknown()
  }
  if (s.description) out = out.describe(s.description)
  return out
}

// Api reaches the daemon's /v1.
type Api = {
  json(method: string, path: string, body?: string): Promise<unknown>
  open(method: string, path: string, body: string | undefined, signal?: AbortSignal): Promise<http.IncomingMessage>
}

async function connect(s: Settings): Promise<Api> {
  let target: { socket?: string; url?: URL; token?: string }
  if (s.url) {
    target = { url: new URL(s.url), token: s.token }
  } else if (s.socket) {
    target = { socket: s.socket }
  } else {
    target = { socket: await socketOf(s) }
  }
  const open: Api["open"] = (method, path, body, signal) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { "Content-Type": "application/json" }
      if (target.token) headers.Authorization = `Bearer ${target.token}`
      const opts: http.RequestOptions = { method, headers, signal }
      let req: http.ClientRequest
      if (target.socket) {
        // The socket admits only this Host, and no Origin or Referer.
        headers.Host = "local-mcpx.sock"
        req = http.request({ ...opts, socketPath: target.socket, path })
      } else {
        const u = new URL(path, target.url)
        req = (u.protocol === "https:" ? https : http).request(u, opts)
      }
      req.on("response", resolve)
      req.on("error", reject)
      req.end(body)
    })
  return {
    open,
    async json(method, path, body) {
      const res = await open(method, path, body)
      if (res.statusCode !== 200) throw new Error(`mcpx ${method} ${path}: ${await errorText(res)}`)
      let text = ""
      for await (const chunk of res) text += chunk
      return JSON.parse(text)
    },
  }
}

// socketOf asks the mcpx command for its daemon's socket, starting the
// daemon if none runs (mcpx tools does).
async function socketOf(s: Settings): Promise<string> {
  const bin = s.bin || "mcpx"
  const cfg = s.config ? ["--config", s.config] : []
  await run(bin, ["tools", "--json", ...cfg])
  const st = JSON.parse(await run(bin, ["status", "--json", ...cfg])) as { socket?: string }
  if (!st.socket) throw new Error("mcpx status --json named no socket")
  return st.socket
}

function run(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: 60_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(" ")}: ${err.message}: ${stderr.trim()}`))
      else resolve(stdout)
    })
  })
}
