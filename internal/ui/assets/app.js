"use strict";
// The live view: one EventSource on /ui/events, each event a snapshot of
// the daemon (its status, as mcpx status reads it, and recent cancels and
// errors). Buttons post to the view's own actions.

// updates keeps, for tests and measurement, when each call's progress
// value was first shown: {id, progress, at (ms since the epoch)}.
window.mcpxUpdates = [];
const shown = new Map(); // call id -> last progress shown

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("data-")) e.setAttribute(k, v); else e[k] = v;
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}

function ago(iso, now) {
  if (!iso) return "-";
  const s = Math.max(0, (now - Date.parse(iso)) / 1000);
  if (s < 60) return s.toFixed(1) + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + String(Math.floor(s % 60)).padStart(2, "0") + "s";
  return Math.floor(s / 3600) + "h" + String(Math.floor(s % 3600 / 60)).padStart(2, "0") + "m";
}

async function act(path, button) {
  button.disabled = true;
  try {
    const r = await fetch(path, { method: "POST" });
    if (!r.ok) alert((await r.text()).trim());
  } finally {
    button.disabled = false;
  }
}

function render(snap) {
  const st = snap.status, now = Date.parse(snap.at);
  document.getElementById("daemon").textContent = `pid ${st.pid} · ${st.version} · up ${ago(st.started, now)}`;
  document.getElementById("hosts").textContent =
    `${st.hosts} host stream(s) connected · ${st.httpSessions} HTTP session(s)` + (st.http ? ` · MCP over HTTP at ${st.http}` : "");

  document.querySelector("#hostlist tbody").replaceChildren(...(st.connected || []).map(h => {
    const p = h.profile || {};
    const timer = !p.timeoutMs ? "none" :
      `${p.timeoutMs / 1000}s${p.resetOnProgress ? ", reset by progress" : ""}`;
    return el("tr", { "data-host": h.id },
      el("td", {}, h.id), el("td", {}, h.client || "(not initialized)"), el("td", {}, h.protocol || "-"),
      el("td", {}, h.id.startsWith("http-") ? "http" : "stream"),
      el("td", {}, `${p.name || "-"}: ${timer} (${p.source || "-"})`));
  }));

  const servers = document.querySelector("#servers tbody");
  servers.replaceChildren(...(st.upstreams || []).map(u => {
    const b = el("button", { class: "restart", "data-server": u.name }, "restart");
    b.onclick = () => act(`/ui/servers/${encodeURIComponent(u.name)}/restart`, b);
    return el("tr", { "data-server": u.name },
      el("td", {}, u.name), el("td", { class: "state-" + u.state }, u.state), el("td", { class: "num" }, u.pid || "-"),
      el("td", {}, u.protocol || "-"), el("td", { class: "num" }, u.starts), el("td", { class: "num" }, u.inFlight),
      el("td", { class: "num" }, u.queued || 0), el("td", { class: "err" }, u.lastError || ""), el("td", {}, b));
  }));

  const calls = (st.calls || []).filter(c => c.method === "tools/call");
  const at = Date.now();
  document.querySelector("#calls tbody").replaceChildren(...calls.map(c => {
    const p = c.progress;
    let bar = el("span", { class: "muted" }, "no progress yet");
    if (p) {
      if (shown.get(c.id) !== p.progress) {
        shown.set(c.id, p.progress);
        window.mcpxUpdates.push({ id: c.id, progress: p.progress, at });
      }
      const prog = p.total ? el("progress", { max: p.total, value: p.progress }) : el("progress", {});
      bar = el("span", {}, prog, el("span", { class: "msg" }, (p.total ? `${p.progress}/${p.total} ` : `${p.progress} `) + (p.message || "")));
    }
    const b = el("button", { class: "cancel", "data-id": c.id }, "cancel");
    b.onclick = () => act(`/ui/calls/${c.id}/cancel`, b);
    return el("tr", { "data-call-id": c.id, "data-progress": p ? p.progress : "" },
      el("td", { class: "num" }, "#" + c.id), el("td", {}, `${c.server}.${c.tool}`), el("td", {}, c.host),
      el("td", { class: "num" }, ago(c.started, now)), el("td", {}, bar), el("td", {}, b));
  }));
  document.getElementById("nocalls").hidden = calls.length > 0;

  document.querySelector("#recent tbody").replaceChildren(...(snap.recent || []).slice().reverse().map(e =>
    el("tr", { "data-kind": e.kind },
      el("td", {}, new Date(e.at).toLocaleTimeString()), el("td", {}, e.kind + (e.reason ? ` (${e.reason})` : "")),
      el("td", {}, (e.callId ? `#${e.callId} ` : "") + e.server + (e.tool ? "." + e.tool : "")), el("td", {}, e.cause))));
}

function connect() {
  const conn = document.getElementById("conn");
  const es = new EventSource("/ui/events");
  es.onopen = () => { conn.textContent = "live"; conn.classList.add("live"); };
  es.onmessage = ev => render(JSON.parse(ev.data));
  es.onerror = () => { conn.textContent = "reconnecting"; conn.classList.remove("live"); };
}

connect();
