package codemode

import "strconv"

// MaxProgressMessage bounds the message of a script's progress(), in
// characters (UTF-16 code units, as the script counts them): a longer one
// is cut there and ends saying so.
const MaxProgressMessage = 1024

// prelude builds the script's API on the sandbox's host bridge. tools is
// a proxy: tools.a.b(args) and tools["a-b"]["c-d"](args) call server a's
// tool b; awaiting it gives the tool's structuredContent, else its text,
// and a tool error throws. progress() cuts its message to
// MaxProgressMessage. The bridge itself is never a global.
var prelude = `function (host) {
	const call = host.call, notify = host.notify;
	const maxMessage = ` + strconv.Itoa(MaxProgressMessage) + `;
	const cut = (s) => s.length <= maxMessage ? s : s.slice(0, maxMessage) + " … [cut: " + s.length + " characters in all]";
	const server = (name) => new Proxy({}, {
		get(_, tool) {
			if (typeof tool !== "string" || tool === "then") return undefined;
			return (args) => call("tool", { server: name, tool: tool, args: args === undefined ? {} : args });
		},
	});
	const servers = new Map();
	Object.defineProperty(globalThis, "tools", { value: new Proxy({}, {
		get(_, name) {
			if (typeof name !== "string" || name === "then") return undefined;
			if (!servers.has(name)) servers.set(name, server(name));
			return servers.get(name);
		},
	}) });
	Object.defineProperty(globalThis, "mcpx", { value: Object.freeze({
		call: (name, args) => call("call", { name: name, args: args === undefined ? {} : args }),
		search: (query, limit) => call("search", { query: String(query === undefined ? "" : query), limit: limit || 0 }),
	}) });
	Object.defineProperty(globalThis, "progress", { value: (value, total, message) => {
		notify("progress", { progress: Number(value), total: total === undefined ? undefined : Number(total),
			message: message === undefined ? undefined : cut(String(message)) });
	} });
}`
