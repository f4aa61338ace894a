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

// Fetches the entries after the newest one held, and again those still open when fetched (a
// delay, a hang: the server notes their duration when it is done; a stream of events or a
// WebSocket going on: their events and messages as they pass); true when there were new ones.
// Rows need no bodies: a request's body is read when its detail is opened (`showDetail`).
async function loadRequests() {
  const generation = model.generation;
  const oldestOpen = model.entries.find((entry) => stillOpen(entry) && Date.now() - Date.parse(entry.time) < OPEN_FOR_MS);
  const after = oldestOpen ? Math.min(model.lastId, oldestOpen.id - 1) : model.lastId;
  const data = await api("GET", "requests", { after, limit: PAGE, bodyBytes: 0 });
  if (generation !== model.generation) return false;   // the journal was read again meanwhile
  if (model.resets !== null && data.resets !== model.resets) {
    resync();   // reset from elsewhere (curl, a test, the command line): its rows are gone
    return false;
  }
  model.resets = data.resets;
  model.behind = data.requests.length >= PAGE || data.truncated;   // more may be waiting: fetched on the next rounds
  model.capacity = data.capacity;
  model.dropped = data.dropped;
  for (const entry of data.requests) if (entry.id <= model.lastId) updateEntry(entry);
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
