// The stacks list: GET /v1/<project>/stacks (with show_nested when asked), refreshed
// every few seconds (sooner while a stack is IN_PROGRESS), nested stacks under their
// parents, filtered by status on the server and searched here.
import { api, badge, base, el, formatTime, signedIn, session, showMessage, showWho } from "./common.js";

await signedIn();
showWho();

const body = document.querySelector("#stacks tbody");
const search = document.getElementById("search");
const status = document.getElementById("status");
const nested = document.getElementById("nested");
const live = document.getElementById("live");
const collapsed = new Set();
let stacks = [];
let timer = null;

// Filters live in the URL, so a filtered list can be bookmarked and reloaded.
const params = new URLSearchParams(location.search);
search.value = params.get("search") || "";
status.value = params.get("status") || "";
nested.checked = params.get("nested") === "1";

function remember() {
  const next = new URLSearchParams();
  if (search.value) next.set("search", search.value);
  if (status.value) next.set("status", status.value);
  if (nested.checked) next.set("nested", "1");
  history.replaceState(null, "", `${location.pathname}${next.toString() ? `?${next}` : ""}`);
}

function matches(stack, words) {
  const text = `${stack.stack_name} ${stack.stack_status} ${stack.id} ${stack.description || ""}`.toLowerCase();
  return words.every((word) => text.includes(word));
}

function row(stack, depth, children) {
  const href = `${base}/stacks/${encodeURIComponent(stack.stack_name)}/${encodeURIComponent(stack.id)}`;
  const name = el("td", { class: "name" });
  name.style.paddingLeft = `${0.5 + depth * 1.25}rem`;
  if (children.length) {
    const open = !collapsed.has(stack.id);
    name.append(
      el(
        "button",
        {
          type: "button",
          class: "toggle",
          "aria-expanded": String(open),
          "aria-label": `${open ? "Hide" : "Show"} the ${children.length} nested stacks of ${stack.stack_name}`,
          onclick: () => {
            if (open) collapsed.add(stack.id);
            else collapsed.delete(stack.id);
            render();
          },
        },
        open ? "▾" : "▸",
      ),
    );
  }
  name.append(el("a", { href }, stack.stack_name));
  return el(
    "tr",
    { "data-stack-id": stack.id, class: depth ? "nested" : null },
    name,
    el("td", {}, badge(stack.stack_status), stack.stack_status_reason && stack.stack_status.endsWith("_FAILED") ? el("div", { class: "reason" }, stack.stack_status_reason) : null),
    el("td", { class: "mono" }, stack.project || session().project_id),
    el("td", {}, formatTime(stack.creation_time)),
    el("td", {}, formatTime(stack.updated_time)),
    el("td", { class: "description" }, stack.description || ""),
  );
}

function render() {
  const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  const byId = new Map(stacks.map((stack) => [stack.id, stack]));
  const children = new Map();
  const roots = [];
  for (const stack of stacks) {
    if (stack.parent && byId.has(stack.parent)) {
      if (!children.has(stack.parent)) children.set(stack.parent, []);
      children.get(stack.parent).push(stack);
    } else roots.push(stack);
  }
  // A stack shows when it or anything under it matches the search.
  const shown = new Map();
  const visit = (stack) => {
    let any = matches(stack, words);
    for (const child of children.get(stack.id) || []) any = visit(child) || any;
    shown.set(stack.id, any);
    return any;
  };
  roots.forEach(visit);
  const rows = [];
  const add = (stack, depth) => {
    if (!shown.get(stack.id)) return;
    const under = children.get(stack.id) || [];
    rows.push(row(stack, depth, under));
    if (!collapsed.has(stack.id) || words.length) for (const child of under) add(child, depth + 1);
  };
  roots.forEach((stack) => add(stack, 0));
  if (!rows.length) {
    rows.push(el("tr", {}, el("td", { colspan: "6", class: "empty" }, stacks.length ? "No stack matches the search." : "No stacks in this project yet.")));
  }
  body.replaceChildren(...rows);
}

async function refresh() {
  clearTimeout(timer);
  const query = new URLSearchParams();
  if (status.value) query.set("status", status.value);
  if (nested.checked) query.set("show_nested", "True");
  let busy = false;
  try {
    const answer = await api(`stacks${query.toString() ? `?${query}` : ""}`);
    stacks = answer.stacks;
    busy = stacks.some((stack) => stack.stack_status.endsWith("_IN_PROGRESS"));
    showMessage("");
    render();
    live.textContent = `Live: updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    showMessage(`The stacks could not be read: ${error.message}`);
  }
  // A tab in the background asks nothing; it refreshes when it is shown again.
  if (!document.hidden) timer = setTimeout(refresh, busy ? 1500 : 4000);
}
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) refresh();
});

search.addEventListener("input", () => {
  remember();
  render();
});
for (const control of [status, nested]) {
  control.addEventListener("change", () => {
    remember();
    refresh();
  });
}
document.getElementById("filters").addEventListener("submit", (event) => event.preventDefault());
// "/" focuses the search, as in many web apps.
document.addEventListener("keydown", (event) => {
  if (event.key === "/" && document.activeElement.tagName !== "INPUT") {
    event.preventDefault();
    search.focus();
  }
});
refresh();
