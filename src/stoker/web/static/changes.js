// Changes to a stack with a plan first, and its drift. Each action (update, delete,
// suspend, resume, check, snapshot, restore, cancel) opens a dialog that shows what it
// will do and runs only on confirmation; an update applies exactly the plan shown (the
// saved-plan route, so a stack changed meanwhile is refused with the API's words). The
// drift panel shows the last detection and runs a new one. It owns these dialogs and
// that panel only: the live page (stack.js) shows the progress from the events; it never
// decides what the API allows (a refusal is shown as the API words it).
import { api, badge, el, projectPath } from "./common.js";

// The plan of an action that is not an update: every resource, and what the action does to it.
const VERBS = {
  delete: { title: "Delete the stack", verb: "delete", confirm: "Delete", run: (url) => api(url, { method: "DELETE" }) },
  suspend: { title: "Suspend the stack", verb: "suspend", confirm: "Suspend", run: (url) => api(`${url}/actions`, { method: "POST", body: { suspend: null } }) },
  resume: { title: "Resume the stack", verb: "resume", confirm: "Resume", run: (url) => api(`${url}/actions`, { method: "POST", body: { resume: null } }) },
  check: { title: "Check the stack", verb: "check", confirm: "Check", run: (url) => api(`${url}/actions`, { method: "POST", body: { check: null } }) },
  cancel: { title: "Cancel the update", verb: "roll back", confirm: "Cancel the update", run: (url) => api(`${url}/actions`, { method: "POST", body: { cancel_update: null } }) },
  snapshot: { title: "Snapshot the stack", verb: "snapshot", confirm: "Take the snapshot", run: (url, extra) => api(`${url}/snapshots`, { method: "POST", body: { name: extra.name || null } }) },
  restore: { title: "Restore a snapshot", verb: "restore", confirm: "Restore", run: (url, extra) => api(`${url}/snapshots/${encodeURIComponent(extra.snapshot)}/restore`, { method: "POST", body: {} }) },
};

// The actions the server plans (docs/plans.md, "Other actions").
const PLANNED = ["delete", "suspend", "resume", "check", "snapshot", "restore"];

const show = (value) => (value === undefined || value === null ? "-" : typeof value === "string" ? value : JSON.stringify(value));

// A dialog: a native <dialog> (modal, Escape closes it, focus stays inside).
function dialog(id, title, ...body) {
  const box = el("dialog", { class: "change", id, "aria-labelledby": `${id}-title` }, el("h2", { id: `${id}-title` }, title), ...body);
  box.addEventListener("close", () => box.remove());
  document.body.append(box);
  box.showModal();
  return box;
}

function planTable(plan) {
  const rows = (plan.resources || []).map((item) =>
    el(
      "tr",
      { "data-resource": item.address, "data-action": item.action },
      el("td", { class: "path" }, item.address),
      el("td", {}, item.action),
      el("td", {}, item.reason || ""),
      el(
        "td",
        { class: "mono" },
        (item.changes || []).map((change) => el("div", { class: "change-line" }, `${change.path}: `, el("span", { class: "old" }, show(change.old)), " -> ", el("span", { class: "new" }, change.known_after_apply ? "(known after apply)" : show(change.new)))),
      ),
    ),
  );
  const summary = plan.summary || {};
  return [
    el("p", { id: "plan-summary" }, `${summary.add ?? 0} to add, ${summary.change ?? 0} to change, ${summary.replace ?? 0} to replace, ${summary.delete ?? 0} to delete, ${summary.no_change ?? 0} unchanged.`),
    el("div", { class: "table-wrap" }, el("table", { class: "plan", id: "plan" }, el("thead", {}, el("tr", {}, ["Resource", "Action", "Reason", "Old -> new"].map((name) => el("th", { scope: "col" }, name)))), el("tbody", {}, rows))),
  ];
}

export class Changes {
  constructor(toolbar, drift, { stackUrl, stack, resources, onDone }) {
    this.stackUrl = stackUrl;
    this.stack = stack; // () => the stack as last read
    this.resources = resources; // () => the resources, flattened
    this.onDone = onDone;
    const button = (key, label) => el("button", { type: "button", id: `action-${key}`, onclick: () => (key === "update" ? this.update() : this.action(key)) }, label);
    toolbar.replaceChildren(
      button("update", "Update…"),
      button("check", "Check…"),
      button("suspend", "Suspend…"),
      button("resume", "Resume…"),
      button("snapshot", "Snapshot…"),
      button("restore", "Restore…"),
      button("cancel", "Cancel update…"),
      button("delete", "Delete…"),
    );
    this.drift = drift;
  }

  // --- an update: edit, preview the plan, apply exactly that plan
  update() {
    const stack = this.stack() || {};
    const parameters = Object.entries(stack.parameters || {}).filter(([key]) => !key.startsWith("OS::"));
    const fields = parameters.map(([key, value]) => el("label", {}, `${key} `, el("input", { type: "text", name: key, "data-parameter": key, value: String(value) })));
    const template = el("textarea", { id: "update-template", "aria-label": "New template (empty keeps the stack's template)" });
    const environment = el("textarea", { id: "update-environment", "aria-label": "Environment to add (JSON; empty adds none)" });
    const error = el("p", { class: "error", id: "update-error", role: "alert" });
    const planBox = el("div", { id: "update-plan" });
    const apply = el("button", { type: "button", id: "update-apply", disabled: true }, "Apply this plan");
    let plan = null;
    const preview = async () => {
      error.textContent = "";
      apply.disabled = true;
      planBox.replaceChildren(el("p", {}, "Planning…"));
      const body = { parameters: {} };
      for (const input of box.querySelectorAll("[data-parameter]")) {
        const old = (stack.parameters || {})[input.dataset.parameter];
        if (input.value !== String(old)) body.parameters[input.dataset.parameter] = input.value;
      }
      if (environment.value.trim()) {
        try {
          body.environment = JSON.parse(environment.value);
        } catch (problem) {
          planBox.replaceChildren();
          error.textContent = `The environment is not JSON: ${problem.message}. Write it as a JSON object, e.g. {"parameters": {}}.`;
          return;
        }
      }
      // A PATCH, as --existing: what is not given (the template, parameters left as
      // they are, hidden ones included) is the stack's own.
      if (template.value.trim()) body.template = template.value;
      try {
        const answer = await api(`${this.stackUrl}/preview?plan=true`, { method: "PATCH", body });
        plan = answer.plan;
        planBox.replaceChildren(...planTable(plan));
        apply.disabled = false;
      } catch (problem) {
        planBox.replaceChildren();
        error.textContent = problem.message;
      }
    };
    apply.addEventListener("click", async () => {
      apply.disabled = true;
      error.textContent = "";
      try {
        await api(projectPath("/plans/apply"), { method: "POST", body: plan });
        box.close();
        this.onDone();
      } catch (problem) {
        error.textContent = problem.message;
      }
    });
    const box = dialog(
      "update-dialog",
      "Update the stack",
      el("p", { class: "hint" }, "Change parameters (the stack's template is kept), or give a new template. Preview shows the plan; Apply runs exactly that plan."),
      fields.length ? el("fieldset", {}, el("legend", {}, "Parameters"), fields) : null,
      el("details", {}, el("summary", {}, "New template or environment"), el("label", { for: "update-template" }, "Template (YAML or JSON)"), template, el("label", { for: "update-environment" }, "Environment (JSON)"), environment),
      el("div", { class: "buttons" }, el("button", { type: "button", id: "update-preview", onclick: preview }, "Preview the plan"), apply, el("button", { type: "button", id: "dialog-cancel", onclick: () => box.close() }, "Cancel")),
      error,
      planBox,
    );
  }

  // --- the other actions: the resources and what the action does to each, then confirm
  async action(key) {
    const spec = VERBS[key];
    const error = el("p", { class: "error", id: "action-error", role: "alert" });
    const extra = {};
    const choose = [];
    if (key === "snapshot") {
      const name = el("input", { type: "text", id: "snapshot-name", name: "name" });
      name.addEventListener("input", () => (extra.name = name.value));
      choose.push(el("label", { for: "snapshot-name" }, "Snapshot name "), name);
    }
    const confirm = el("button", { type: "button", id: "action-confirm" }, spec.confirm);
    if (key === "restore") {
      const select = el("select", { id: "restore-snapshot", "aria-label": "Snapshot" });
      choose.push(el("label", { for: "restore-snapshot" }, "Snapshot "), select);
      try {
        const snapshots = (await api(`${this.stackUrl}/snapshots`)).snapshots || [];
        select.replaceChildren(...snapshots.map((item) => el("option", { value: item.id }, `${item.name || item.id} (${item.status}, ${item.creation_time})`)));
        if (!snapshots.length) {
          confirm.disabled = true;
          error.textContent = "This stack has no snapshots: take one first.";
        }
      } catch (problem) {
        confirm.disabled = true;
        error.textContent = problem.message;
      }
      extra.snapshot = select.value;
      select.addEventListener("change", async () => {
        extra.snapshot = select.value;
        const planned = await this.plannedRows(key, extra, error);
        if (planned) body.replaceChildren(...planned);
      });
    }
    // The server's plan of the action (POST .../actions/preview): each resource, nested
    // ones too, in the action's order, with what it will do (a restore's: the update it
    // runs, for the snapshot chosen); the resources shown here when the server makes
    // none (a cancel).
    const rows = (await this.plannedRows(key, extra, error)) ?? this.resources().map((node) => el("tr", { "data-resource": node.key }, el("td", { class: "path" }, node.key), el("td", {}, spec.verb), el("td", {}, badge(node.status)), el("td", {}, node.type), el("td", {}, "")));
    const body = el("tbody", {}, rows);
    confirm.addEventListener("click", async () => {
      confirm.disabled = true;
      error.textContent = "";
      try {
        await spec.run(this.stackUrl, extra);
        box.close();
        this.onDone();
      } catch (problem) {
        error.textContent = problem.message;
        confirm.disabled = false;
      }
    });
    const stack = this.stack() || {};
    const box = dialog(
      "action-dialog",
      spec.title,
      el("p", {}, `${spec.title} ${stack.stack_name || ""} (now ${stack.stack_status || "?"}): ${rows.length} resource${rows.length === 1 ? "" : "s"} to ${spec.verb}.`),
      ...choose,
      el("div", { class: "table-wrap" }, el("table", { class: "plan", id: "plan" }, el("thead", {}, el("tr", {}, ["Resource", "Action", "Now", "Type", "Why"].map((name) => el("th", { scope: "col" }, name)))), body)),
      el("div", { class: "buttons" }, confirm, el("button", { type: "button", id: "dialog-cancel", onclick: () => box.close() }, "Cancel")),
      error,
    );
  }

  // The rows of the server's plan of ``key`` (undefined when it makes none, or failed:
  // then ``error`` says why).
  async plannedRows(key, extra, error) {
    if (!PLANNED.includes(key) || (key === "restore" && !extra.snapshot)) return undefined;
    const now = new Map(this.resources().map((node) => [node.key, node.status]));
    try {
      const body = key === "restore" ? { restore: extra.snapshot } : { [key]: null };
      const plan = (await api(`${this.stackUrl}/actions/preview`, { method: "POST", body })).plan;
      return plan.resources.map((item) =>
        el("tr", { "data-resource": item.address, "data-action": item.action }, el("td", { class: "path" }, item.address), el("td", {}, item.action), el("td", {}, now.has(item.address) ? badge(now.get(item.address)) : ""), el("td", {}, item.type), el("td", {}, item.reason)),
      );
    } catch (problem) {
      error.textContent = problem.message;
      return undefined;
    }
  }

  // --- drift: the last detection, and a button to run one
  async showDrift(run = false) {
    const button = el("button", { type: "button", id: "drift-detect", onclick: () => this.showDrift(true) }, "Detect drift now");
    const head = el("div", { class: "toolbar" }, button);
    this.drift.replaceChildren(head, el("p", {}, run ? "Detecting…" : "Loading…"));
    let result;
    try {
      result = (await api(`${this.stackUrl}/drift`, run ? { method: "POST" } : {})).drift;
    } catch (problem) {
      const text = problem.status === 404 && !run ? "No drift detection has run on this stack yet." : problem.message;
      this.drift.replaceChildren(head, el("p", { class: problem.status === 404 && !run ? "empty" : "error", id: "drift-message" }, text));
      return;
    }
    const summary = result.summary || {};
    const rows = (result.resources || []).map((item) =>
      el(
        "tr",
        { "data-resource": item.path },
        el("td", { class: "path" }, item.path),
        el("td", {}, item.resource_type),
        el("td", {}, el("span", { class: `badge drift-${String(item.status).toLowerCase()}` }, item.status)),
        el("td", { class: "mono" }, (item.properties || []).map((diff) => el("div", {}, `${diff.name}: expected ${JSON.stringify(diff.expected)}, actual ${JSON.stringify(diff.actual)}`)), item.reason ? el("div", { class: "reason" }, item.reason) : null),
      ),
    );
    this.drift.replaceChildren(
      head,
      el("p", { id: "drift-summary" }, `${summary.stack_status}: ${summary.in_sync} IN_SYNC, ${summary.modified} MODIFIED, ${summary.deleted} DELETED, ${summary.not_checked} NOT_CHECKED; detected at ${result.detected_at}`),
      el("div", { class: "table-wrap" }, el("table", { class: "drift", id: "drift-table" }, el("thead", {}, el("tr", {}, ["Resource", "Type", "Drift", "Expected vs actual"].map((name) => el("th", { scope: "col" }, name)))), el("tbody", {}, rows))),
    );
  }
}
