"use strict";
// The Mishap dashboard: one page that reads and drives the admin API of the server serving it
// (/__mishap/...). It polls the request journal once a second while the page is visible and
// refreshes the open tab when new requests arrive. Everything the server sends is put into
// the page as text (textContent, text nodes), never as HTML.
(function () {
  const API = new URL("../", location.href).pathname;   // the page lives at /__mishap/ui/
  const POLL_MS = 1000;
  const OPEN_FOR_MS = 120000;
  const PAGE = 200;                                      // the most new entries one poll fetches                            // how long a request without a duration is asked for again
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
  // delay, a hang: the server notes their duration when it is done); true when there were new ones.
  async function loadRequests() {
    const generation = model.generation;
    const oldestOpen = model.entries.find((entry) => entry.durationMs === null && Date.now() - Date.parse(entry.time) < OPEN_FOR_MS);
    const after = oldestOpen ? Math.min(model.lastId, oldestOpen.id - 1) : model.lastId;
    const data = await api("GET", "requests", { after, limit: PAGE });
    if (generation !== model.generation) return false;   // the journal was read again meanwhile
    if (model.resets !== null && data.resets !== model.resets) {
      resync();   // reset from elsewhere (curl, a test, the command line): its rows are gone
      return false;
    }
    model.resets = data.resets;
    model.behind = data.requests.length >= PAGE;   // more may be waiting: fetched on the next rounds
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

  // An entry fetched again: its row (and its detail, if shown) once its duration is known.
  function updateEntry(entry) {
    const index = model.entries.findIndex((held) => held.id === entry.id);
    if (index < 0 || model.entries[index].durationMs === entry.durationMs) return;
    model.entries[index] = entry;
    const row = $("requests-body").querySelector(`tr[data-id="${entry.id}"]`);
    if (row) row.replaceWith(requestRow(entry));
    if (model.selectedId === entry.id) showDetail(entry.id);
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
    const refresh = { unmatched: renderUnmatched, rules: renderRules, sessions: renderSessions, retries: renderRetries };
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

  // ---- Requests ------------------------------------------------------------------------------

  // The filters offer the values the journal holds (and every endpoint of the scenarios).
  function updateFilters() {
    const distinct = (field) => [...new Set(model.entries.map((entry) => entry[field]).filter((value) => value !== null))].sort();
    const choices = (values) => values.map((value) => [keyOf(value), value]);
    const endpoints = new Set(distinct("endpoint"));
    for (const endpoint of (model.scenarios ? model.scenarios.endpoints : [])) endpoints.add(endpointName(endpoint));
    const sessions = [...model.sessions].sort();
    fillSelect($("filter-session"), [["", "all"], [NONE, "(no session)"], ...choices(sessions)]);
    fillSelect($("filter-endpoint"), [["", "all"], [NONE, "(none: unmatched)"], ...choices([...endpoints].sort())]);
    fillSelect($("filter-rule"), [["", "all"], [NONE, "(none)"], ...choices(distinct("rule"))]);
    fillSelect($("filter-status"), [["", "all"], ["2xx", "2xx"], ["3xx", "3xx"], ["4xx", "4xx"], ["5xx", "5xx"],
      ["fault", "fault or hang"], ...distinct("status").map((status) => [String(status), String(status)])]);
    fillSelect($("known-sessions"), sessions.map((session) => [session, session]));
  }

  function passesFilters(entry) {
    const choose = (id, value) => { const key = $(id).value; return key === "" || key === keyOf(value); };
    const status = $("filter-status").value;
    const statusFits = status === "" || (status === "fault" ? entry.status === null
      : status.endsWith("xx") ? entry.status !== null && String(entry.status)[0] === status[0]
        : String(entry.status) === status);
    return statusFits && choose("filter-session", entry.session) && choose("filter-endpoint", entry.endpoint)
      && choose("filter-rule", entry.rule);
  }

  function requestRow(entry) {
    return el("tr", { dataset: { id: entry.id }, className: entry.id === model.selectedId ? "selected" : "" },
      el("td", { title: entry.time }, clock(entry.time)),
      el("td", {}, entry.method),
      el("td", { className: "path" }, entry.path, el("span", { className: "muted" }, queryText(entry.query))),
      el("td", { className: statusClass(entry) }, statusText(entry)),
      el("td", {}, entry.rule || ""),
      el("td", {}, entry.endpoint || ""),
      el("td", {}, entry.session || ""),
      el("td", { className: "num" }, entry.delayMs ? ms(entry.delayMs) : ""),
      el("td", { className: "num" }, duration(entry.durationMs)));
  }

  // Rebuilds the table, newest first.
  function renderRequests() {
    const rows = model.entries.filter(passesFilters).reverse().map(requestRow);
    $("requests-body").replaceChildren(...rows);
    updateRequestCount();
  }

  // Puts new entries on top, unless paused.
  function addRows(fresh) {
    if ($("live-pause").checked) return updateRequestCount();
    const body = $("requests-body");
    for (const entry of fresh) if (passesFilters(entry)) body.prepend(requestRow(entry));
    updateRequestCount();
  }

  function updateRequestCount() {
    const rows = $("requests-body").rows.length;
    $("requests-empty").hidden = model.entries.length > 0;
    $("requests-count").textContent = `${rows} shown of ${model.entries.length} in the journal`
      + ` (it keeps the last ${model.capacity}; ${model.dropped} dropped)`
      + (model.behind ? ` · catching up: the page reads at most ${PAGE} new requests a second` : "");
    $("journal-window").textContent = `${model.entries.length} requests, of at most ${model.capacity}`;
  }

  // The detail panel of one request.
  function showDetail(id) {
    const entry = model.entries.find((candidate) => candidate.id === id);
    const panel = $("request-detail");
    model.selectedId = entry ? id : null;
    for (const row of $("requests-body").rows) row.classList.toggle("selected", Number(row.dataset.id) === model.selectedId);
    panel.hidden = !entry;
    if (!entry) return;
    const runtimeRule = el("span", { id: "detail-runtime-rule" }, entry.runtimeRule || "none: the scenario files answered");
    const facts = [["id", entry.id], ["time", entry.time], ["status", statusText(entry)],
      ["endpoint", entry.endpoint || "none (unmatched)"], ["rule", entry.rule || "none"], ["runtime rule", runtimeRule],
      ["session", sessionLabel(entry.session)], ["delay", ms(entry.delayMs)], ["hang", entry.hang ? "yes" : "no"]];
    if (entry.durationMs !== undefined) facts.push(["duration", duration(entry.durationMs)]);
    if (entry.closedEarly !== undefined) facts.push(["closed early", entry.closedEarly ? "yes: the client went away first" : "no"]);
    const changes = el("table", { id: "detail-state-changes", className: "grid" });
    fillTable(changes, ["name", "from", "to", "for"],
      (entry.stateChanges || []).map((c) => [c.name, shown(c.from), shown(c.to), ms(c.forMs)]), "no state changed");
    const query = el("table", { id: "detail-query", className: "grid" });
    fillTable(query, ["name", "value"], entry.query, "no query");
    const headers = el("table", { id: "detail-headers", className: "grid" });
    fillTable(headers, ["name", "value"], entry.headers, "no headers");
    panel.replaceChildren(
      el("div", { className: "detail-head" }, el("h2", {}, `${entry.method} ${entry.path}`),
        el("button", { id: "detail-close", type: "button" }, "Close")),
      el("dl", { className: "facts" }, facts.map(([name, value]) => [el("dt", {}, name), el("dd", {}, value)])),
      el("h3", {}, "Query"), query,
      el("h3", {}, "Body"), el("pre", { id: "detail-body", className: "body" }, bodyText(entry)),
      el("h3", {}, "State changes"), changes,
      el("h3", {}, "Headers"), headers);
    $("detail-close").addEventListener("click", () => showDetail(null));
  }

  function bodyText(entry) {
    if (entry.bodyBase64 !== undefined) return "(not UTF-8; base64)\n" + entry.bodyBase64;
    if (!entry.body) return "(empty)";
    let text = entry.body;
    try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (ignored) { /* not JSON: as sent */ }
    return entry.bodyTruncated ? `${text}\n… cut; ${entry.bodySize} bytes in all` : text;
  }

  // ---- Unmatched -----------------------------------------------------------------------------

  async function renderUnmatched() {
    const data = await api("GET", "unmatched");
    const items = data.unmatched.slice().reverse().map((item) => el("li", { dataset: { id: item.id } },
      el("div", { className: "card-head" },
        el("code", {}, `${item.method} ${item.path}${queryText(item.query)}`),
        el("span", { className: "muted" }, clock(item.time)),
        item.session !== null && el("span", { className: "tag" }, "session " + item.session)),
      el("ul", { className: "near-misses" }, item.nearMisses.length
        ? item.nearMisses.map((miss) => el("li", { className: "near-miss" },
          el("span", { className: "muted" }, [miss.endpoint, miss.rule && "rule " + miss.rule].filter(Boolean).join(", ") + ": "),
          el("span", { className: "reason" }, miss.reason)))
        : el("li", { className: "muted" }, "no endpoint comes near"))));
    const none = el("li", { className: "muted" }, "Every request so far matched a rule.");
    $("unmatched-list").replaceChildren(...(items.length ? items : [none]));
  }

  // ---- Rules ---------------------------------------------------------------------------------

  async function renderRules() {
    const [scenarios, runtime] = await Promise.all([api("GET", "scenarios"), api("GET", "rules")]);
    model.scenarios = scenarios;
    const hits = countBy(model.entries, (e) => (e.endpoint && e.rule ? e.endpoint + "\n" + e.rule : null));
    const runtimeHits = countBy(model.entries, (e) => e.runtimeRule || null);
    $("rules-summary").textContent =
      `${scenarios.endpoints.length} endpoints from ${scenarios.files.length} files: ${scenarios.files.join(", ")}`;

    const warnings = scenarios.warnings || [];
    $("scenario-warnings").hidden = warnings.length === 0;
    $("scenario-warnings-list").replaceChildren(...warnings.map((warning) => el("li", {}, warning)));

    fillTable($("runtime-rules"), ["id", "session", "endpoints", "rules", "answers left", "expires in", "added", "hits", ""],
      runtime.rules.map((rule) => [rule.id, rule.session === null ? "all clients" : rule.session,
        rule.endpoints.join(", "), (rule.forced ? "forced: " : "") + rule.rules.join(", "),
        answersLeft(rule),
        ms(rule.expiresInMs), clock(rule.addedAt, false), runtimeHits.get(rule.id) || 0,
        el("button", { type: "button", className: "small", dataset: { removeRule: rule.id } }, "Remove")]),
      "none (POST /__mishap/rules or Controls → Force adds one)");

    $("endpoint-list").replaceChildren(...scenarios.endpoints.map((endpoint) => {
      const name = endpointName(endpoint);
      const table = el("table", { className: "grid rules" },
        el("thead", {}, el("tr", {}, el("th", {}, "rule"), el("th", {}, "source"), el("th", { className: "num" }, "hits"))),
        el("tbody", {}, endpoint.rules.map((rule) => {
          const count = hits.get(name + "\n" + rule.name) || 0;
          return el("tr", { dataset: { rule: rule.name }, className: count ? "hit" : "" },
            el("td", {}, rule.name), el("td", { className: "source" }, rule.source), el("td", { className: "num hits" }, count));
        })));
      return el("details", { className: "endpoint", open: true, dataset: { endpoint: name } },
        el("summary", {}, el("strong", {}, name), " ", el("span", { className: "source" }, endpoint.source),
          el("span", { className: "muted" }, ` · ${endpoint.rules.length} rules`)), table);
    }));
  }

  const answersLeft = (rule) => (typeof rule.remaining === "number" ? `${rule.remaining} of ${rule.times}` : "until removed");

  // ---- Sessions ------------------------------------------------------------------------------

  // The session of the newest request that had one (the default choice), else NONE.
  function latestSession() {
    const entry = model.entries.slice().reverse().find((e) => e.session !== null);
    return keyOf(entry ? entry.session : null);
  }

  async function renderSessions() {
    if (!model.sessionChosen) model.session = latestSession();
    const counts = countBy(model.entries, (e) => keyOf(e.session));
    const keys = [NONE, ...[...model.sessions].sort().map(keyOf)];
    $("session-list").replaceChildren(...keys.map((key) => el("li", {},
      el("button", { type: "button", className: key === model.session ? "active" : "", dataset: { key, session: valueOf(key) || "" } },
        key === NONE ? "(no session: shared)" : valueOf(key),
        el("span", { className: "muted" }, ` ${counts.get(key) || 0} requests`)))));

    const session = valueOf(model.session);
    $("session-title").textContent = session === null ? "Requests without a session (the shared set)" : "Session " + session;
    $("session-reset").hidden = session === null;   // a reset without a session resets everything
    const [state, rules] = await Promise.all([api("GET", "state", { session }), api("GET", "rules", { session })]);
    fillTable($("session-state"), ["name", "value", "initial", "expires in", "declared"],
      Object.entries(state.state).map(([name, v]) =>
        [name, el("td", { className: "value", dataset: { name } }, shown(v.value)), shown(v.initial), ms(v.expiresInMs), v.declared]),
      "no state declared");
    const cycles = state.cycles || [];
    $("session-cycles-block").hidden = !state.cycles;
    fillTable($("session-cycles"), ["endpoint", "rule", "next step", "it answers"],
      cycles.map((c) => [c.endpoint, c.rule, `${c.position + 1} of ${c.length}`, c.next === undefined ? "" : String(c.next)]));
    fillTable($("session-rules"), ["id", "endpoints", "rules", "answers left"],
      rules.rules.filter((rule) => rule.session === session)
        .map((rule) => [rule.id, rule.endpoints.join(", "), rule.rules.join(", "), answersLeft(rule)]));
  }

  async function resetSession() {
    const session = valueOf(model.session);
    try {
      const answer = await api("POST", "reset", { session });
      $("session-message").textContent = `Reset: ${answer.reset}`;
      resync();
      await renderSessions();
    } catch (error) {
      $("session-message").textContent = errorText(error);
    }
  }

  // ---- Retries -------------------------------------------------------------------------------

  async function renderRetries() {
    const sessionSelect = $("retries-session");
    fillSelect(sessionSelect, [[NONE, "(no session)"], ...[...model.sessions].sort().map((s) => [keyOf(s), s])]);
    if (!sessionSelect.dataset.chosen) sessionSelect.value = latestSession();
    const endpoints = model.scenarios ? model.scenarios.endpoints.map(endpointName) : [];
    fillSelect($("retries-endpoint"), [["", "all endpoints"], ...endpoints.map((e) => [keyOf(e), e])]);
    const session = valueOf(sessionSelect.value || NONE);
    const endpoint = valueOf($("retries-endpoint").value);
    const data = await api("GET", "retries", { session, endpoint });
    // Without ?session= the API answers for every session: keep those without one.
    const observations = data.retries.filter((o) => o.session === session);
    const requests = model.entries.filter((e) => e.session === session && e.endpoint !== null
      && (endpoint === null || e.endpoint === endpoint));
    const violations = observations.filter((o) => o.honoured === false).length;
    $("retries-violations").textContent = `${observations.length} answers with Retry-After, ${violations} retried too early`;
    drawTimeline(observations, requests);
    fillTable($("retries-table"),
      ["answered", "endpoint", "rule", "status", "Retry-After", "allowed from", "next request", "waited / required", "verdict"],
      observations.map((o) => [clock(o.answeredAt), o.endpoint, o.rule || "", o.status, o.retryAfter, clock(o.allowedAt),
        o.nextRequestAt ? clock(o.nextRequestAt) : "not yet", `${waited(o)} / ${o.requiredMs} ms`,
        el("td", { className: verdictClass(o) }, verdictText(o))]),
      "no answer with Retry-After for this choice");
  }

  const verdictClass = (o) => (o.honoured === true ? "honoured" : o.honoured === false ? "too-early" : "pending");
  const verdictText = (o) => (o.honoured === true ? "honoured" : o.honoured === false ? "too early" : "waiting");
  const waited = (o) => (o.waitedMs === null ? "–" : o.waitedMs);

  // The SVG timeline: a lane per endpoint; each request a tick, each Retry-After a shaded
  // window from the answer to allowedAt, and each retry a dot labelled honoured or too early.
  function drawTimeline(observations, requests) {
    const chart = $("timeline");
    const lanes = [...new Set([...requests.map((r) => r.endpoint), ...observations.map((o) => o.endpoint)])];
    const times = [...requests.map((r) => r.time), ...observations.flatMap((o) => [o.answeredAt, o.allowedAt, o.nextRequestAt])]
      .filter(Boolean).map((t) => Date.parse(t));
    const width = Math.max(800, chart.parentNode.clientWidth - 2);
    const LEFT = 190, RIGHT = 30, TOP = 10, LANE = 90, AXIS = 30;
    const height = TOP + Math.max(1, lanes.length) * LANE + AXIS;
    chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
    chart.setAttribute("width", width);
    chart.setAttribute("height", height);
    chart.replaceChildren();
    if (!times.length) {
      chart.append(svg("text", { x: 20, y: 40, class: "empty" }, "No requests for this session and endpoint yet."));
      return;
    }
    const start = Math.min(...times);
    const span = Math.max(Math.max(...times) - start, 1000) * 1.04;
    const x = (iso) => LEFT + ((Date.parse(iso) - start) / span) * (width - LEFT - RIGHT);

    // The time axis, with a tick every "nice" step.
    const axisY = TOP + lanes.length * LANE + 6;
    chart.append(svg("line", { x1: LEFT, x2: width - RIGHT, y1: axisY, y2: axisY, class: "axis" }));
    const step = [100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000]
      .find((s) => span / s <= 8) || 7200000;
    for (let t = Math.ceil(start / step) * step; t <= start + span; t += step) {
      const iso = new Date(t).toISOString();
      chart.append(svg("line", { x1: x(iso), x2: x(iso), y1: TOP, y2: axisY + 4, class: "grid-line" }),
        svg("text", { x: x(iso), y: axisY + 18, class: "tick" }, clock(iso, step < 1000)));
    }

    lanes.forEach((lane, index) => {
      const top = TOP + index * LANE, mid = top + LANE / 2 + 10;
      const group = svg("g", { class: "lane", "data-endpoint": lane });
      group.append(svg("text", { x: 8, y: mid + 4, class: "lane-label" }, lane),
        svg("line", { x1: LEFT, x2: width - RIGHT, y1: mid, y2: mid, class: "lane-line" }));
      const mine = observations.filter((o) => o.endpoint === lane);
      // Windows take three rows in turn, so overlapping ones stay apart.
      mine.forEach((o, n) => {
        const window = svg("rect", { x: x(o.answeredAt), y: mid - 16 + (n % 3) * 11, height: 10, class: "window",
          width: Math.max(1, x(o.allowedAt) - x(o.answeredAt)) });
        window.append(svg("title", {}, `${o.status} ${o.rule || ""}: Retry-After ${o.retryAfter}, allowed from ${clock(o.allowedAt)}`));
        group.append(window);
      });
      for (const r of requests.filter((request) => request.endpoint === lane)) {
        const tick = svg("line", { x1: x(r.time), x2: x(r.time), y1: mid - 12, y2: mid + 12,
          class: "request " + statusClass(r), "data-id": r.id });
        tick.append(svg("title", {}, `#${r.id} ${clock(r.time)} ${statusText(r)} ${r.rule || ""}`));
        group.append(tick);
      }
      // A retry's verdict at the time it came; labels alternate heights so neighbours stay legible.
      mine.forEach((o, n) => {
        const kind = verdictClass(o);
        const at = o.nextRequestAt ? x(o.nextRequestAt) : x(o.allowedAt);
        const mark = svg("g", { class: "verdict " + kind, "data-verdict": kind });
        const anchor = kind === "pending" ? "end" : "start";
        mark.append(svg("circle", { cx: at, cy: mid, r: 6 }),
          svg("text", { x: at, y: top + 14 + (n % 3) * 12, class: "verdict-label", "text-anchor": anchor }, verdictText(o)),
          svg("title", {}, `${verdictText(o)}: waited ${waited(o)} ms of ${o.requiredMs} ms`));
        group.append(mark);
      });
      chart.append(group);
    });
  }

  // ---- Controls ------------------------------------------------------------------------------

  function fillForceEndpoints() {
    const endpoints = model.scenarios.endpoints;
    fillSelect($("force-endpoint"), endpoints.map((e) => [endpointName(e), endpointName(e)]));
    fillForceRules();
    updateFilters();
  }

  function fillForceRules() {
    const endpoint = model.scenarios && model.scenarios.endpoints.find((e) => endpointName(e) === $("force-endpoint").value);
    fillSelect($("force-rule"), endpoint ? endpoint.rules.map((rule) => [rule.name, rule.name]) : []);
  }

  async function force() {
    const query = { endpoint: $("force-endpoint").value, rule: $("force-rule").value,
      times: $("force-times").value.trim(), session: $("force-session").value.trim() };
    try {
      const answer = await api("POST", "force", query);
      const who = answer.session === null ? "every client" : "session " + answer.session;
      const until = answer.times ? `the next ${answer.times} request(s)` : "until removed";
      showResult($("force-result"), `${answer.endpoints.join(", ")} answers with ${answer.rules.join(", ")} for ${until} of ${who}`
        + ` (runtime rule ${answer.id}).\n${JSON.stringify(answer)}`);
    } catch (error) {
      showResult($("force-result"), errorText(error), true);
    }
  }

  async function control(path, done) {
    try {
      const answer = await api("POST", path);
      showResult($("controls-result"), JSON.stringify(answer));
      done();
    } catch (error) {
      showResult($("controls-result"), errorText(error), true);
    }
    try { await loadScenarios(); } catch (ignored) { /* shown by the next poll */ }
  }

  // ---- Events --------------------------------------------------------------------------------

  for (const button of document.querySelectorAll("[data-tab]")) button.addEventListener("click", safely(() => showTab(button.dataset.tab)));
  for (const id of ["filter-session", "filter-endpoint", "filter-rule", "filter-status"]) $(id).addEventListener("change", renderRequests);
  $("live-pause").addEventListener("change", renderRequests);
  $("requests-body").addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-id]");
    if (row) showDetail(Number(row.dataset.id));
  });
  $("runtime-rules").addEventListener("click", safely(async (event) => {
    const button = event.target.closest("button[data-remove-rule]");
    if (!button) return;
    await api("DELETE", "rules/" + encodeURIComponent(button.dataset.removeRule));
    await renderRules();
  }));
  $("session-list").addEventListener("click", safely(async (event) => {
    const button = event.target.closest("button[data-key]");
    if (!button) return;
    model.session = button.dataset.key;
    model.sessionChosen = true;
    $("session-message").textContent = "";
    await renderSessions();
  }));
  $("session-reset").addEventListener("click", resetSession);
  $("retries-session").addEventListener("change", safely(async () => {
    $("retries-session").dataset.chosen = "1";
    await renderRetries();
  }));
  $("retries-endpoint").addEventListener("change", safely(renderRetries));
  $("force-endpoint").addEventListener("change", fillForceRules);
  $("force-submit").addEventListener("click", force);
  $("reset-all").addEventListener("click", () => control("reset", resync));
  $("reload-submit").addEventListener("click", () => control("reload", () => {}));
  $("token-panel").addEventListener("submit", (event) => { event.preventDefault(); useToken(); });
  window.addEventListener("resize", safely(async () => { if (model.tab === "retries") await renderRetries(); }));

  updateFilters();
  showTab("requests");
  tick();
})();
