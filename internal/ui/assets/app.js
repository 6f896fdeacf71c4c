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

// progressBar shows a call's or job's progress p, noting when each value
// was first shown.
function progressBar(id, p, at) {
  if (!p) return el("span", { class: "muted" }, "no progress yet");
  if (shown.get(id) !== p.progress) {
    shown.set(id, p.progress);
    window.mcpxUpdates.push({ id, progress: p.progress, at });
  }
  const prog = p.total ? el("progress", { max: p.total, value: p.progress }) : el("progress", {});
  return el("span", {}, prog, el("span", { class: "msg" }, (p.total ? `${p.progress}/${p.total} ` : `${p.progress} `) + (p.message || "")));
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

  const cl = st.cluster;
  document.getElementById("cluster-section").hidden = !cl;
  if (cl) {
    const reps = cl.replicas || [];
    document.getElementById("cluster").textContent = `${reps.length} replica(s) share the store, ${reps.filter(r => r.live).length} live` +
      (cl.error ? `; reading the store failed: ${cl.error}` : "");
    document.querySelector("#replicas tbody").replaceChildren(...reps.map(r => el("tr", { "data-owner": r.owner, "data-live": r.live },
      el("td", {}, r.owner + (r.owner === cl.self ? " (this)" : "")), el("td", {}, r.address || "-"), el("td", {}, r.host),
      el("td", { class: "num" }, r.pid), el("td", { class: r.live ? "" : "err" }, ago(r.seen, now) + " ago" + (r.live ? "" : ", lapsed")),
      el("td", { class: "num" }, r.jobs))));
  }

  const signIns = st.signIns || [];
  document.getElementById("signin-section").hidden = signIns.length === 0;
  document.querySelector("#signins tbody").replaceChildren(...signIns.map(s => {
    const state = { signed_in: "signed in", not_signed_in: `not signed in (mcpx login ${s.server}, if it asks for one)`,
      old_url: `signed in to its old URL (mcpx login ${s.server})`, unreadable: `unreadable: ${s.error || ""}` }[s.state] || s.state;
    let token = "-";
    if (s.state === "signed_in" || s.state === "old_url") {
      if (!s.expiry) token = "no expiry given";
      else {
        const left = Date.parse(s.expiry) - now;
        token = left > 0 ? `expires in ${ago(new Date(now - left).toISOString(), now)}` :
          `expired ${ago(s.expiry, now)} ago` + (s.refreshable ? ", renewed on next use" : ", mcpx login again");
      }
    }
    return el("tr", { "data-signin": s.server, "data-state": s.state },
      el("td", {}, s.server), el("td", { class: "state-" + s.state }, state),
      el("td", {}, s.signedIn ? ago(s.signedIn, now) + " ago" : "-"), el("td", { "data-expiry": s.expiry || "" }, token));
  }));

  const calls = (st.calls || []).filter(c => c.method === "tools/call");
  const at = Date.now();
  document.querySelector("#calls tbody").replaceChildren(...calls.map(c => {
    const p = c.progress, bar = progressBar(c.id, p, at);
    const b = el("button", { class: "cancel", "data-id": c.id }, "cancel");
    b.onclick = () => act(`/ui/calls/${c.id}/cancel`, b);
    return el("tr", { "data-call-id": c.id, "data-progress": p ? p.progress : "" },
      el("td", { class: "num" }, "#" + c.id), el("td", {}, `${c.server}.${c.tool}`), el("td", {}, c.host),
      el("td", { class: "num" }, ago(c.started, now)), el("td", {}, bar), el("td", {}, b));
  }));
  document.getElementById("nocalls").hidden = calls.length > 0;

  const jobs = (st.jobs || []).slice().sort((a, b) => a.created < b.created ? -1 : 1);
  document.querySelector("#jobs tbody").replaceChildren(...jobs.map(j => {
    const b = el("button", { class: "cancel-job", "data-job": j.id }, "cancel");
    b.onclick = () => act(`/ui/jobs/${encodeURIComponent(j.id)}/cancel`, b);
    return el("tr", { "data-job": j.id, "data-progress": j.progress ? j.progress.progress : "" },
      el("td", {}, j.id), el("td", {}, j.server ? `${j.server}.${j.tool}` : j.tool), el("td", {}, j.principal),
      el("td", { class: "num" }, ago(j.created, now)), el("td", {}, progressBar(j.id, j.progress, at)), el("td", {}, b));
  }));
  document.getElementById("nojobs").hidden = jobs.length > 0;

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
