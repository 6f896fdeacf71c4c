// The plugin as opencode runs it: McpxPlugin called with opencode's plugin
// input, its tools' execute called with a tool context whose abort signal
// and metadata are real, against a real mcpx daemon and the demo upstream.

import { before, describe, test } from "node:test"
import assert from "node:assert/strict"
import type { ToolContext } from "@opencode-ai/plugin"
import { tool } from "@opencode-ai/plugin"
import { context, loadTools, useMcpx, type Result } from "./kit.js"

type Meta = { at: number; title?: string; metadata?: { [k: string]: any } }

// recorder is a tool context's metadata that keeps each update, timed, in
// seen, and hands it to onMeta.
function recorder(seen: Meta[], onMeta?: (m: Meta) => void): ToolContext["metadata"] {
  return (input) => {
    const m = { at: performance.timeOrigin + performance.now(), ...input }
    seen.push(m)
    onMeta?.(m)
  }
}

// recordTime is a record's RFC 3339 time with nanoseconds, in epoch ms.
function recordTime(at: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?Z$/.exec(at)
  assert.ok(m, `record time ${at}`)
  return Date.parse(m[1] + "Z") + (m[2] ? Number(m[2]) * 1000 : 0)
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

describe("the mcpx plugin on the daemon's socket", () => {
  const s = useMcpx(undefined, {})

  test("tools carry mcpx's descriptions and argument schemas", () => {
    const exp = s.tools["demo__export"]
    assert.ok(exp, `no demo__export among ${Object.keys(s.tools)}`)
    assert.match(exp.description, /export/i)
    const schema = tool.schema.toJSONSchema(tool.schema.object(exp.args)) as {
      properties: { [k: string]: { type: string; description?: string } }
      required?: string[]
    }
    assert.equal(schema.properties.seconds.type, "number")
    assert.equal(schema.properties.steps.type, "integer")
    assert.equal(schema.properties.seconds.description, "how long the export takes, in seconds")
    assert.deepEqual(schema.required ?? [], [], "the demo's export has no required argument")
    assert.equal(tool.schema.object(exp.args).safeParse({ seconds: "soon" }).success, false)
  })

  test("a call streams its progress into the tool's metadata, then returns the result", async () => {
    const seen: Meta[] = []
    const out = (await s.tools["demo__export"].execute({ seconds: 0.4, steps: 4 }, context(new AbortController().signal, recorder(seen)))) as Result
    assert.match(out.output, /exported \d+ records/)
    assert.equal(out.metadata.mcpx?.progress, 4, "the result's metadata has not the last progress")
    const progress = seen.filter((m) => m.metadata?.mcpx?.progress !== undefined)
    assert.ok(progress.length >= 1, `no progress reached the metadata: ${JSON.stringify(seen)}`)
    for (let i = 1; i < progress.length; i++) {
      assert.ok(progress[i].metadata!.mcpx.progress > progress[i - 1].metadata!.mcpx.progress, "progress out of order")
    }
    assert.ok(seen[0].metadata?.mcpx?.callId > 0, "the first metadata names the call")
  })

  test("a tool's error result fails the tool with its text", async () => {
    await assert.rejects(s.tools["demo__fail"].execute({}, context(new AbortController().signal)), /fail/i)
  })

  test("opencode's abort cancels the call upstream, saying it came from opencode", async () => {
    const n = 20
    const lat: number[] = []
    for (let i = 0; i < n; i++) {
      const before = s.mcpx.records().filter((r) => r.event === "cancelled").length
      const ctl = new AbortController()
      let abortedAt = 0
      const run = s.tools["demo__export"].execute(
        { seconds: 30, steps: 300 },
        context(
          ctl.signal,
          recorder([], (m) => {
            if (m.metadata?.mcpx?.progress !== undefined && !ctl.signal.aborted) {
              abortedAt = performance.timeOrigin + performance.now()
              ctl.abort()
            }
          }),
        ),
      )
      await assert.rejects(run, /cancelled in opencode/)
      const ev = await s.mcpx.waitRecord("cancellation", (rs) => rs.filter((r) => r.event === "cancelled")[before])
      assert.equal(ev.reason, "the client disconnected (opencode)")
      assert.equal(ev.known, true, "the cancellation matched no running request")
      lat.push(recordTime(ev.at) - abortedAt)
    }
    lat.sort((a, b) => a - b)
    console.log(`opencode abort -> upstream notifications/cancelled over ${n} calls: p50 ${quantile(lat, 0.5).toFixed(1)}ms, p99 ${quantile(lat, 0.99).toFixed(1)}ms`)
  })

  test("mcpx_exec runs a script with mcpx's description, its progress live, and an abort stops its calls", async () => {
    const exec = s.tools["mcpx_exec"]
    assert.ok(exec, `no mcpx_exec among ${Object.keys(s.tools)}`)
    assert.match(exec.description, /tools\.demo/)
    const seen: Meta[] = []
    const out = await exec.execute(
      { code: `progress(1, 2, "half"); const r = await tools.demo.echo({n: 7}); return r` },
      context(new AbortController().signal, recorder(seen)),
    )
    assert.match((out as Result).output, /"n":7/)
    assert.ok(seen.some((m) => m.metadata?.mcpx?.message === "half"), `the script's progress did not reach the metadata: ${JSON.stringify(seen)}`)

    const before = s.mcpx.records().filter((r) => r.event === "cancelled").length
    const ctl = new AbortController()
    const run = exec.execute({ code: `return await tools.demo.export({seconds: 30, steps: 300})` }, context(ctl.signal))
    const calls = s.mcpx.records().filter((r) => r.event === "request" && r.tool === "export").length
    await s.mcpx.waitRecord("the script's call", (rs) => rs.filter((r) => r.event === "request" && r.tool === "export")[calls])
    ctl.abort()
    await assert.rejects(run, /cancelled in opencode/)
    const ev = await s.mcpx.waitRecord("cancellation", (rs) => rs.filter((r) => r.event === "cancelled")[before])
    assert.match(ev.reason ?? "", /stopped: the client disconnected \(opencode\)$/)
  })

  test("an abort before the call starts sends nothing", async () => {
    const ctl = new AbortController()
    ctl.abort()
    const calls = s.mcpx.records().filter((r) => r.event === "request" && r.tool === "echo").length
    await assert.rejects(s.tools["demo__echo"].execute({}, context(ctl.signal)), /cancelled in opencode/)
    assert.equal(s.mcpx.records().filter((r) => r.event === "request" && r.tool === "echo").length, calls)
  })
})

describe("the mcpx plugin on the HTTP listener", () => {
  const s = useMcpx({ http: { listen: "127.0.0.1:0" } })
  before(() => s.mcpx.run("tools"))

  test("with the token it calls; without, it says why", async () => {
    const st = JSON.parse(await s.mcpx.run("status", "--json")) as { http: string; tokenFile: string }
    const url = st.http.replace(/\/mcp$/, "")
    const token = (await import("node:fs")).readFileSync(st.tokenFile, "utf8").trim()
    await assert.rejects(loadTools({ url }), /unauthorized/)
    const tools = await loadTools({ url, token })
    const out = await tools["demo__echo"].execute({ k: 1 }, context(new AbortController().signal))
    assert.equal((out as Result).output, '{"k":1}')
  })
})
