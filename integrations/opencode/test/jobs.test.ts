// Long calls and live display: a call silent past the plugin's
// jobAfterSeconds becomes a job the model waits on with mcpx_job; an
// opencode that drops a plugin's metadata (1.18: an Effect it never runs)
// still shows progress, through its own part API.

import { describe, test } from "node:test"
import assert from "node:assert/strict"
import type { ToolContext } from "@opencode-ai/plugin"
import { Mcpx } from "./mcpx.js"
import { context, loadTools, useMcpx, type Result } from "./kit.js"

const requests = (m: Mcpx, tool: string) => m.records().filter((r) => r.event === "request" && r.tool === tool).length

describe("a long call through the plugin", () => {
  const s = useMcpx(undefined, { jobAfterSeconds: 0.5 })

  test("mcpx_job and mcpx_job_cancel carry mcpx's descriptions", () => {
    assert.match(s.tools["mcpx_job"]?.description ?? "", /job/i)
    assert.match(s.tools["mcpx_job_cancel"]?.description ?? "", /cancel/i)
  })

  test("a call silent past jobAfterSeconds becomes a job; mcpx_job waits for it and returns its result", async () => {
    const runs = requests(s.mcpx, "wait")
    const first = (await s.tools["demo__wait"].execute({ seconds: 2 }, context(new AbortController().signal))) as Result
    const id = first.metadata.mcpx?.job as string
    assert.match(id ?? "", /^job_/, `no job in ${JSON.stringify(first)}`)
    assert.match(first.output, new RegExp(`mcpx_job with \\{"job_id": "${id}"\\}`))

    const early = (await s.tools["mcpx_job"].execute({ job_id: id, wait_seconds: 0 }, context(new AbortController().signal))) as Result
    assert.match(early.output, /still running/)
    const done = (await s.tools["mcpx_job"].execute({ job_id: id, wait_seconds: 60 }, context(new AbortController().signal))) as Result
    assert.equal(done.output, "waited 2 seconds")
    assert.equal(requests(s.mcpx, "wait"), runs + 1, "the upstream ran the call more than once")
  })

  test("opencode's abort while mcpx_job waits cancels the job, naming opencode", async () => {
    const first = (await s.tools["demo__wait"].execute({ seconds: 30 }, context(new AbortController().signal))) as Result
    const id = first.metadata.mcpx?.job as string
    assert.ok(id, `no job in ${JSON.stringify(first)}`)
    const before = s.mcpx.records().filter((r) => r.event === "cancelled").length
    const ctl = new AbortController()
    const waiting = s.tools["mcpx_job"].execute({ job_id: id, wait_seconds: 60 }, context(ctl.signal))
    setTimeout(() => ctl.abort(), 200)
    await assert.rejects(waiting, /cancelled in opencode: job .* is cancelled/)
    const ev = await s.mcpx.waitRecord("cancellation", (rs) => rs.filter((r) => r.event === "cancelled")[before])
    assert.equal(ev.reason, "job cancelled with opencode")
    assert.equal(ev.known, true)
  })

  test("mcpx_job_cancel cancels a job; a job id mcpx does not know is an error", async () => {
    const first = (await s.tools["demo__wait"].execute({ seconds: 30 }, context(new AbortController().signal))) as Result
    const id = first.metadata.mcpx?.job as string
    const out = await s.tools["mcpx_job_cancel"].execute({ job_id: id }, context(new AbortController().signal))
    assert.match(out as string, new RegExp(`job ${id}: cancelled`))
    await assert.rejects(s.tools["mcpx_job"].execute({ job_id: id }, context(new AbortController().signal)), /cancelled/)
    await assert.rejects(s.tools["mcpx_job"].execute({ job_id: "job_nosuch" }, context(new AbortController().signal)), /mcpx_job: .*job/)
    await assert.rejects(s.tools["mcpx_job"].execute({}, context(new AbortController().signal)), /needs the job_id/)
  })

  test("a call whose progress keeps coming stays a call to its result", async () => {
    const out = (await s.tools["demo__export"].execute({ seconds: 1.5, steps: 30 }, context(new AbortController().signal))) as Result
    assert.match(out.output, /exported/)
    assert.equal(out.metadata.mcpx?.job, undefined)
    assert.equal(out.metadata.mcpx?.progress, 30)
  })
})

describe("live progress in an opencode that drops a plugin's metadata", () => {
  useMcpx()

  test("each update goes to the tool's part through opencode's API, in order, the last before the tool returns", async () => {
    let returned = false
    const patched: { metadata: any; late: boolean }[] = []
    const part = { id: "prt_1", type: "tool", callID: "call_1", tool: "demo__export", state: { status: "running", input: {}, time: { start: 1 } } }
    const fake = {
      get: async (o: { url: string }) => {
        assert.equal(o.url, "/session/ses_t/message/msg_t")
        return { data: { info: {}, parts: [{ id: "prt_0", type: "text" }, part] } }
      },
      patch: async (o: { url: string; body: any }) => {
        assert.equal(o.url, "/session/ses_t/message/msg_t/part/prt_1")
        assert.equal(o.body.state.status, "running")
        assert.equal(o.body.callID, "call_1")
        await new Promise((r) => setTimeout(r, 30)) // a slow opencode: updates wait, the newest wins
        patched.push({ metadata: o.body.state.metadata, late: returned })
        return { data: o.body }
      },
    }
    const tools = await loadTools(undefined, { client: { _client: fake } })
    const effect = { _op: "an Effect opencode never runs" }
    const ctx = { ...context(new AbortController().signal, (() => effect) as unknown as ToolContext["metadata"]), callID: "call_1" }
    const out = (await tools["demo__export"].execute({ seconds: 0.5, steps: 10 }, ctx)) as Result
    returned = true
    assert.ok(patched.length >= 2, `only ${patched.length} updates reached the part`)
    assert.ok(!patched.some((p) => p.late), "an update landed after the tool returned")
    const progress = patched.map((p) => p.metadata.mcpx.progress).filter((p) => p !== undefined)
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i] > progress[i - 1], `updates out of order: ${progress}`)
    assert.equal(progress.at(-1), 10, "the last progress did not reach the part")
    assert.equal(out.metadata.mcpx?.progress, 10)
  })
})
