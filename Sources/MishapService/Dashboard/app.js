"use strict";
// The Mishap dashboard: one page that reads and drives the admin API of the server serving it
// (/__mishap/...). It polls the request journal once a second while the page is visible and
// refreshes the open tab when new requests arrive. Everything the server sends is put into
// the page as text (textContent, text nodes), never as HTML.
//
// The page's scripts share one scope (classic scripts, loaded in order by index.html): page.js,
// polling.js, one file per tab, and this one last, which wires the events and starts polling.

// ---- Events --------------------------------------------------------------------------------

for (const button of document.querySelectorAll("[data-tab]")) button.addEventListener("click", safely(() => showTab(button.dataset.tab)));
for (const id of ["filter-session", "filter-endpoint", "filter-rule", "filter-status"]) $(id).addEventListener("change", renderRequests);
$("live-pause").addEventListener("change", renderRequests);
$("requests-body").addEventListener("click", (event) => {
  const row = event.target.closest("tr[data-id]");
  if (row) safely(showDetail)(Number(row.dataset.id));
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
$("session-verdict").addEventListener("click", safely(() => showVerdictOf(valueOf(model.session))));
$("retries-session").addEventListener("change", safely(async () => {
  $("retries-session").dataset.chosen = "1";
  await renderRetries();
}));
$("retries-endpoint").addEventListener("change", safely(renderRetries));
$("verdict-session").addEventListener("change", safely(async () => {
  $("verdict-session").dataset.chosen = "1";
  await renderVerdict();
}));
for (const id of ["verdict-endpoint", "verdict-max-attempts", "verdict-give-up"]) $(id).addEventListener("change", safely(renderVerdict));
$("force-endpoint").addEventListener("change", fillForceRules);
$("force-submit").addEventListener("click", force);
$("reset-all").addEventListener("click", () => control("reset", resync));
$("reload-submit").addEventListener("click", () => control("reload", () => {}));
$("token-panel").addEventListener("submit", (event) => { event.preventDefault(); useToken(); });
window.addEventListener("resize", safely(async () => {
  if (model.tab === "retries") await renderRetries();
  if (model.tab === "verdict") await renderVerdict();
}));

updateFilters();
showTab("requests");
tick();
