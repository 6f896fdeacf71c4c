// mcpx's tools as opencode tools, through mcpx's stable local API (/v1).
//
// Each tool's description and argument schema come from GET /v1/tools.
// A call is POST /v1/call, whose NDJSON stream carries the call's progress
// (shown live through the tool context's metadata) and then its result.
// opencode's abort signal closes the stream: the daemon then cancels the
// call upstream with the reason "the client disconnected (opencode)".
//
// opencode sets no timer on a plugin's tool, but a call that says nothing
// for long holds the session as an MCP call would not: one silent for
// jobAfterSeconds (55 by default: opencode's 60 s MCP timer, reset on
// progress, less mcpx's margin; 0 never) becomes a job, as mcpx makes one
// of a call past a host's timer, and the model gets its id. mcpx_job
// waits for a job and returns its result; mcpx_job_cancel cancels it.
//
// Where the daemon is: MCPX_URL (its HTTP listener, with MCPX_TOKEN) or
// MCPX_SOCKET (its unix socket), else the plugin asks the mcpx command
// (MCPX_BIN, default "mcpx" on PATH; MCPX_CONFIG for --config), which
// starts the daemon if none runs. The same settings may be given as the
// plugin's options: url, token, socket, bin, config (and jobAfterSeconds,
// or MCPX_JOB_AFTER_SECONDS).
//
// opencode calls every export of a plugin module: this one exports only
// the plugin.

import { tool, type Plugin, type PluginInput, type ToolContext, type ToolDefinition } from "@opencode-ai/plugin"
import { execFile } from "node:child_process"
import * as http from "node:http"
import * as https from "node:https"
import { createInterface } from "node:readline"
import type { z } from "zod"

type Settings = { url?: string; token?: string; socket?: string; bin?: string; config?: string; jobAfterSeconds: number }

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
  job?: Job
}

type Job = {
  id: string
  tool: string
  status: string
  progress?: Progress
  result?: CallEvent["result"]
  error?: string
  note?: string
  created: string
}

type JobEvent = { type: string; progress?: Progress; job?: Job }

type Meta = { title?: string; metadata?: { [key: string]: any } }

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

export const McpxPlugin: Plugin = async (input, options) => {
  const settings = settingsOf(options)
  const api = await connect(settings)
  const client = heyClient(input)
  const listing = (await api.json("GET", "/v1/tools")) as { tools: ApiTool[]; meta?: ApiTool[] }
  const jobAfter =
    settings.jobAfterSeconds > 0 ? { jobAfterMs: Math.round(settings.jobAfterSeconds * 1000), jobResetOnProgress: true } : {}
  const tools: Record<string, ToolDefinition> = {}
  for (const t of listing.tools) {
    tools[t.name] = tool({
      description: t.description || t.title || `${t.server}.${t.tool} (through mcpx)`,
      args: shapeOf(t.inputSchema),
      execute: (args, ctx) =>
        stream(api, "/v1/call", { tool: t.name, arguments: args ?? {}, ...jobAfter }, t.title || t.name, new Live(ctx, client)),
    })
  }
  for (const t of listing.meta ?? []) {
    const def = { description: t.description ?? "", args: shapeOf(t.inputSchema) }
    const title = t.title || t.name
    if (t.name === "mcpx_exec" && t.route === "/v1/exec") {
      tools[t.name] = tool({
        ...def,
        execute: (args, ctx) => {
          const a = args as { code?: string; timeoutSeconds?: number }
          const body = { code: a.code ?? "", timeoutMs: a.timeoutSeconds ? Math.ceil(a.timeoutSeconds * 1000) : undefined }
          return stream(api, t.route!, body, title, new Live(ctx, client))
        },
      })
    } else if (t.name === "mcpx_job" && t.route === "/v1/jobs/{id}/wait") {
      tools[t.name] = tool({
        ...def,
        execute: (args, ctx) => waitJob(api, args as JobArgs, title, new Live(ctx, client)),
      })
    } else if (t.name === "mcpx_job_cancel" && t.route === "/v1/jobs/{id}/cancel") {
      tools[t.name] = tool({
        ...def,
        execute: async (args) => {
          const j = await cancelJob(api, jobID(args as JobArgs))
          return `job ${j.id}: ${j.status}${j.error ? ` (${j.error})` : ""}`
        },
      })
    }
    // Any other meta tool is one this plugin does not know.
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
    jobAfterSeconds: seconds(options?.jobAfterSeconds ?? env.MCPX_JOB_AFTER_SECONDS, 55),
  }
}

// seconds reads a number of seconds (a number or its text), else def.
function seconds(v: unknown, def: number): number {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN
  return Number.isFinite(n) && n >= 0 ? n : def
}

// stream runs one call (or script) at path, streaming its progress into
// opencode's display of the tool, and returns its result, or the job it
// became.
async function stream(api: Api, path: string, req: object, title: string, live: Live): Promise<ToolResult> {
  const ctx = live.ctx
  if (ctx.abort.aborted) throw new Error("cancelled in opencode before mcpx was called")
  const body = JSON.stringify({ ...req, client: clientName })
  let final: CallEvent | undefined
  let mcpx: { [k: string]: unknown } = {}
  let updates = 0
  try {
    const res = await api.open("POST", path, body, ctx.abort)
    if (res.statusCode !== 200) throw new Error(`mcpx: ${await errorText(res)}`)
    for await (const line of createInterface({ input: res, crlfDelay: Infinity })) {
      if (!line) continue
      const ev = JSON.parse(line) as CallEvent
      if (ev.type === "started") {
        mcpx = { callId: ev.callId, server: ev.server, tool: ev.tool }
        live.show({ title, metadata: { mcpx } })
      } else if (ev.type === "progress" && ev.progress) {
        updates++
        mcpx = { callId: mcpx.callId, ...progressMeta(ev.progress), updates }
        live.show({ title: titled(title, ev.progress), metadata: { mcpx } })
      } else if (ev.type === "result" || ev.type === "error" || ev.type === "job") {
        final = ev
      }
    }
  } catch (err) {
    await live.done()
    // The signal closed the stream (or stopped the request): the daemon
    // has cancelled the call.
    if (ctx.abort.aborted) throw new Error("cancelled in opencode")
    throw err
  }
  await live.done()
  if (ctx.abort.aborted && final?.type !== "job") throw new Error("cancelled in opencode")
  if (!final) throw new Error("mcpx: the call's stream ended without its result")
  if (final.type === "error") throw new Error(`mcpx: ${final.error?.message ?? "the call failed"} (${final.error?.kind})`)
  if (final.type === "job" && final.job) {
    const j = final.job
    return { title, output: jobRunning(j, title), metadata: { mcpx: { ...mcpx, job: j.id } } }
  }
  const text = resultText(final.result)
  if (final.isError) throw new Error(text || "the tool reported an error")
  return { title, output: text, metadata: { mcpx } }
}

type ToolResult = { title: string; output: string; metadata: { [k: string]: unknown } }

function progressMeta(p: Progress) {
  return { progress: p.progress, total: p.total, message: p.message }
}

function titled(title: string, p?: Progress): string {
  return p?.message ? `${title}: ${p.message}` : title
}

// jobRunning is what the model reads of a call that goes on as job j.
function jobRunning(j: Job, title: string): string {
  const secs = Math.max(0, Math.round((Date.now() - Date.parse(j.created)) / 1000))
  const last = j.progress ? ` Last progress: ${j.progress.message || `${j.progress.progress}${j.progress.total ? ` of ${j.progress.total}` : ""}`}.` : ""
  return (
    `The tool ${title} is still working (${secs}s so far), so mcpx keeps it running as job ${j.id}; its result will be kept for you.${last} ` +
    `Call mcpx_job with {"job_id": ${JSON.stringify(j.id)}} to wait for it and get its result. ` +
    `Do not call the tool again for this. mcpx_job_cancel stops it.`
  )
}

type JobArgs = { job_id?: string; wait_seconds?: number }

function jobID(a: JobArgs): string {
  const id = typeof a?.job_id === "string" ? a.job_id.trim() : ""
  if (!id) throw new Error("mcpx_job needs the job_id a tool call returned")
  return id
}

// waitJob waits up to wait_seconds (30 by default) for a job, its
// progress shown live, and returns its result once it has one. opencode's
// abort cancels the job, naming opencode.
async function waitJob(api: Api, a: JobArgs, title: string, live: Live): Promise<ToolResult> {
  const id = jobID(a)
  const ctx = live.ctx
  const waitMs = Math.min(seconds(a.wait_seconds, 30), 3600) * 1000
  const stop = new AbortController()
  const timer = setTimeout(() => stop.abort(), waitMs)
  const onAbort = () => stop.abort()
  ctx.abort.addEventListener("abort", onAbort)
  let end: Job | undefined
  let last: Progress | undefined
  try {
    const res = await api.open("GET", `/v1/jobs/${encodeURIComponent(id)}/wait`, undefined, stop.signal)
    if (res.statusCode !== 200) throw new Error(`mcpx_job: ${await errorText(res)}`)
    for await (const line of createInterface({ input: res, crlfDelay: Infinity })) {
      if (!line) continue
      const ev = JSON.parse(line) as JobEvent
      if (ev.type === "progress" && ev.progress) {
        last = ev.progress
        live.show({ title: titled(title, last), metadata: { mcpx: { job: id, ...progressMeta(last) } } })
      } else if (ev.type === "end") {
        end = ev.job
      }
    }
  } catch (err) {
    if (!stop.signal.aborted) throw err
  } finally {
    clearTimeout(timer)
    ctx.abort.removeEventListener("abort", onAbort)
    await live.done()
  }
  if (!end && ctx.abort.aborted) {
    const j = await cancelJob(api, id)
    throw new Error(`cancelled in opencode: job ${id} is ${j.status}`)
  }
  if (!end) {
    const at = last ? ` Last progress: ${last.message || last.progress}.` : ""
    return {
      title,
      output: `Job ${id} is still running.${at} Call mcpx_job with {"job_id": ${JSON.stringify(id)}} again to keep waiting; mcpx_job_cancel stops it.`,
      metadata: { mcpx: { job: id, status: "running" } },
    }
  }
  if (end.status !== "completed") {
    throw new Error(`job ${id} ${end.status}${end.error ? `: ${end.error}` : ""}${end.note ? ` (${end.note})` : ""}`)
  }
  const text = resultText(end.result)
  if (end.result?.isError) throw new Error(text || "the tool reported an error")
  return { title, output: text, metadata: { mcpx: { job: id, status: end.status } } }
}

async function cancelJob(api: Api, id: string): Promise<Job> {
  return (await api.json("POST", `/v1/jobs/${encodeURIComponent(id)}/cancel`, JSON.stringify({ client: clientName }))) as Job
}

// Live shows a tool's progress in opencode while it runs, through the
// tool context's metadata as opencode's own tools do. opencode 1.18 hands
// a plugin's tool a metadata function that returns an Effect it never
// runs, so nothing shows (its issue 50313); when metadata returns
// anything, Live writes the update to the tool's part through opencode's
// own API instead (PATCH .../part/{partID}, what opencode publishes as
// message.part.updated): one write at a time, the newest waiting one
// next. done() waits for the last, so that none lands after opencode has
// completed the part; after an abort nothing more is written.
class Live {
  private next?: Meta
  private busy?: Promise<void>
  private part?: { id: string; state: { status: string; [k: string]: unknown }; [k: string]: unknown }
  private off = false

  constructor(
    readonly ctx: ToolContext,
    private readonly client?: HeyClient,
  ) {}

  show(m: Meta) {
    const r = (this.ctx.metadata as (m: Meta) => unknown)(m)
    if (r === undefined || typeof (r as { then?: unknown })?.then === "function" || !this.client || this.off) return
    // Aborted, opencode ends the part itself: a write now could undo it.
    if (this.ctx.abort.aborted) return
    this.next = m
    this.busy ??= this.drain()
  }

  async done() {
    while (this.busy) await this.busy
  }

  private async drain() {
    while (this.next && !this.off && !this.ctx.abort.aborted) {
      const m = this.next
      this.next = undefined
      await this.write(m).catch(() => {
        this.off = true // an opencode without this route: the display stays as it is
      })
    }
    this.busy = undefined
  }

  private async write(m: Meta) {
    const c = this.client!
    const callID = (this.ctx as { callID?: string }).callID
    const msg = `/session/${encodeURIComponent(this.ctx.sessionID)}/message/${encodeURIComponent(this.ctx.messageID)}`
    if (!this.part) {
      const r = await c.get({ url: msg })
      const parts = (r.data as { parts?: Live["part"][] } | undefined)?.parts ?? []
      this.part = parts.find((p) => p?.type === "tool" && p.callID === callID)
      if (!callID || !this.part) throw new Error("no such tool part")
    }
    if (this.part.state.status !== "running") return
    const part = { ...this.part, state: { ...this.part.state, title: m.title, metadata: m.metadata } }
    const r = await c.patch({ url: `${msg}/part/${encodeURIComponent(part.id)}`, body: part, headers: { "Content-Type": "application/json" } })
    if (r.error) throw new Error(`opencode: ${JSON.stringify(r.error)}`)
  }
}

// HeyClient is the request client under opencode's SDK client, which
// plugins are given: requests through it reach opencode's own server,
// in-process or not.
type HeyClient = {
  get(o: { url: string }): Promise<{ data?: unknown; error?: unknown }>
  patch(o: { url: string; body: unknown; headers?: Record<string, string> }): Promise<{ data?: unknown; error?: unknown }>
}

function heyClient(input: PluginInput): HeyClient | undefined {
  const c = (input?.client as unknown as { _client?: HeyClient } | undefined)?._client
  return typeof c?.get === "function" && typeof c?.patch === "function" ? c : undefined
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
