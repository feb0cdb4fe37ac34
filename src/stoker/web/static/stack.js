// A stack's page: its summary, and tabs for the topology graph, the event timeline, the
// resources (each with its declared properties, attributes and physical id), outputs,
// template, environment, files and the hooks waiting. The event stream drives it live:
// each event recolours its node at once, and the resources are read again (at most
// every two seconds) so that new resources, dependencies and physical ids show. The
// stream starts with the stack's recorded events: those the first read of the resources
// already shows change nothing (a stack of a thousand resources is not read again for
// them). What a hidden tab shows (the resources table, the outputs, the timeline) is
// built when the tab is opened, so the first paint is the topology's alone.
import { ApiError, api, badge, base, el, formatTime, linkPath, pretty, projectPath, readStream, signedIn, showMessage, showWho } from "./common.js";
import { Changes } from "./changes.js";
import { Topology, findNode } from "./graph.js";
import { Hooks, Timeline, eventKey } from "./timeline.js";

await signedIn();
showWho();

const { stackName, stackId } = document.body.dataset;
const stackUrl = projectPath(`/stacks/${encodeURIComponent(stackName)}/${encodeURIComponent(stackId)}`);
const panel = (name) => document.getElementById(`panel-${name}`);
const tabs = [...document.querySelectorAll('[role="tab"]')];
const loaded = new Set();
const expanded = new Set();
const templates = new Map();
let root = { nodes: [], edges: [] };
let shape = "";
let stack = null;
let parentAsked = false;

// --- tabs (arrow keys move between them; the URL's #fragment names the open one)
function select(name, focus = false) {
  for (const tab of tabs) {
    const chosen = tab.id === `tab-${name}`;
    tab.setAttribute("aria-selected", String(chosen));
    tab.tabIndex = chosen ? 0 : -1;
    panel(tab.id.slice(4)).hidden = !chosen;
    if (chosen && focus) tab.focus();
  }
  if (location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`);
  show(name);
  if (name === "resources" && tableStale) table();
  if (name === "events") timeline.show();
}
tabs.forEach((tab, index) => {
  tab.addEventListener("click", () => select(tab.id.slice(4)));
  tab.addEventListener("keydown", (event) => {
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 };
    if (event.key in moves) {
      event.preventDefault();
      select(tabs[(moves[event.key] + tabs.length) % tabs.length].id.slice(4), true);
    }
  });
});

function show(name) {
  if (loaded.has(name)) return;
  loaded.add(name);
  if (name === "template") text("template", "template");
  if (name === "environment") text("environment", "environment");
  if (name === "files") files();
  if (name === "outputs") outputs();
  if (name === "topology" && topology.picture) topology.zoom("fit");
  if (name === "drift") changes.showDrift();
}

// --- the summary
// Reads overlap (each stack event asks for one): only the last one asked is shown, or an
// earlier answer arriving last would leave the page on a state the stack has left.
let summaryAsked = 0;
let summaryAgain;
const SUMMARY_AGAIN_MS = 3000;
async function summary() {
  const asked = ++summaryAsked;
  let read;
  try {
    // Without the outputs: resolving them loads the whole stack; the Outputs tab asks for them.
    read = (await api(`${stackUrl}?resolve_outputs=false`)).stack;
    if (asked !== summaryAsked) return;
    stack = read;
  } catch (error) {
    if (asked !== summaryAsked) return;
    showMessage(error.status === 404 ? "This stack does not exist (or is not in your project)." : `The stack could not be read: ${error.message}`);
    return;
  }
  const facts = [
    el("div", {}, badge(stack.stack_status), " ", el("span", { class: "reason", id: "stack-reason" }, stack.stack_status_reason || "")),
    el("div", { class: "facts" }, `Created ${formatTime(stack.creation_time)}`, stack.updated_time ? ` · updated ${formatTime(stack.updated_time)}` : "", ` · id ${stack.id}`),
  ];
  if (stack.description) facts.push(el("p", { class: "description" }, stack.description));
  const parameters = Object.entries(stack.parameters || {}).filter(([key]) => !key.startsWith("OS::"));
  if (parameters.length) {
    facts.push(el("details", { class: "parameters" }, el("summary", {}, `Parameters (${parameters.length})`), el("dl", {}, parameters.map(([key, value]) => [el("dt", {}, key), el("dd", { class: "mono" }, String(value))]))));
  }
  document.getElementById("summary").replaceChildren(...facts);
  // While an action runs, the summary is read again every few seconds too: an event the
  // stream missed (a reconnect) must not leave the page on IN_PROGRESS.
  clearTimeout(summaryAgain);
  if (/_IN_PROGRESS$/.test(stack.stack_status || "")) summaryAgain = setTimeout(summary, SUMMARY_AGAIN_MS);
  if (stack.parent && !parentAsked) {
    // Set before the read, so summaries read meanwhile do not add a second link.
    parentAsked = true;
    parentLink(stack.parent);
  }
  if (loaded.has("outputs")) outputs();
}

async function parentLink(parentId) {
  try {
    const parent = (await api(projectPath(`/stacks/${encodeURIComponent(parentId)}`))).stack;
    document.getElementById("crumbs").append(" / ", el("a", { id: "parent-link", href: `${base}/stacks/${encodeURIComponent(parent.stack_name)}/${parent.id}` }, parent.stack_name));
  } catch {
    // The parent is out of reach (deleted): the page works without the link.
  }
}

async function outputs() {
  let items;
  try {
    items = (await api(stackUrl)).stack.outputs || [];
  } catch (error) {
    panel("outputs").replaceChildren(el("p", { class: "error" }, error.message));
    return;
  }
  if (!items.length) {
    panel("outputs").replaceChildren(el("p", { class: "empty" }, "This stack has no outputs."));
    return;
  }
  panel("outputs").replaceChildren(
    el(
      "dl",
      { class: "outputs" },
      items.map((output) => [
        el("dt", {}, output.output_key, output.description ? el("span", { class: "hint" }, ` ${output.description}`) : null),
        el("dd", {}, output.output_error ? el("div", { class: "error" }, output.output_error) : el("pre", {}, pretty(output.output_value ?? ""))),
      ]),
    ),
  );
}

async function text(name, path) {
  panel(name).replaceChildren(el("p", {}, "Loading…"));
  try {
    const body = await api(`${stackUrl}/${path}`);
    panel(name).replaceChildren(el("pre", { class: "source", id: `${name}-text` }, pretty(body)));
  } catch (error) {
    panel(name).replaceChildren(el("p", { class: "error" }, error.message));
  }
}

async function files() {
  try {
    const found = Object.entries((await api(`${stackUrl}/files`)) || {});
    panel("files").replaceChildren(
      found.length ? el("div", {}, found.map(([name, content]) => el("details", { class: "file" }, el("summary", {}, name), el("pre", { class: "source" }, content)))) : el("p", { class: "empty" }, "This stack has no files."),
    );
  } catch (error) {
    panel("files").replaceChildren(el("p", { class: "error" }, error.message));
  }
}

// --- resources: the graph's nodes, the resources table and the detail of one
async function level(path, prefix) {
  const items = (await api(`${path}/resources`)).resources;
  const nodes = items.map((item) => ({
    key: prefix + item.resource_name,
    name: item.resource_name,
    type: item.resource_type,
    status: item.resource_status,
    reason: item.resource_status_reason,
    physical: item.physical_resource_id,
    updated: item.updated_time,
    created: item.creation_time,
    stack: path,
    nested: linkPath(item, "nested"),
    expandable: Boolean(linkPath(item, "nested")),
    expanded: expanded.has(prefix + item.resource_name),
    children: null,
  }));
  const edges = items.flatMap((item) => item.required_by.map((dependent) => [prefix + item.resource_name, prefix + dependent]));
  for (const node of nodes) {
    if (node.expanded && node.nested) node.children = await level(node.nested, `${node.key}.`);
  }
  return { nodes, edges };
}

function flatten(current, out = []) {
  for (const node of current.nodes) {
    out.push(node);
    if (node.children) flatten(node.children, out);
  }
  return out;
}

function shapeOf(current) {
  return flatten(current).map((node) => `${node.key}${node.expanded ? "+" : ""}`).join("|") + JSON.stringify(current.edges) + flatten(current).map((node) => (node.children ? JSON.stringify(node.children.edges) : "")).join("");
}

let reading = null;
let again = false;
async function resources() {
  if (reading) {
    again = true;
    return reading;
  }
  reading = (async () => {
    try {
      const next = await level(stackUrl, "");
      const nextShape = shapeOf(next);
      root = next;
      if (nextShape !== shape) {
        shape = nextShape;
        topology.draw(root, !panel("topology").hidden);
      } else {
        for (const node of flatten(root)) topology.setStatus(node.key, node.status, node.reason);
      }
      if (panel("resources").hidden) tableStale = true;
      else table();
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) showMessage(`The resources could not be read: ${error.message}`);
    }
  })();
  await reading;
  reading = null;
  if (again) {
    again = false;
    setTimeout(resources, 0);
  }
}

let pendingRead = null;
// The first read counts: events recorded before it need no second read two seconds on.
let lastRead = Date.now();
function resourcesSoon() {
  if (pendingRead) return;
  const wait = Math.max(0, 2000 - (Date.now() - lastRead));
  pendingRead = setTimeout(() => {
    pendingRead = null;
    lastRead = Date.now();
    resources();
    summary();
  }, wait);
}

// Whether the resources changed since the table (in a hidden tab) was built.
let tableStale = false;
function table() {
  tableStale = false;
  const rows = flatten(root).map((node) =>
    el(
      "tr",
      { "data-key": node.key, tabindex: "0", class: "clickable", onclick: () => detail(node), onkeydown: (event) => event.key === "Enter" && detail(node) },
      el("td", { class: "path" }, node.key),
      el("td", {}, node.type),
      el("td", {}, badge(node.status), node.status && node.status.endsWith("_FAILED") && node.reason ? el("div", { class: "reason" }, node.reason) : null),
      el("td", { class: "mono" }, node.physical || ""),
      el("td", {}, formatTime(node.updated)),
    ),
  );
  document.querySelector("#resources-table tbody").replaceChildren(...rows);
}

async function declaredProperties(node) {
  if (!templates.has(node.stack)) templates.set(node.stack, api(`${node.stack}/template`).catch(() => ({})));
  const template = await templates.get(node.stack);
  const definitions = template.resources || template.Resources || {};
  const definition = definitions[node.name] || {};
  return definition.properties || definition.Properties || {};
}

async function detail(node) {
  const box = document.getElementById("detail");
  box.hidden = false;
  box.replaceChildren(el("h2", { tabindex: "-1", id: "detail-title" }, node.key), el("p", {}, "Loading…"));
  document.getElementById("detail-title").focus();
  try {
    const [resource, properties] = await Promise.all([api(`${node.stack}/resources/${encodeURIComponent(node.name)}`).then((body) => body.resource), declaredProperties(node)]);
    const nestedPage = node.nested ? node.nested.match(/\/stacks\/([^/]+)\/([^/]+)$/) : null;
    box.replaceChildren(
      el("h2", { tabindex: "-1", id: "detail-title" }, node.key),
      el("button", { type: "button", class: "link close", onclick: () => (box.hidden = true) }, "Close"),
      el(
        "dl",
        { class: "facts-list" },
        el("dt", {}, "Type"),
        el("dd", {}, resource.resource_type),
        el("dt", {}, "Status"),
        el("dd", {}, badge(resource.resource_status), " ", resource.resource_status_reason || ""),
        el("dt", {}, "Physical id"),
        el("dd", { class: "mono", id: "detail-physical" }, resource.physical_resource_id || "-"),
        resource.description ? [el("dt", {}, "Description"), el("dd", {}, resource.description)] : null,
        nestedPage ? [el("dt", {}, "Nested stack"), el("dd", {}, el("a", { href: `${base}/stacks/${nestedPage[1]}/${nestedPage[2]}` }, decodeURIComponent(nestedPage[1])))] : null,
      ),
      el("h3", {}, "Properties (as declared in the template)"),
      el("pre", { class: "source", id: "detail-properties" }, pretty(properties)),
      el("h3", {}, "Attributes"),
      el("pre", { class: "source", id: "detail-attributes" }, pretty(resource.attributes || {})),
    );
    // Focus follows to the detail (keyboard users land on what they asked for).
    document.getElementById("detail-title").focus();
  } catch (error) {
    box.replaceChildren(el("h2", {}, node.key), el("p", { class: "error" }, error.message));
  }
}

// --- the layout of the topology and resources panels
const graphBox = el("div", { class: "graph", id: "graph" });
const zoom = (factor, label, id) => el("button", { type: "button", id, onclick: () => topology.zoom(factor) }, label);
panel("topology").replaceChildren(
  el("div", { class: "toolbar" }, zoom("fit", "Fit", "zoom-fit"), zoom(1.25, "Zoom in", "zoom-in"), zoom(0.8, "Zoom out", "zoom-out"), el("span", { class: "hint" }, "Enter on a resource shows it; + expands a nested stack or group in place.")),
  graphBox,
);
panel("resources").replaceChildren(
  el(
    "div",
    { class: "table-wrap" },
    el("table", { id: "resources-table" }, el("thead", {}, el("tr", {}, ["Resource", "Type", "Status", "Physical id", "Updated"].map((name) => el("th", { scope: "col" }, name)))), el("tbody")),
  ),
);
const detailBox = el("aside", { id: "detail", class: "detail", hidden: true, "aria-label": "Resource" });
document.getElementById("main").append(detailBox);
const topology = new Topology(graphBox, {
  onSelect: detail,
  onToggle: (node) => {
    if (expanded.has(node.key)) expanded.delete(node.key);
    else expanded.add(node.key);
    resources().then(() => topology.focus(node.key));
  },
});

// --- changes with a plan first, and drift
const changes = new Changes(document.getElementById("actions"), panel("drift"), {
  stackUrl,
  stack: () => stack,
  resources: () => flatten(root),
  onDone: () => {
    summary();
    resources();
  },
});

// --- live: the event stream
const timeline = new Timeline(panel("events"));
const hooks = new Hooks(panel("hooks"), document.getElementById("tab-hooks"), () => {});
let lastEventId = null;
const live = el("span", { class: "live", id: "live" });
document.getElementById("summary").after(live);

// Events that came before the first read of the resources, seen once it is done.
let earlyEvents = [];
// An event the page shows already: the status its node (or the summary, for the stack's
// own) has, one older than the last change, or the start of the action shown ended
// (times are in whole seconds: a resource created in one second has both events in it).
function shown(node, event) {
  const status = event.resource_status || "";
  if (status === node.status) return true;
  const changed = Date.parse(node.updated || node.created || "");
  const at = Date.parse(event.event_time || "");
  if (Number.isNaN(changed) || Number.isNaN(at) || at > changed) return false;
  if (at < changed) return true;
  const action = status.replace(/_IN_PROGRESS$/, "");
  return action !== status && (node.status === `${action}_COMPLETE` || node.status === `${action}_FAILED`);
}

function see(event) {
  const node = findNode(root, eventKey(event));
  if (node) {
    if (shown(node, event)) return;
    topology.setStatus(node.key, event.resource_status, event.resource_status_reason);
  } else if (event.stack_path && !expanded.has(event.stack_path)) {
    return; // a nested stack the page does not draw
  } else if (!event.stack_path && event.resource_name === stackName) {
    // The stack's own event: its summary may have changed, its resources not.
    if (!stack || !shown({ status: stack.stack_status, updated: stack.updated_time, created: stack.creation_time }, event)) summary();
    return;
  }
  resourcesSoon();
}

async function follow() {
  for (;;) {
    try {
      live.textContent = "Live";
      let ended = false;
      await readStream(`${stackUrl}/events/stream`, {
        lastEventId,
        onMessage: (message) => {
          if (message.event === "event") {
            lastEventId = message.id;
            const event = JSON.parse(message.data);
            timeline.add(event);
            hooks.see(event);
            if (firstRead) earlyEvents.push(event);
            else see(event);
          } else if (message.event === "stack") {
            ended = true;
            summary();
          }
        },
      });
      if (ended) {
        live.textContent = "The stack was deleted: no more events.";
        return;
      }
    } catch (error) {
      if (error instanceof ApiError && error.status < 500 && error.status !== 429) {
        live.textContent = `Not live: ${error.message}`;
        return;
      }
    }
    live.textContent = "Reconnecting…";
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

const first = (location.hash || "#topology").slice(1);
select(tabs.some((tab) => tab.id === `tab-${first}`) ? first : "topology");
summary();
// The stream opens once the resources are drawn: its first messages replay the stack's
// recorded events, which would otherwise compete with that read for the server.
let firstRead = resources().then(() => {
  firstRead = null;
  for (const event of earlyEvents.splice(0)) see(event);
  follow();
});
