"use strict";
// What every part of the dashboard shares: the page's model of the server, small DOM helpers,
// the admin API client and the admin-token form. Loaded first; the other scripts use its names.

const API = "/__mishap/";                              // the admin API; the page is at /__mishap/ui/
const POLL_MS = 1000;
const OPEN_FOR_MS = 120000;                            // how long a request without a duration is asked for again
const FOLLOW_CALLS = 3;                                // the most calls a poll makes for entries still open
const PAGE = 100;                                      // the most new entries one poll fetches (without bodies)
const HEALTH_EVERY = 5;                                // polls between two health checks
const TOKEN_KEY = "mishap-admin-token";
const NONE = "-";                                      // a select's value for "no session" (or no rule, ...)

const $ = (id) => document.getElementById(id);

// What the page knows of the server.
const model = {
  token: sessionStorage.getItem(TOKEN_KEY) || "",
  entries: [],          // the journal's entries, oldest first
  lastId: 0,            // the newest id held, for ?after=
  generation: 0,        // bumped when the journal is read again whole
  resets: null,         // the journal's reset count when last polled (null: not known yet)
  behind: false,        // the last poll was full: more new requests are waiting
  capacity: 0,
  dropped: 0,
  sessions: new Set(),  // every session seen since the page was opened
  scenarios: null,      // the answer of GET scenarios
  healthKey: "",
  tab: "requests",
  selectedId: null,     // the request shown in the detail panel
  session: NONE,        // the session shown in the Sessions tab, as a key
  sessionChosen: false, // until one is clicked, the Sessions tab shows the newest session
  polls: 0,
  timer: 0,
  ticking: false,
  blocked: false,       // waiting for the admin token
};

// ---- Small helpers ----------------------------------------------------------------------

// el("td", { className: "x", dataset: { id: 3 } }, "text", childNode, ...): text is escaped.
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined && child !== false) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// The same for SVG elements.
function svg(tag, attributes, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// A table with a head row and body rows (arrays of cells: text or nodes).
function fillTable(table, head, rows, empty) {
  const cell = (content) => (content instanceof Node && content.tagName === "TD" ? content : el("td", {}, content));
  const body = rows.length ? rows.map((cells) => el("tr", {}, cells.map(cell)))
    : [el("tr", {}, el("td", { className: "muted", colSpan: head.length }, empty || "none"))];
  table.replaceChildren(el("thead", {}, el("tr", {}, head.map((title) => el("th", {}, title)))), el("tbody", {}, body));
}

// The key of a value in a select: "=value", or NONE for null.
const keyOf = (value) => (value === null || value === undefined ? NONE : "=" + value);
const valueOf = (key) => (key === NONE || key === "" ? null : key.slice(1));

// Replaces a select's options ([value, label] pairs) when they changed, keeping the choice.
function fillSelect(select, options) {
  const signature = JSON.stringify(options);
  if (select.dataset.signature === signature) return;
  const chosen = select.value;
  select.replaceChildren(...options.map(([value, label]) => el("option", { value }, label)));
  select.dataset.signature = signature;
  if (options.some(([value]) => value === chosen)) select.value = chosen;
}

const pad = (number, width) => String(number).padStart(width || 2, "0");
function clock(iso, withMs = true) {
  if (!iso) return "";
  const d = new Date(iso);
  const text = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return withMs ? `${text}.${pad(d.getMilliseconds(), 3)}` : text;
}
const ms = (value) => (value === null || value === undefined ? "" : `${value} ms`);
const duration = (value) => (typeof value !== "number" ? ""
  : ms(value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : Math.round(value)));
const shown = (value) => (typeof value === "string" ? JSON.stringify(value) : String(value));
const queryText = (pairs) => (pairs && pairs.length ? "?" + pairs.map(([k, v]) => `${k}=${v}`).join("&") : "");
const endpointName = (endpoint) => `${endpoint.method} ${endpoint.path}`;
const sessionLabel = (session) => (session === null ? "(no session)" : session);

function statusText(entry) {
  if (entry.status !== null) return String(entry.status);
  return entry.fault || (entry.hang ? "hang" : "none");
}
function statusClass(entry) {
  if (entry.status === null) return "status fault";
  return "status s" + String(entry.status)[0];
}

function countBy(items, keyFor) {
  const counts = new Map();
  for (const item of items) {
    const key = keyFor(item);
    if (key !== null) counts.set(key, (counts.get(key) || 0) + 1);
  }
  return counts;
}

// Shows an answer (or an error) of the API in a <pre>.
function showResult(node, text, failed) {
  node.hidden = false;
  node.textContent = text;
  node.classList.toggle("error", !!failed);
  node.classList.toggle("ok", !failed);
}

function errorText(error) {
  const problems = error.data && error.data.problems ? "\n" + error.data.problems.join("\n") : "";
  return `${error.status ? "Error " + error.status + ": " : ""}${error.message}${problems}`;
}

// ---- The admin API -------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message, data) { super(message); this.status = status; this.data = data; }
}

// Calls the admin API with the token, if any; resolves to the JSON answer, rejects with ApiError.
async function api(method, path, query) {
  const url = new URL(API + path, location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(name, value);
  }
  const headers = model.token ? { "X-Mishap-Admin-Token": model.token } : {};
  let response;
  try {
    response = await fetch(url, { method, headers, cache: "no-store" });
  } catch (error) {
    throw new ApiError(0, "cannot reach Mishap (" + error.message + ")");
  }
  let data = null;
  try { data = await response.json(); } catch (ignored) { /* not JSON */ }
  if (response.status === 401) askForToken();
  if (!response.ok) throw new ApiError(response.status, (data && data.reason) || response.statusText, data);
  return data;
}

// ---- Token ---------------------------------------------------------------------------------

function askForToken() {
  model.blocked = true;
  $("token-message").textContent = model.token
    ? "Mishap refused this admin token. Enter the one it was started with."
    : "This Mishap needs its admin token (--admin-token or MISHAP_ADMIN_TOKEN).";
  $("token-panel").hidden = false;
  setConnection("locked", "needs the admin token");
}

function useToken() {
  model.token = $("token-input").value.trim();
  sessionStorage.setItem(TOKEN_KEY, model.token);
  $("token-panel").hidden = true;
  model.blocked = false;
  model.scenarios = null;
  resync();
}

function setConnection(kind, text) {
  const badge = $("connection");
  badge.className = "badge " + kind;
  badge.textContent = text || kind;
}
