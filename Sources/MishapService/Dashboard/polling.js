"use strict";
// The poll loop (health, new journal entries, the open tab) and switching tabs.

// ---- Polling -------------------------------------------------------------------------------

// One round: health now and then, new journal entries, and the open tab when something changed.
async function tick() {
  clearTimeout(model.timer);
  if (document.hidden || model.blocked || model.ticking) return;
  model.ticking = true;
  const generation = model.generation;
  try {
    if (!model.scenarios || model.polls % HEALTH_EVERY === 0) await checkHealth();
    model.polls += 1;
    const fresh = await loadRequests();
    if (fresh) await refreshTab();
    if (!document.hidden) setConnection("live", model.token ? "live (token)" : "live");
  } catch (error) {
    report(error);
  } finally {
    model.ticking = false;
  }
  // After a resync asked for during this round, the next round starts at once.
  const delay = generation === model.generation ? POLL_MS : 0;
  if (!document.hidden && !model.blocked) model.timer = setTimeout(tick, delay);
}

// Shows a failed call in the header (a 401 has shown the token form already).
function report(error) {
  if (error.status !== 401) setConnection("offline", errorText(error));
}

// An event handler that runs an async function and reports its failure.
const safely = (action) => (...args) => action(...args).catch(report);

document.addEventListener("visibilitychange", () => {
  if (document.hidden) { clearTimeout(model.timer); setConnection("paused", "paused (page hidden)"); } else tick();
});

async function checkHealth() {
  const health = await api("GET", "health");
  $("health").textContent = `${health.endpoints} endpoints · ${health.rules} rules · ${health.reloads} reloads`
    + (health.lastReloadFailed ? " · last reload failed" : "");
  const key = JSON.stringify(health);
  if (key !== model.healthKey || !model.scenarios) {
    model.healthKey = key;
    await loadScenarios();
  }
}

async function loadScenarios() {
  model.scenarios = await api("GET", "scenarios");
  const problems = model.scenarios.lastReloadErrors || [];
  $("reload-problems").hidden = problems.length === 0;
  $("reload-problems-list").replaceChildren(...problems.map((problem) => el("li", {}, problem)));
  fillForceEndpoints();
}

// Fetches the entries after the newest one held, and again those still followed (`followed`: a
// delay, a hang: the server notes their duration when it is done; a stream of events or a
// WebSocket going on: their events and messages as they pass); true when there were new ones.
// A call from the oldest followed entry brings the newer ones too. When PAGE entries do not
// reach the newest held (a stream open while many requests came), the next followed entry past
// them gets a call of its own (FOLLOW_CALLS at most a round), and the new entries one more.
// Rows need no bodies: a request's body is read when its detail is opened (`showDetail`).
async function loadRequests() {
  const generation = model.generation;
  const now = Date.now();
  const open = model.entries.filter((entry) => followed(entry, now));
  let covered = 0;   // every entry up to this id was fetched this round
  let fresh = false;
  for (let calls = 0; calls < FOLLOW_CALLS; calls += 1) {
    const next = open.find((entry) => entry.id > covered);
    if (!next) break;
    const data = await fetchRequests(next.id - 1, generation);
    if (!data) return false;
    const last = data.requests.length ? data.requests[data.requests.length - 1].id : next.id - 1;
    covered = data.requests.length < PAGE && !data.truncated ? Infinity : last;
    // A followed entry the answer skipped is no longer in the journal: it will not change again.
    const returned = new Set(data.requests.map((entry) => entry.id));
    for (const entry of open) if (entry.id >= next.id && entry.id <= covered && !returned.has(entry.id)) entry.gone = true;
    for (const entry of data.requests) if (entry.id <= model.lastId) updateEntry(entry);
    fresh = addFresh(data) || fresh;
    if (covered === Infinity) return fresh;   // everything up to the newest was in this answer
  }
  const data = await fetchRequests(model.lastId, generation);
  return data ? addFresh(data) || fresh : false;
}

// One call for the entries after the id `after`, without bodies; null when the journal was read
// again meanwhile, or reset from elsewhere (curl, a test, the command line: its rows are gone).
async function fetchRequests(after, generation) {
  const data = await api("GET", "requests", { after, limit: PAGE, bodyBytes: 0 });
  if (generation !== model.generation) return null;
  if (model.resets !== null && data.resets !== model.resets) {
    resync();
    return null;
  }
  model.resets = data.resets;
  return data;
}

// Adds the entries of `data` newer than the newest held as rows; true when there were some.
function addFresh(data) {
  model.behind = data.requests.length >= PAGE || data.truncated;   // more may be waiting: fetched on the next rounds
  model.capacity = data.capacity;
  model.dropped = data.dropped;
  const fresh = data.requests.filter((entry) => entry.id > model.lastId);
  if (!fresh.length) {
    updateRequestCount();
    return false;
  }
  model.entries.push(...fresh);
  model.lastId = fresh[fresh.length - 1].id;
  for (const entry of fresh) if (entry.session !== null) model.sessions.add(entry.session);
  const trimmed = model.entries.length > model.capacity;
  if (trimmed) model.entries.splice(0, model.entries.length - model.capacity);
  updateFilters();
  if (trimmed) renderRequests(); else addRows(fresh);
  return true;
}

// An entry fetched again: its row (and its detail, if shown) once its duration is known, or as
// its stream goes on.
function updateEntry(entry) {
  const index = model.entries.findIndex((held) => held.id === entry.id);
  if (index < 0 || progressKey(model.entries[index]) === progressKey(entry)) return;
  model.entries[index] = entry;
  const row = $("requests-body").querySelector(`tr[data-id="${entry.id}"]`);
  if (row) row.replaceWith(requestRow(entry));
  if (model.selectedId === entry.id) showDetail(entry.id).catch(report);
}

// Reads the journal again whole (after a reset, which removes entries). A round under way
// drops what it fetched and starts the next one at once.
function resync() {
  model.generation += 1;
  model.resets = null;
  model.entries = [];
  model.lastId = 0;
  renderRequests();
  tick();
}

async function refreshTab() {
  const refresh = { unmatched: renderUnmatched, rules: renderRules, sessions: renderSessions, retries: renderRetries,
    verdict: renderVerdict };
  if (refresh[model.tab]) await refresh[model.tab]();
}

// ---- Tabs ----------------------------------------------------------------------------------

async function showTab(name) {
  model.tab = name;
  for (const button of document.querySelectorAll("[data-tab]")) {
    button.classList.toggle("active", button.dataset.tab === name);
    button.setAttribute("aria-selected", button.dataset.tab === name);
  }
  for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== "view-" + name;
  await refreshTab();
}
