// steward console: the trees of a namespace, live. Plain JavaScript, no
// library: the model is a map of nodes by path; a render draws the rows
// that are visible (a collapsed subtree costs one row), and every change
// pushed by the server (/api/events) patches the model and redraws.
"use strict";

const nodes = new Map();   // path -> node {path, kind, state, ..., children: [paths], parent}
let roots = [];            // paths
const toggled = new Map(); // path -> true (expanded) | false (collapsed), the operator's choice
let config = { allowActions: false, actions: [] };
let selected = "";
let renderQueued = false;
let lost = false;
let logNext = "", logTimer = null, panelTimer = null, pendingAction = null;

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

// The read token (starter console --read-token-file): taken from the
// page's address (?token=), kept in this tab's sessionStorage, and dropped
// from the address bar. Reads send it as a Bearer header; the event stream,
// whose EventSource sends no header, as ?token=.
const readToken = (() => {
  const key = "steward-console-read-token";
  let token = "";
  try { token = sessionStorage.getItem(key) || ""; } catch (e) { /* no storage: this page only */ }
  const url = new URL(location.href);
  if (url.searchParams.has("token")) {
    token = url.searchParams.get("token").trim();
    try { sessionStorage.setItem(key, token); } catch (e) { /* no storage: this page only */ }
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  return token;
})();

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store", headers: readToken ? { Authorization: "Bearer " + readToken } : {} });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw Object.assign(new Error(body.error || r.statusText), { status: r.status });
  return body;
}

// ---- the model -------------------------------------------------------------

function load(trees) {
  nodes.clear();
  roots = [];
  const walk = (s, parent) => {
    const n = Object.assign({}, s, { parent, children: (s.children || []).map((c) => c.path) });
    nodes.set(s.path, n);
    (s.children || []).forEach((c) => walk(c, s.path));
  };
  for (const t of trees) { roots.push(t.path); walk(t, ""); }
}

async function reload() {
  try {
    const body = await getJSON("api/tree");
    load(body.trees || []);
    render();
  } catch (e) {
    $("tree").innerHTML = `<p class="s-failed">${esc(e.message)}</p>`;
  }
}

// reloadSoon reloads the tree once for any number of asks: one reload at
// a time, and one more after it if asked meanwhile. (A tree that appears
// sends an event per node; a reload each made the page fetch and draw
// the whole namespace hundreds of times, and stall.)
let reloading = null, reloadAgain = false;
function reloadSoon() {
  if (reloading) { reloadAgain = true; return; }
  reloading = reload().finally(() => {
    reloading = null;
    if (reloadAgain) { reloadAgain = false; reloadSoon(); }
  });
}

const isSupervisor = (n) => n.kind === "supervisor";
const settled = (n) => (n.state === n.desired || n.completed) && !n.applying;

// rollup counts the workers below a node by state.
function rollup(n, acc = {}) {
  if (!isSupervisor(n)) { acc[n.state] = (acc[n.state] || 0) + 1; return acc; }
  for (const c of n.children) { const cn = nodes.get(c); if (cn) rollup(cn, acc); }
  return acc;
}

const severity = { failed: 3, unknown: 3, backoff: 2, starting: 2, stopping: 2, running: 1, stopped: 0 };
function worstClass(counts) {
  let w = -1;
  for (const s of Object.keys(counts)) w = Math.max(w, severity[s] ?? 2);
  return w >= 3 ? "worst-bad" : w === 2 ? "worst-warn" : w === 1 ? "worst-ok" : "worst-idle";
}

// unhealthy: a node, or a worker below it, is not at its desired state.
function unhealthy(n) {
  if (!isSupervisor(n)) return !settled(n) || n.state === "failed";
  if (n.state === "failed") return true;
  return n.children.some((c) => { const cn = nodes.get(c); return cn && unhealthy(cn); });
}

// depth is a node's level below its root (0: a root). A row is indented by
// its class d0 ... d31 of app.css (a tree is at most 32 levels deep,
// spec.MaxDepth), never by a style attribute, which the page's
// Content-Security-Policy refuses.
function depth(path) { return Math.min(path.split("/").length - 1, 31); }

// expanded: roots always (their direct children are always listed); below
// them the operator's choice, else open when something is wrong inside.
function expanded(n) {
  if (!isSupervisor(n)) return false;
  if (!n.parent) return true;
  if (toggled.has(n.path)) return toggled.get(n.path);
  return unhealthy(n);
}

// ---- drawing ----------------------------------------------------------------

function ago(t) {
  if (!t) return "";
  const s = Math.max(0, Math.round((Date.now() - new Date(t).getTime()) / 1000));
  if (s < 60) return s + "s ago";
  if (s < 3600) return Math.floor(s / 60) + "m ago";
  if (s < 86400) return Math.floor(s / 3600) + "h ago";
  return Math.floor(s / 86400) + "d ago";
}

function row(n, query) {
  const sup = isSupervisor(n);
  const open = expanded(n) || (query && sup);
  const toggle = sup && n.parent ? `<span class="toggle" data-toggle="${esc(n.path)}">${open ? "▾" : "▸"}</span>` : `<span class="toggle"></span>`;
  let state = `<span class="state s-${esc(n.state)}">${esc(n.state)}</span>`;
  let extra = "";
  if (sup) {
    const counts = rollup(n);
    extra = `<span class="rollup">` + Object.keys(counts).sort((a, b) => (severity[b] ?? 2) - (severity[a] ?? 2))
      .map((s) => `<span class="s-${esc(s)}" data-count="${esc(s)}">${counts[s]} ${esc(s)}</span>`).join("") + `</span>`;
    state = `${state} <span class="muted">${esc(n.strategy || "")}</span>`;
    n._worst = worstClass(counts);
  }
  const la = n.lastAction && n.lastAction.name ? `${n.lastAction.name} ${n.lastAction.status}${n.lastAction.attempts > 1 ? " (" + n.lastAction.attempts + " attempts)" : ""}` : "";
  const restarts = `${n.restarts || 0}${n.manualRestarts ? " +" + n.manualRestarts + " manual" : ""}`;
  const stale = n.stale ? ` <span class="stale" title="${esc(n.stale)}">stale</span>` : "";
  const name = n.parent ? n.path.slice(n.parent.length + 1) : n.path;
  return `<tr class="node ${sup ? n._worst : ""}${n.path === selected ? " selected" : ""}" data-path="${esc(n.path)}" data-state="${esc(n.state)}">` +
    `<td class="d${depth(n.path)}">${toggle}<span class="name" title="${esc(n.path)}">${esc(name)}</span></td>` +
    `<td>${state}${stale}</td><td>${extra}</td><td>${esc(n.desired)}</td><td>${restarts}${sup && n.recentRestarts ? " (" + n.recentRestarts + " recent)" : ""}</td>` +
    `<td>${n.generation ?? ""}</td><td>${esc(la)}</td><td title="${esc(n.since || "")}">${ago(n.since)}</td><td class="reason">${esc(n.reason)}</td></tr>`;
}

function render() {
  renderQueued = false;
  const query = $("search").value.trim();
  const onlyBad = $("unhealthy").checked;
  // With a search, the matching nodes and their ancestors.
  let keep = null;
  if (query) {
    keep = new Set();
    for (const [p, n] of nodes) {
      if (p.includes(query)) {
        let q = n;
        while (q) { keep.add(q.path); q = nodes.get(q.parent); }
      }
    }
  }
  const out = [];
  const visit = (path) => {
    const n = nodes.get(path);
    if (!n) return;
    if (keep && !keep.has(path)) return;
    if (onlyBad && n.parent && !unhealthy(n)) return;
    out.push(row(n, query));
    if (expanded(n) || (keep && isSupervisor(n))) n.children.forEach(visit);
  };
  roots.forEach(visit);
  let workers = 0, atDesired = 0;
  for (const n of nodes.values()) if (!isSupervisor(n)) { workers++; if (settled(n)) atDesired++; }
  $("summary").textContent = `${roots.length} trees · ${atDesired}/${workers} workers at desired state`;
  $("tree").innerHTML = roots.length === 0
    ? `<p class="muted">no running trees (apply one with <code>starter apply -f FILE</code>)</p>`
    : `<table class="tree"><thead><tr><th>node</th><th>state</th><th>workers</th><th>desired</th><th>restarts</th><th>gen</th><th>last action</th><th>since</th><th>reason</th></tr></thead><tbody>${out.join("")}</tbody></table>`;
}

function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(render);
}

// ---- live ---------------------------------------------------------------------

function connect() {
  const es = new EventSource("api/events" + (readToken ? "?token=" + encodeURIComponent(readToken) : ""));
  es.onopen = () => {
    $("conn").textContent = "live";
    $("conn").className = "conn live";
    if (lost) { lost = false; reloadSoon(); } // changes were missed while away
  };
  es.onerror = () => {
    lost = true;
    $("conn").textContent = "connection lost — reconnecting…";
    $("conn").className = "conn lost";
  };
  es.onmessage = (ev) => {
    const c = JSON.parse(ev.data);
    const n = nodes.get(c.path);
    if (c.state === "gone") {
      if (n) {
        nodes.delete(c.path);
        const p = nodes.get(n.parent);
        if (p) p.children = p.children.filter((x) => x !== c.path);
        roots = roots.filter((x) => x !== c.path);
      }
    } else if (!n) {
      reloadSoon(); // a node appeared: its place in the tree comes with the tree
      return;
    } else {
      for (const k of ["state", "desired", "reason", "restarts", "manualRestarts", "generation", "since", "lastAction", "stale"]) n[k] = c[k];
    }
    scheduleRender();
    if (c.path === selected) refreshPanel(false);
  };
}

// ---- the panel ------------------------------------------------------------------

function field(name, value) {
  return value === undefined || value === "" || value === null ? "" : `<tr><td>${esc(name)}</td><td>${value}</td></tr>`;
}

async function openPanel(path) {
  selected = path;
  $("panel").hidden = false;
  $("panel-path").textContent = path;
  $("action-result").textContent = "";
  $("confirm").hidden = true;
  $("panel-log").textContent = "";
  logNext = "";
  clearTimeout(logTimer);
  $("follow").checked = false;
  scheduleRender();
  // The rows are the supervisors' records (a worker's counters as of its
  // last report); the open panel asks the node itself, every 2 s.
  clearInterval(panelTimer);
  panelTimer = setInterval(() => { if (selected === path) refreshPanel(false); }, 2000);
  await refreshPanel(true);
}

// jobFields: a job's schedule, next run and last run in the panel.
function jobFields(j) {
  const last = j.lastRun ? `${esc(j.lastRun.outcome)}${j.lastRun.exitCode !== undefined ? " (exit " + j.lastRun.exitCode + ")" : ""}, ${ago(j.lastRun.endedAt)}` : "none yet";
  const next = j.paused ? "paused" : (j.nextRun ? `${esc(j.nextRun)}` : "-");
  return field("schedule", esc(j.schedule)) + field("next run", next + (j.running ? " (one runs now)" : "")) +
    field("last run", last) + field("runs", `${j.runs} (${j.failures} not succeeded, ${j.skipped} skipped)`);
}

async function refreshPanel(withLog) {
  const path = selected;
  try {
    const [st, info] = await Promise.all([getJSON("api/status?path=" + encodeURIComponent(path)), getJSON("api/node?path=" + encodeURIComponent(path))]);
    if (path !== selected) return;
    const sup = st.kind === "supervisor";
    const la = st.lastAction && st.lastAction.name ? `${esc(st.lastAction.name)} ${esc(st.lastAction.status)}, ${st.lastAction.attempts} attempt(s)${st.lastAction.error ? ": " + esc(st.lastAction.error) : ""}` : "";
    $("panel-fields").innerHTML =
      field("kind", esc(st.kind) + (st.strategy ? " " + esc(st.strategy) : "")) +
      field("state", `<span class="state s-${esc(st.state)}" id="panel-state">${esc(st.state)}</span>`) +
      field("desired", esc(st.desired)) + field("reason", esc(st.reason)) +
      field("since", esc(st.since || "")) +
      field("restarts", `${st.restarts} automatic, ${st.manualRestarts} manual`) +
      (!sup && st.reloads ? field("reloads", st.reloads) : "") +
      field("notify status", esc(st.notifyStatus || "")) +
      (sup && info.maxRestarts ? field("intensity", `${st.recentRestarts || 0} recent restarts of ${info.maxRestarts} allowed in ${esc(info.period)}`) : "") +
      field("generation", st.generation) + field("last action", la) +
      field("instance", esc(st.instance || "")) + field("host", esc(info.host || "")) +
      field("usage", st.usage ? `${st.usage.cpuPercent}% CPU, ${Math.round(st.usage.memoryBytes / 1048576)} MiB` : "") +
      field("stale", esc(st.stale || "")) +
      (info.job ? jobFields(info.job) : "");
    $("panel-history").innerHTML = (info.history || []).slice().reverse().map((e) =>
      `<li><span class="muted">${esc(e.time)}</span> ${esc(e.from)} → <span class="s-${esc(e.state)}">${esc(e.state)}</span>: ${esc(e.reason)}</li>`).join("") || `<li class="muted">none</li>`;
    const links = [];
    if (config.webUI) links.push(`<a target="_blank" rel="noopener" href="${esc(config.webUI)}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(path)}">Temporal Web UI</a>`);
    if (config.grafana) links.push(`<a target="_blank" rel="noopener" href="${esc(config.grafana)}">Grafana</a>`);
    $("panel-links").innerHTML = links.join("");
    const actions = $("panel-actions");
    actions.hidden = !config.allowActions;
    if (config.allowActions) {
      // Rollouts are a supervisor's; a reload is a worker's that has one.
      const names = config.actions.filter((a) => a.startsWith("rollout-") ? sup : a !== "reload" || (!sup && info.reload));
      actions.querySelector(".buttons").innerHTML = names.map((a) => `<button data-action="${esc(a)}">${esc(a.replace("-", " "))}</button>`).join("");
    }
    const isProcess = st.kind === "process";
    $("panel-log-box").hidden = !isProcess;
    if (isProcess && withLog) readLog();
  } catch (e) {
    $("panel-fields").innerHTML = field("error", `<span class="s-failed">${esc(e.message)}</span>`);
  }
}

async function readLog() {
  const path = selected;
  try {
    const body = await getJSON("api/logs?path=" + encodeURIComponent(path) + (logNext ? "&from=" + encodeURIComponent(logNext) : ""));
    if (path !== selected) return;
    const pre = $("panel-log");
    pre.textContent += body.text;
    if (pre.textContent.length > 200000) pre.textContent = pre.textContent.slice(-100000);
    pre.scrollTop = pre.scrollHeight;
    logNext = body.next;
  } catch (e) {
    $("panel-log").textContent += "\n[" + e.message + "]\n";
  }
  if ($("follow").checked && path === selected) logTimer = setTimeout(readLog, 1000);
}

function askAction(action) {
  pendingAction = { action, path: selected };
  $("confirm-text").textContent = `${action.replace("-", " ")} ${selected}?`;
  $("confirm").hidden = false;
}

async function doAction() {
  const a = pendingAction;
  $("confirm").hidden = true;
  if (!a) return;
  const result = $("action-result");
  result.className = "";
  result.textContent = `${a.action} ${a.path}…`;
  const r = await fetch("api/actions", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + $("token").value.trim() },
    body: JSON.stringify(a),
  });
  const body = await r.json().catch(() => ({}));
  if (r.ok) { result.className = "ok"; result.textContent = "done: " + body.done; }
  else { result.className = "err"; result.textContent = `refused (${r.status}): ${body.error || r.statusText}`; }
}

// ---- wiring --------------------------------------------------------------------------

document.addEventListener("click", (ev) => {
  const t = ev.target;
  if (t.dataset && t.dataset.toggle) {
    const n = nodes.get(t.dataset.toggle);
    toggled.set(n.path, !expanded(n));
    scheduleRender();
    ev.stopPropagation();
    return;
  }
  if (t.dataset && t.dataset.action) { askAction(t.dataset.action); return; }
  const tr = t.closest && t.closest("tr.node");
  if (tr) openPanel(tr.dataset.path);
});
$("panel-close").onclick = () => { selected = ""; $("panel").hidden = true; clearTimeout(logTimer); clearInterval(panelTimer); scheduleRender(); };
$("confirm-yes").onclick = doAction;
$("confirm-no").onclick = () => { pendingAction = null; $("confirm").hidden = true; };
$("follow").onchange = () => { clearTimeout(logTimer); if ($("follow").checked) readLog(); };
$("search").oninput = scheduleRender;
$("unhealthy").onchange = scheduleRender;
setInterval(scheduleRender, 15000); // "since" columns age

(async () => {
  try { config = await getJSON("api/config"); } catch (e) {
    if (e.status === 401) { // a read token is needed: say so, and do not follow
      $("tree").innerHTML = `<p class="s-failed">${esc(e.message)}</p>`;
      $("conn").textContent = "no read token";
      $("conn").className = "conn lost";
      return;
    }
    /* read-only */
  }
  $("namespace").textContent = config.namespace ? "namespace " + config.namespace : "";
  await reload();
  connect();
})();
