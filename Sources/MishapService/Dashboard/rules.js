"use strict";
// The Rules tab: endpoints and rules with their source and hits, runtime rules, warnings.

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
