// The audit web page (docs/audit.md, "The web page"): reads the audit API only — GET events (JSON, or CSV
// with format=csv), GET explain/{id} and GET report — relative to the page, so it works wherever the API
// serves it. The delivery report's charts are drawn by uPlot (window.uPlot, from uplot.js beside this).
// Every text from the platform or the store goes in as text (textContent, text nodes), never as markup.

const ID_FILTERS = ["organization", "project", "environment", "service", "cluster", "webhook"];
const FILTERS = [...ID_FILTERS, "kind", "status", "transition", "severity", "actor", "commit", "type"];
const QUERY = [...FILTERS, "since", "from", "to", "limit"];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** CSV export: pages of the API's maximum, at most this many (50,000 rows). */
const EXPORT_PAGE = 1000;
const EXPORT_PAGES = 50;
/** Incident timeline: how many alerts on the subject it looks through, and how many explains at once. */
const INCIDENT_CANDIDATES = 1000;
const EXPLAIN_CONCURRENCY = 4;

const $ = (selector) => document.querySelector(selector);
const form = $("#filters");

/** An element with text children: strings become text nodes, so nothing here is ever parsed as HTML. */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

const apiUrl = (path, params) => {
  const url = new URL(path, document.baseURI);
  if (params) url.search = params.toString();
  return url;
};

class ApiError extends Error {
  constructor(message, field) {
    super(message);
    this.field = field;
  }
}

async function getJson(path, params) {
  const res = await fetch(apiUrl(path, params), { headers: { accept: "application/json" } });
  const body = await res.json().catch(() => ({}));
  if (res.status === 404 && path.startsWith("explain/")) return undefined;
  if (!res.ok) throw new ApiError(body.error ?? `the audit API answered ${res.status}`, body.field);
  return body;
}

const explain = (id) => getJson(`explain/${encodeURIComponent(id)}`);

// ---- names for ids ------------------------------------------------------------------------------------

/** Names seen in the rows, per filter: the API takes ids only, so a known name is turned into its id here. */
const names = Object.fromEntries([...ID_FILTERS, "actor"].map((f) => [f, new Map()]));

function learnNames(rows) {
  for (const r of rows) {
    if (r.organization) names.organization.set(r.organization, r.organization);
    for (const f of ["project", "environment", "service", "cluster", "webhook"]) if (r[f]?.id) names[f].set(r[f].name ?? r[f].id, r[f].id);
    if (r.actor) names.actor.set(r.actor, r.actor);
  }
  const lists = $("#datalists");
  lists.replaceChildren(
    ...Object.entries(names).map(([f, known]) =>
      el("datalist", { id: `names-${f}` }, [...known].map(([name, id]) => {
        const option = el("option", { value: id });
        if (name !== id) option.label = name;
        return option;
      })),
    ),
  );
}

function idFor(filter, value) {
  if (!ID_FILTERS.includes(filter) || UUID.test(value)) return value;
  const lower = value.toLowerCase();
  for (const [name, id] of names[filter]) if (name.toLowerCase() === lower) return id;
  return value; // the API says what is wrong with it
}

// ---- the query ------------------------------------------------------------------------------------------

/** The form as query parameters (empty fields left out, known names turned into ids). */
function formQuery() {
  const q = new URLSearchParams();
  for (const name of QUERY) {
    const v = form.elements[name]?.value.trim();
    if (v) q.set(name, idFor(name, v));
  }
  return q;
}

function fillForm(q) {
  for (const name of QUERY) {
    const field = form.elements[name];
    if (!field) continue;
    const v = q.get(name);
    if (v !== null) field.value = v;
    else if (field.tagName === "SELECT") field.selectedIndex = 0;
    else field.value = field.defaultValue;
  }
}

const state = { query: new URLSearchParams(), cursors: [undefined], page: 0, next: undefined, shown: 0 };

function setStatus(text, kind = "") {
  const s = $("#status");
  s.textContent = text;
  s.className = kind;
}

function showError(err) {
  for (const f of form.querySelectorAll("[aria-invalid]")) f.removeAttribute("aria-invalid");
  if (err instanceof ApiError && err.field && form.elements[err.field]) form.elements[err.field].setAttribute("aria-invalid", "true");
  setStatus(err.message, "error");
}

async function show(query, page = 0) {
  state.query = query;
  state.page = page;
  history.replaceState(null, "", `${location.pathname}${query.size ? `?${query}` : ""}`);
  const params = new URLSearchParams(query);
  const cursor = state.cursors[page];
  if (cursor) params.set("cursor", cursor);
  setStatus("reading…", "busy");
  // Only the newest request shows: an answer that comes after a newer filter was asked for is dropped.
  const asked = ++state.shown;
  try {
    const body = await getJson("events", params);
    if (asked !== state.shown) return;
    for (const f of form.querySelectorAll("[aria-invalid]")) f.removeAttribute("aria-invalid");
    learnNames(body.events);
    renderRows(body.events);
    state.next = body.next_cursor;
    $("#newer").disabled = page === 0;
    $("#older").disabled = !state.next;
    $("#page-label").textContent = `page ${page + 1}`;
    setStatus(body.events.length ? `${body.count} row${body.count === 1 ? "" : "s"}${state.next ? ", more on older pages" : ""}` : "nothing matches");
  } catch (err) {
    if (asked === state.shown) showError(err);
  }
}

// ---- rows ---------------------------------------------------------------------------------------------

const nameOf = (ref) => (ref ? (ref.name ?? ref.id) : undefined);

/** Who was told, in a few words (as the TOLD column of `lookout audit`). */
function toldOf(row) {
  if (row.type !== "alert") return "";
  if (row.state === "suppressed") return `nobody (${row.suppression?.reason ?? "suppressed"})`;
  if (!row.deliveries) return "";
  if (!row.deliveries.length) return "nobody (no receiver)";
  // As lib/audit/output-formats.ts words it: an onlooker (a preview) only showed it, and told nobody.
  const word = (d) => (d.reason === "mute" ? "muted" : d.state === "sent" && d.digest_id ? "sent (digest)" : d.state);
  const shown = (d) => `${d.state === "sent" ? "shown" : word(d)} (preview; nobody told)`;
  return row.deliveries.map((d) => `${d.receiver} ${d.onlooker ? shown(d) : word(d)}`).join("; ");
}

function whereOf(row) {
  const thing = nameOf(row.service) ?? (row.cluster ? `cluster ${nameOf(row.cluster)}` : undefined) ?? (row.webhook ? `webhook ${nameOf(row.webhook)}` : undefined);
  const env = nameOf(row.environment);
  return [thing, env ? `(${env})` : undefined].filter(Boolean).join(" ");
}

const whatOf = (row) => [row.transition, row.status, row.stage ? `quarantined at ${row.stage}` : undefined].filter(Boolean).join(" ");
const timeOf = (iso) => (iso ?? "").replace("T", " ").slice(0, 19);

/**
 * An id as one code element, whole in its title: each part of an execution id (`<service id>:<execution
 * id>`) on a line of its own when the cell is narrow, never broken inside a part.
 */
function idCode(id) {
  const parts = id.split(/(?<=:)/);
  return el("code", { class: "id", title: id }, parts.flatMap((p, i) => [i ? el("wbr") : null, el("span", {}, p)]));
}

function renderRows(rows) {
  const body = $("#rows tbody");
  body.replaceChildren(
    ...rows.map((r) =>
      el("tr", { class: `row ${r.type}${r.severity ? ` sev-${r.severity}` : ""}`, "data-id": r.id },
        el("td", { class: "row-actions" },
          el("button", { type: "button", class: "explain", onclick: () => showExplanation(r.id) }, r.type === "alert" ? "who was told" : "explain"),
          r.type === "alert" ? el("button", { type: "button", class: "incident", onclick: () => showIncident(r) }, "incident") : null,
        ),
        el("td", { class: "time" }, timeOf(r.at)),
        el("td", {}, r.type),
        el("td", {}, r.kind),
        el("td", { class: "what" }, whatOf(r)),
        el("td", { class: "where" }, whereOf(r)),
        el("td", { class: "who" }, r.actor ?? ""),
        el("td", { class: "told" }, toldOf(r)),
        el("td", { class: "id" }, idCode(r.id)),
        el("td", { class: "summary" }, r.summary),
      ),
    ),
  );
}

// ---- the side panel: explanations and incidents --------------------------------------------------------

function openPanel(title, ...content) {
  $("#panel-title").textContent = title;
  $("#panel-body").replaceChildren(...content);
  $("#panel").hidden = false;
}

const json = (value) => el("pre", {}, JSON.stringify(value, null, 2));

function subjectBlock(e) {
  const s = e.subject;
  if (s?.type === "record") {
    return el("div", { class: "subject" },
      el("p", {}, `${s.kind.replace("_", " ")} `, el("code", {}, s.id), `: occurred ${s.occurred_at}, read ${s.observed_at}`),
      el("details", {}, el("summary", {}, "as read (redacted)"), json(s.record)));
  }
  if (s?.type === "execution") {
    return el("div", { class: "subject" },
      el("p", {}, `deployment execution ${s.execution_id} of service ${s.service_id}: now ${s.status}`),
      el("ol", { class: "history" }, s.history.map((h) => el("li", {}, `${h.observed_at}  ${h.status}`))),
      el("details", {}, el("summary", {}, "latest read (redacted)"), json(s.observation)));
  }
  if (!e.quarantined?.length) return el("p", {}, "the record or execution that raised it is no longer stored (or it is Lookout's own health)");
  return null;
}

function whyOf(d) {
  const parts = [];
  if (d.suppression) {
    const m = d.suppression.mute;
    parts.push(`${d.suppression.reason}: ${d.suppression.detail}`);
    if (m) parts.push(`mute ${m.id} by ${m.created_by} until ${m.until}${m.reason ? `: ${m.reason}` : ""}${m.lifted_at ? ` (lifted ${m.lifted_at})` : ""}`);
  }
  if (d.error) parts.push(d.error);
  if (d.permanent) parts.push("not retried: retrying cannot fix this failure");
  if (d.digest) parts.push(`in digest ${d.digest.id}${d.digest.state ? `: ${d.digest.state}` : ""}`);
  if (d.health_id) parts.push(`raised health event ${d.health_id}`);
  return parts.join("; ");
}

function alertBlock(a, asked) {
  return el("article", { class: `alert${a.id === asked ? " asked" : ""}`, "data-alert": a.id },
    el("h3", {}, "alert ", el("code", {}, a.id), `: ${a.transition} (${a.severity})${a.status ? ` ${a.status}` : ""}`),
    el("p", { class: "summary" }, a.summary),
    el("p", { class: "times" }, `occurred ${a.occurred_at}, raised ${a.raised_at}`),
    a.incident_id && a.incident_id !== a.id ? el("p", {}, "incident opened by alert ", el("code", {}, a.incident_id)) : null,
    el("p", {}, a.published ? "published to the bus" : `not published: ${a.suppression?.reason} — ${a.suppression?.detail}`),
    a.deliveries.length
      ? el("table", { class: "deliveries" },
          el("thead", {}, el("tr", {}, ["route", "receiver", "state", "attempts", "when", "why"].map((h) => el("th", {}, h)))),
          el("tbody", {}, a.deliveries.map((d) =>
            el("tr", { class: `delivery ${d.state}` },
              el("td", {}, d.route), el("td", {}, d.receiver), el("td", {}, d.state), el("td", {}, String(d.attempts)),
              el("td", {}, d.updated_at), el("td", {}, whyOf(d))))))
      : null,
    (a.actions ?? []).length
      ? el("ul", { class: "actions" }, a.actions.map((x) =>
          el("li", { class: `action ${x.kind}` }, actionText(x))))
      : null,
    el("p", { class: "verdict" }, `→ ${a.verdict}`),
  );
}

/** What a button on the alert's message did (docs/actions.md); the same words as `lookout explain` (lib/audit/output-formats.ts). */
const ACTION_WORDS = { acknowledge: "Acknowledged", mute_1h: "Muted for an hour", mute_until_resolved: "Muted until resolved" };
const BUTTON_WORDS = { acknowledge: "Acknowledge", mute_1h: "Mute 1h", mute_until_resolved: "Mute until resolved" };

function actionText(x) {
  const who = `${x.by.name || x.by.id} (Slack ${x.by.id})`;
  if (x.outcome && x.outcome !== "acknowledged" && x.outcome !== "muted") return `${who} pressed ${BUTTON_WORDS[x.kind] ?? x.kind} at ${x.at} — nothing done: ${x.outcome.replace(/_/g, " ")}`;
  return `${ACTION_WORDS[x.kind] ?? x.kind} by ${who} at ${x.at}`;
}

async function showExplanation(id) {
  openPanel(`Who was told and why not: ${id}`, el("p", {}, "reading…"));
  try {
    const e = await explain(id);
    if (!e) return openPanel(`Not found: ${id}`, el("p", {}, `no record, alert or execution ${id}`));
    const quarantined = (e.quarantined ?? []).map((q) =>
      el("div", { class: "quarantine" },
        el("p", {}, `${q.kind.replace("_", " ")} quarantined ${q.quarantined_at} at ${q.stage} (from ${q.source}): ${q.reason}`),
        el("pre", {}, q.excerpt)));
    openPanel(`Who was told and why not: ${id}`,
      subjectBlock(e) ?? "",
      ...quarantined,
      e.alerts.length ? "" : el("p", {}, "no alert raised: nothing in it was a failure Lookout alerts on (or it came before the service failed)"),
      ...e.alerts.map((a) => alertBlock(a, e.id)));
  } catch (err) {
    openPanel(`Could not explain ${id}`, el("p", { class: "error" }, err.message));
  }
}

/** The filter that finds the alerts of the same thing as `row`: incidents are per service, webhook or cluster. */
function subjectFilter(row) {
  if (row.cluster) return ["cluster", row.cluster.id];
  if (row.webhook) return ["webhook", row.webhook.id];
  if (row.service) return ["service", row.service.id];
  return ["kind", row.kind];
}

async function mapLimited(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * The alerts of `row`'s incident in time order. Rows do not carry the incident and the API has no
 * incident filter; explanations do carry each alert's incident_id. So: the alerts on the same service,
 * webhook or cluster from the incident's first alert on, each explained (one explanation covers every
 * alert its execution or record raised), keeping those of the same incident.
 */
async function showIncident(row) {
  openPanel(`Incident of alert ${row.id}`, el("p", {}, "reading…"));
  try {
    const known = new Map();
    const remember = (e) => e?.alerts.forEach((a) => known.set(a.id, a));
    remember(await explain(row.id));
    const incidentId = known.get(row.id)?.incident_id;
    if (!incidentId) return openPanel(`Incident of alert ${row.id}`, el("p", {}, "this alert is not part of an incident (only failures and what follows them are)"), alertBlock(known.get(row.id) ?? { ...row, deliveries: [], verdict: toldOf(row) }, row.id));
    if (!known.has(incidentId)) remember(await explain(incidentId));
    const opening = known.get(incidentId);
    const q = new URLSearchParams({ type: "alert", limit: "200" });
    const [filter, value] = subjectFilter(row);
    q.set(filter, value);
    const openedMs = Date.parse(opening?.occurred_at ?? row.at);
    // A second early: the row's time is the platform's, to the millisecond.
    if (Number.isFinite(openedMs)) q.set("from", new Date(Math.floor(openedMs / 1000) * 1000 - 1000).toISOString());
    const candidates = [];
    let cursor;
    do {
      if (cursor) q.set("cursor", cursor);
      const page = await getJson("events", q);
      candidates.push(...page.events);
      cursor = page.next_cursor;
    } while (cursor && candidates.length < INCIDENT_CANDIDATES);
    await mapLimited(candidates, EXPLAIN_CONCURRENCY, async (c) => {
      if (!known.has(c.id)) remember(await explain(c.id));
    });
    const members = [...known.values()]
      .filter((a) => a.incident_id === incidentId)
      .sort((a, b) => Date.parse(a.occurred_at) - Date.parse(b.occurred_at) || a.raised_at.localeCompare(b.raised_at));
    openPanel(`Incident opened by alert ${incidentId}`,
      el("p", { class: "hint" }, `${members.length} alert${members.length === 1 ? "" : "s"}, oldest first; ${candidates.length} alert${candidates.length === 1 ? "" : "s"} on this ${filter} since it opened looked through${cursor ? " (stopped there: more exist)" : ""}.`),
      el("ol", { class: "timeline" }, members.map((a) =>
        el("li", { "data-alert": a.id },
          el("span", { class: "time" }, timeOf(a.occurred_at)), " ",
          el("strong", {}, `${a.transition}`), ` (${a.severity})${a.status ? ` ${a.status}` : ""} `,
          el("span", { class: "summary" }, a.summary), " ",
          el("button", { type: "button", class: "explain", onclick: () => showExplanation(a.id) }, "who was told"),
          el("div", { class: "verdict" }, `→ ${a.verdict}`)))));
  } catch (err) {
    openPanel(`Incident of alert ${row.id}`, el("p", { class: "error" }, err.message));
  }
}

// ---- CSV ------------------------------------------------------------------------------------------------

/** The shown filter as CSV, every page: the API writes it (quoting, formula guard), this joins the pages. */
async function exportCsv() {
  const q = new URLSearchParams(state.query);
  q.set("format", "csv");
  q.set("limit", String(EXPORT_PAGE));
  q.delete("cursor");
  setStatus("exporting…", "busy");
  try {
    let text = "";
    let cursor;
    let pages = 0;
    do {
      if (cursor) q.set("cursor", cursor);
      const res = await fetch(apiUrl("events", q));
      if (!res.ok) {
        const body = await res.json().catch(() => ({}));
        throw new ApiError(body.error ?? `the audit API answered ${res.status}`, body.field);
      }
      const page = await res.text();
      // Each page starts with the header: keep the first one only.
      text += pages === 0 ? page : page.slice(page.indexOf("\r\n") + 2);
      cursor = res.headers.get("x-next-cursor") ?? undefined;
      pages++;
    } while (cursor && pages < EXPORT_PAGES);
    const link = el("a", { href: URL.createObjectURL(new Blob([text], { type: "text/csv" })), download: "lookout-audit.csv" });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    setStatus(cursor ? `saved lookout-audit.csv: the first ${EXPORT_PAGE * EXPORT_PAGES} rows (narrow the filter for the rest)` : "saved lookout-audit.csv");
  } catch (err) {
    showError(err);
  }
}

// ---- the delivery report (docs/report.md) ----------------------------------------------------------------

/** What the report takes of the filters: the time, the service and the environment. */
const REPORT_PARAMS = ["service", "environment", "since", "from", "to"];
const CHART = { width: 280, height: 130 };
const charts = [];

function reportQuery() {
  const q = formQuery();
  const r = new URLSearchParams();
  for (const name of REPORT_PARAMS) if (q.get(name)) r.set(name, q.get(name));
  return r;
}

/** Seconds for people: 2h 10m, 45m, 3d 4h, 30s. */
function human(sec) {
  if (sec === null || sec === undefined) return "—";
  const s = Math.round(sec);
  const [d, h, m, r] = [Math.floor(s / 86400), Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60];
  const pair = d ? [[d, "d"], [h, "h"]] : h ? [[h, "h"], [m, "m"]] : m ? [[m, "m"], [r, "s"]] : [[r, "s"]];
  return pair.filter(([n], i) => i === 0 || n).map(([n, u]) => `${n}${u}`).join(" ");
}

const percent = (rate) => (rate === null ? "—" : `${Math.round(rate * 1000) / 10} %`);
const epoch = (iso) => Date.parse(iso) / 1000;
const DAY_S = 86400;

/** A small uPlot chart of one figure over the period: its title, its value in words, and the chart (or why there is none). */
function figure(period, name, value, data, series, yLabel) {
  const box = el("div", { class: "figure", "data-figure": name }, el("h3", {}, name), el("p", { class: "value" }, value));
  if (!data[0].length) {
    box.append(el("p", { class: "empty" }, "nothing to draw in the period"));
    return box;
  }
  const chart = el("div", { class: "chart" });
  box.append(chart);
  charts.push(new uPlot({
    ...CHART,
    legend: { show: false },
    cursor: { show: false },
    // The whole period across, whatever the data: a single point is not a range.
    scales: { x: { time: true, range: () => [epoch(period.from), epoch(period.to)] }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.15 : 1] } },
    axes: [{ size: 30 }, { label: yLabel, size: 44, labelSize: 14 }],
    series: [{}, ...series],
  }, data, chart));
  return box;
}

const bars = (align) => uPlot.paths.bars({ size: [0.4, 24], align });
const points = (label, color) => ({ label, stroke: color, fill: color, paths: () => null, points: { show: true, size: 7, fill: color } });

function reportFigures(f, period) {
  const days = period.days;
  const daily = f.daily;
  const x = daily.map((d) => epoch(`${d.date}T00:00:00Z`) + DAY_S / 2);
  const df = f.deployment_frequency, lt = f.lead_time, cf = f.change_failure_rate, tr = f.time_to_restore;
  const leads = lt.executions;
  const restores = tr.incidents;
  return [
    figure(period, "Deployment frequency", `${df.per_week} a week (${df.deployments} in ${days} day${days === 1 ? "" : "s"})`,
      [x, daily.map((d) => d.deployed), daily.map((d) => d.failed)],
      [{ label: "deployed", fill: "#2da44e", stroke: "#2da44e", paths: bars(-1), points: { show: false } },
        { label: "failed", fill: "#cf222e", stroke: "#cf222e", paths: bars(1), points: { show: false } }], "a day"),
    figure(period, "Lead time for changes", lt.deployments ? `median ${human(lt.median_sec)}, p90 ${human(lt.p90_sec)} (${lt.deployments})` : "no commit time known",
      [leads.map((l) => epoch(l.deployed_at)), leads.map((l) => l.lead_time_sec / 3600)], [points("lead time", "#0969da")], "hours"),
    figure(period, "Change failure rate", `${percent(cf.rate)} (${cf.failed} of ${cf.deployments})`,
      [x, daily.map((d) => (d.deployed + d.failed ? (100 * d.failed) / (d.deployed + d.failed) : null))],
      [{ label: "failed %", stroke: "#cf222e", fill: "#cf222e", paths: bars(0), points: { show: false } }], "%"),
    figure(period, "Time to restore", tr.restored ? `median ${human(tr.median_sec)}, p90 ${human(tr.p90_sec)} (${tr.restored})${tr.open.length ? `; ${tr.open.length} open` : ""}` : `no incident closed${tr.open.length ? `; ${tr.open.length} open` : ""}`,
      [restores.map((r) => epoch(r.restored_at)), restores.map((r) => r.restore_sec / 60)], [points("restore", "#8250df")], "minutes"),
  ];
}

/** The ids behind a service's figures, to check them with explain. */
function behind(s) {
  const groups = [
    ["deployed", s.deployment_frequency.executions],
    ["failed", s.change_failure_rate.failed_executions],
    ["incidents", s.change_failure_rate.incidents],
    ["restored", s.time_to_restore.incidents.map((r) => r.id)],
    ["open", s.time_to_restore.open.map((o) => o.id)],
  ].filter(([, ids]) => ids.length);
  if (!groups.length) return "";
  return el("details", {}, el("summary", {}, "ids"), groups.map(([what, ids]) => el("div", {}, `${what}:`, ids.map((id) => el("code", {}, id)))));
}

function renderReport(report, query) {
  for (const c of charts.splice(0)) c.destroy();
  const { period } = report;
  $("#delivery-title").textContent = `Delivery, ${timeOf(period.from)} to ${timeOf(period.to)} UTC`;
  $("#delivery-csv").href = apiUrl("report", new URLSearchParams([...query, ["format", "csv"]])).href;
  $("#delivery-json").href = apiUrl("report", query).href;
  $("#delivery-figures").replaceChildren(...reportFigures(report.total, period));
  $("#delivery-services tbody").replaceChildren(...report.services.map((s) =>
    el("tr", { "data-service": s.service.id },
      el("td", { title: s.service.id }, nameOf(s.service)),
      el("td", {}, nameOf(s.environment) ?? ""),
      el("td", {}, `${s.deployment_frequency.deployments} (${s.deployment_frequency.per_week} a week)`),
      el("td", {}, human(s.lead_time.median_sec)),
      el("td", {}, `${percent(s.change_failure_rate.rate)} (${s.change_failure_rate.failed} of ${s.change_failure_rate.deployments})`),
      el("td", {}, human(s.time_to_restore.median_sec)),
      el("td", {}, String(s.time_to_restore.open.length)),
      el("td", {}, behind(s)))));
  $("#delivery").hidden = false;
}

async function showReport() {
  const query = reportQuery();
  setStatus("reading the delivery report…", "busy");
  try {
    const report = await getJson("report", query);
    for (const f of form.querySelectorAll("[aria-invalid]")) f.removeAttribute("aria-invalid");
    renderReport(report, query);
    const n = report.services.length;
    setStatus(n ? `delivery report: ${n} service${n === 1 ? "" : "s"}` : "delivery report: no deployment in the period");
  } catch (err) {
    showError(err);
  }
}

// ---- wiring ---------------------------------------------------------------------------------------------

form.addEventListener("submit", (e) => {
  e.preventDefault();
  state.cursors = [undefined];
  show(formQuery());
});
$("#reset").addEventListener("click", () => {
  fillForm(new URLSearchParams());
  state.cursors = [undefined];
  show(new URLSearchParams());
});
$("#export").addEventListener("click", exportCsv);
$("#report").addEventListener("click", showReport);
$("#delivery-close").addEventListener("click", () => {
  for (const c of charts.splice(0)) c.destroy();
  $("#delivery").hidden = true;
});
$("#older").addEventListener("click", () => {
  if (!state.next) return;
  state.cursors[state.page + 1] = state.next;
  show(state.query, state.page + 1);
});
$("#newer").addEventListener("click", () => {
  if (state.page > 0) show(state.query, state.page - 1);
});
$("#panel-close").addEventListener("click", () => {
  $("#panel").hidden = true;
});

const initial = new URLSearchParams(location.search);
fillForm(initial);
show(formQuery());
