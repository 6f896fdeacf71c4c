"use strict";
// The live view: one stream of server-sent events on /ui/events, each
// event a snapshot of the daemon (its status, as mcpx status reads it, and
// recent cancels and errors). Buttons post to the view's own actions.
//
// No cookie: the link's token comes in the URL's fragment; the page trades
// it once for a session key, kept in sessionStorage (this origin's alone,
// port included) and sent in a header on every request. The stream is
// read with fetch, which can send the header (EventSource cannot).

const SESSION = "mcpx-ui-session";

// session returns the tab's session key: the one kept, or one traded for
// the link's token, which is then taken off the URL.
async function session() {
  const m = /^#t=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (m) {
    history.replaceState(null, "", location.pathname + location.search);
    const r = await fetch("/ui/session", { method: "POST", headers: { "Mcpx-Ui-Link": m[1] } });
    if (!r.ok) throw new Error((await r.text()).trim());
    sessionStorage.setItem(SESSION, (await r.json()).session);
  }
  const key = sessionStorage.getItem(SESSION);
  if (!key) throw new Error("open the live view with the link `mcpx ui` prints");
  return key;
}

// Refused is a request the view refused: the session is gone (the daemon
// restarted, or newer sessions pushed it out).
class Refused extends Error {}

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

let key = "";

async function act(path, button) {
  button.disabled = true;
  try {
    const r = await fetch(path, { method: "POST", headers: { "Mcpx-Ui-Session": key } });
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

// button makes an action button that posts to path.
function button(cls, attrs, path, label) {
  const b = el("button", { class: cls, ...attrs }, label || cls);
  b.onclick = () => act(path, b);
  return b;
}

// keyed keeps a table's rows across snapshots, one per key, and has draw
// update each in place: a row's button stays the same element while
// progress redraws the row, so a click whose press and release straddle
// a redraw is not lost on a replaced button.
function keyed(tbody, items, key, draw) {
  const old = new Map([...tbody.rows].map(tr => [tr.dataset.key, tr]));
  const rows = items.map(it => {
    const k = String(key(it));
    const tr = old.get(k) || el("tr", { "data-key": k });
    draw(tr, it);
    return tr;
  });
  if (rows.length !== tbody.rows.length || rows.some((tr, i) => tbody.rows[i] !== tr)) tbody.replaceChildren(...rows);
}

// cells sets a row's cells, each [attrs, content]; a cell whose content
// is unchanged is left alone.
function cells(tr, ...specs) {
  specs.forEach(([attrs, kid], i) => {
    const td = tr.cells[i] || tr.insertCell();
    if (td.className !== (attrs.class || "")) td.className = attrs.class || "";
    if (kid instanceof Node) {
      if (td.childNodes.length !== 1 || td.firstChild !== kid) td.replaceChildren(kid);
    } else if (td.childNodes.length !== 1 || td.firstChild.nodeType !== Node.TEXT_NODE || td.textContent !== String(kid)) {
      td.replaceChildren(String(kid));
    }
  });
  while (tr.cells.length > specs.length) tr.deleteCell(-1);
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

  keyed(document.querySelector("#servers tbody"), st.upstreams || [], u => u.name, (tr, u) => {
    tr.dataset.server = u.name;
    tr.button ||= button("restart", { "data-server": u.name }, `/ui/servers/${encodeURIComponent(u.name)}/restart`);
    cells(tr, [{}, u.name], [{ class: "state-" + u.state }, u.state], [{ class: "num" }, u.pid || "-"],
      [{}, u.protocol || "-"], [{ class: "num" }, u.starts], [{ class: "num" }, u.inFlight],
      [{ class: "num" }, u.queued || 0], [{ class: "err" }, u.lastError || ""], [{}, tr.button]);
  });

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
      old_url: `signed in to its old URL (mcpx login ${s.server})`, unreadable: `unreadable: ${s.error || ""}`,
      revoked: `revoked: the refresh token was refused (mcpx login ${s.server})` }[s.state] || s.state;
    let token = "-";
    if (s.state === "signed_in" || s.state === "old_url") {
      if (!s.expiry) token = "no expiry given";
      else {
        const left = Date.parse(s.expiry) - now;
        token = left > 0 ? `expires in ${ago(new Date(now - left).toISOString(), now)}` :
          `expired ${ago(s.expiry, now)} ago` + (s.refreshable ? ", renewed on next use" : ", mcpx login again");
      }
      const f = s.refreshFailing;
      if (f) {
        const wait = Date.parse(f.next) - now;
        token += `; refreshing it failed ${f.failures} times (${f.error}), next try ` +
          (wait > 0 ? `in ${ago(new Date(now - wait).toISOString(), now)}` : "now");
      }
    }
    return el("tr", { "data-signin": s.server, "data-state": s.state },
      el("td", {}, s.server), el("td", { class: "state-" + s.state }, state),
      el("td", {}, s.signedIn ? ago(s.signedIn, now) + " ago" : "-"), el("td", { "data-expiry": s.expiry || "" }, token));
  }));

  const calls = (st.calls || []).filter(c => c.method === "tools/call");
  const at = Date.now();
  keyed(document.querySelector("#calls tbody"), calls, c => c.id, (tr, c) => {
    const p = c.progress;
    tr.dataset.callId = c.id;
    tr.dataset.progress = p ? p.progress : "";
    tr.button ||= button("cancel", { "data-id": c.id }, `/ui/calls/${c.id}/cancel`);
    cells(tr, [{ class: "num" }, "#" + c.id], [{}, `${c.server}.${c.tool}`], [{}, c.host],
      [{ class: "num" }, ago(c.started, now)], [{}, progressBar(c.id, p, at)], [{}, tr.button]);
  });
  document.getElementById("nocalls").hidden = calls.length > 0;

  const jobs = (st.jobs || []).slice().sort((a, b) => a.created < b.created ? -1 : 1);
  keyed(document.querySelector("#jobs tbody"), jobs, j => j.id, (tr, j) => {
    tr.dataset.job = j.id;
    tr.dataset.progress = j.progress ? j.progress.progress : "";
    tr.button ||= button("cancel-job", { "data-job": j.id }, `/ui/jobs/${encodeURIComponent(j.id)}/cancel`, "cancel");
    cells(tr, [{}, j.id], [{}, j.server ? `${j.server}.${j.tool}` : j.tool], [{}, j.principal],
      [{ class: "num" }, ago(j.created, now)], [{}, progressBar(j.id, j.progress, at)], [{}, tr.button]);
  });
  document.getElementById("nojobs").hidden = jobs.length > 0;

  document.querySelector("#recent tbody").replaceChildren(...(snap.recent || []).slice().reverse().map(e =>
    el("tr", { "data-kind": e.kind },
      el("td", {}, new Date(e.at).toLocaleTimeString()), el("td", {}, e.kind + (e.reason ? ` (${e.reason})` : "")),
      el("td", {}, (e.callId ? `#${e.callId} ` : "") + e.server + (e.tool ? "." + e.tool : "")), el("td", {}, e.cause))));
}

// stream reads the event stream until it ends, rendering each snapshot.
async function stream(conn) {
  const r = await fetch("/ui/events", { headers: { "Mcpx-Ui-Session": key }, cache: "no-store" });
  if (r.status === 403) throw new Refused((await r.text()).trim());
  if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
  conn.textContent = "live"; conn.classList.add("live");
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const data = buf.slice(0, end).split("\n").filter(l => l.startsWith("data:")).map(l => l.slice(l[5] === " " ? 6 : 5)).join("\n");
      buf = buf.slice(end + 2);
      if (data) render(JSON.parse(data));
    }
  }
}

async function connect() {
  const conn = document.getElementById("conn");
  const stop = msg => { conn.textContent = "closed"; conn.classList.remove("live"); document.getElementById("daemon").textContent = msg; };
  try {
    key = await session();
  } catch (e) {
    stop(e.message);
    return;
  }
  for (;;) {
    try {
      await stream(conn);
    } catch (e) {
      if (e instanceof Refused) {
        sessionStorage.removeItem(SESSION);
        stop(`${e.message}`);
        return;
      }
    }
    conn.textContent = "reconnecting"; conn.classList.remove("live");
    await new Promise(res => setTimeout(res, 1000));
  }
}

connect();
