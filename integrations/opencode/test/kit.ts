// What the plugin's tests share: a tool context as opencode makes one,
// the plugin's tools as opencode loads them, and an installation of mcpx
// of a describe's own.

import { after, before } from "node:test"
import assert from "node:assert/strict"
import type { PluginInput, ToolContext, ToolDefinition } from "@opencode-ai/plugin"
import { McpxPlugin } from "../src/index.js"
import { Mcpx } from "./mcpx.js"

export type Tools = { [k: string]: ToolDefinition }

// Result is what the plugin's execute returns.
export type Result = { title: string; output: string; metadata: { mcpx?: { [k: string]: any } } }

// context is a tool context with abort and metadata as given.
export function context(abort: AbortSignal, metadata: ToolContext["metadata"] = () => {}): ToolContext {
  return { sessionID: "ses_t", messageID: "msg_t", agent: "build", directory: process.cwd(), worktree: process.cwd(), abort, metadata, ask: async () => {} }
}

// loadTools calls the plugin as opencode does, with options from
// opencode's config and input (opencode's plugin input) as given.
export async function loadTools(options?: { [k: string]: unknown }, input: object = {}): Promise<Tools> {
  const hooks = await McpxPlugin(input as PluginInput, options)
  assert.ok(hooks.tool, "the plugin returned no tools")
  return hooks.tool
}

// useMcpx gives the describe it is called in an installation of its own
// (settings as Mcpx takes them), in process.env from before its first
// test until after its last; with plugin options, the plugin's tools on
// it too. Its fields are set once the tests run.
export function useMcpx(settings?: object, plugin?: { [k: string]: unknown }): { mcpx: Mcpx; tools: Tools } {
  const s = {} as { mcpx: Mcpx; tools: Tools }
  let restore = () => {}
  before(async () => {
    s.mcpx = new Mcpx(settings)
    restore = s.mcpx.use()
    if (plugin) s.tools = await loadTools(plugin)
  })
  after(async () => {
    restore()
    await s.mcpx.close()
  })
  return s
}
