// A private mcpx installation for the plugin's tests: the mcpx binary
// (MCPX_BIN, or built from this repository), XDG directories of its own,
// a config with the demo upstream recording what it sees, and the
// environment the plugin reads to find the daemon.

import { execFile, execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

export type Record = { event: string; at: string; id?: unknown; requestId?: unknown; reason?: string; tool?: string; known?: boolean }

export class Mcpx {
  readonly dir: string
  readonly bin: string
  readonly config: string
  readonly record: string
  readonly env: NodeJS.ProcessEnv

  constructor(settings?: object) {
    // Unix socket paths are short: a short temp dir.
    this.dir = mkdtempSync(join(tmpdir(), "mxo"))
    this.bin = process.env.MCPX_BIN || buildMcpx(this.dir)
    this.record = join(this.dir, "record-demo.jsonl")
    this.env = { ...process.env, GORACE: "atexit_sleep_ms=0" }
    for (const [k, sub] of Object.entries({ XDG_CONFIG_HOME: "c", XDG_STATE_HOME: "s", XDG_RUNTIME_DIR: "r", HOME: "h" })) {
      const p = join(this.dir, sub)
      mkdirSync(p, { recursive: true, mode: 0o700 })
      this.env[k] = p
    }
    this.config = join(this.dir, "config.json")
    const doc: { mcpServers: object; mcpx?: object } = {
      mcpServers: { demo: { command: this.bin, args: ["demo", "-record", this.record] } },
    }
    if (settings) doc.mcpx = settings
    writeFileSync(this.config, JSON.stringify(doc), { mode: 0o600 })
    this.env.MCPX_BIN = this.bin
    this.env.MCPX_CONFIG = this.config
  }

  // use puts this installation's environment in process.env, where the
  // plugin reads it, until restore.
  use(): () => void {
    const saved = { ...process.env }
    Object.assign(process.env, this.env)
    return () => {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
      Object.assign(process.env, saved)
    }
  }

  run(...args: string[]): Promise<string> {
    return new Promise((res, rej) =>
      execFile(this.bin, [...args, "--config", this.config], { env: this.env, timeout: 60_000 }, (err, out, errOut) =>
        err ? rej(new Error(`mcpx ${args.join(" ")}: ${err.message} ${errOut}`)) : res(out),
      ),
    )
  }

  records(): Record[] {
    if (!existsSync(this.record)) return []
    // The demo appends while this reads: a line without its newline is
    // still being written, so only complete lines count.
    const lines = readFileSync(this.record, "utf8").split("\n")
    lines.pop()
    return lines
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Record)
  }

  // waitRecord polls the demo's record until find finds an event in it.
  async waitRecord(what: string, find: (rs: Record[]) => Record | undefined, timeoutMs = 30_000): Promise<Record> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const r = find(this.records())
      if (r) return r
      if (Date.now() > deadline) throw new Error(`no ${what} in the demo's record:\n${readFileSync(this.record, "utf8")}`)
      await new Promise((res) => setTimeout(res, 5))
    }
  }

  async close() {
    await this.run("stop").catch(() => {})
    rmSync(this.dir, { recursive: true, force: true })
  }
}

function buildMcpx(dir: string): string {
  const root = resolve(import.meta.dirname, "../../../..")
  const out = join(dir, "mcpx")
  execFileSync("go", ["build", "-o", out, "./cmd/mcpx"], { cwd: root, stdio: "inherit" })
  return out
}
