// The stack page's events: the timeline (newest first, nested stacks' events with their
// path, failures highlighted with their reason) and the hooks waiting, both fed by the
// stack's event stream. Hooks are found as heatclient finds them: a resource's pause
// ("... paused until Hook <name> is cleared") not followed by "Hook <name> is cleared".
import { ApiError, api, badge, el, formatTime, linkPath, statusKind } from "./common.js";

const PAUSED = /paused until Hook (\S+) is cleared/;
const CLEARED = /^Hook (\S+) is cleared$/;
// The timeline keeps this many events on the page; older ones are dropped from it (the
// API's event list still has them all).
const SHOWN = 1000;

export function eventKey(event) {
  return event.stack_path ? `${event.stack_path}.${event.resource_name}` : event.resource_name;
}

// What the timeline names an event by: its resource's path, or for a stack's own event
// (a nested stack's start and end) the path of the stack, marked so.
function eventLabel(event) {
  const stack = linkPath(event, "stack") || "";
  const own = event.physical_resource_id && stack.endsWith(`/${encodeURIComponent(event.resource_name)}/${event.physical_resource_id}`);
  if (!own) return eventKey(event);
  return event.stack_path ? `${event.stack_path} (nested stack)` : `${event.resource_name} (stack)`;
}

// Events are listed while the panel is shown; in a hidden panel they wait (the newest
// SHOWN of them) until it is opened, so a page that opens on another tab builds none.
export class Timeline {
  constructor(panel) {
    this.panel = panel;
    this.count = 0;
    this.failures = 0;
    this.pending = [];
    this.onlyFailures = el("input", { type: "checkbox", id: "only-failures" });
    this.onlyFailures.addEventListener("change", () => this.list.classList.toggle("only-failures", this.onlyFailures.checked));
    this.counter = el("span", { class: "count", id: "event-count", "aria-live": "polite" });
    this.list = el("ol", { class: "timeline", id: "timeline", "aria-label": "Events, newest first" });
    panel.replaceChildren(el("div", { class: "toolbar" }, el("label", { class: "check" }, this.onlyFailures, " failures only"), this.counter), this.list);
  }

  add(event) {
    this.count += 1;
    if (statusKind(event.resource_status) === "failed") this.failures += 1;
    this.pending.push(event);
    if (this.pending.length > 2 * SHOWN) this.pending.splice(0, this.pending.length - SHOWN);
    if (!this.panel.hidden && !this.scheduled) {
      this.scheduled = true;
      requestAnimationFrame(() => this.flush());
    }
  }

  // The panel was opened: list what came meanwhile.
  show() {
    if (this.pending.length) this.flush();
  }

  flush() {
    this.scheduled = false;
    const items = this.pending.splice(0).slice(-SHOWN).map((event) => {
      const failed = statusKind(event.resource_status) === "failed";
      return el(
        "li",
        { class: failed ? "event failed" : "event", "data-event-id": event.id },
        el("time", { datetime: event.event_time }, formatTime(event.event_time)),
        el("span", { class: "path" }, eventLabel(event)),
        badge(event.resource_status),
        el("span", { class: "reason" }, event.resource_status_reason || ""),
      );
    });
    this.list.prepend(...items.reverse());
    while (this.list.childElementCount > SHOWN) this.list.lastElementChild.remove();
    this.counter.textContent = `${this.count} events${this.failures ? `, ${this.failures} failed` : ""}${this.count > SHOWN ? ` (the newest ${SHOWN} shown)` : ""}`;
  }
}

export class Hooks {
  constructor(panel, tab, onChange) {
    this.panel = panel;
    this.tab = tab;
    this.onChange = onChange;
    this.waiting = new Map();
    this.render();
  }

  // An event of the stream: a pause adds a hook, its clearing removes it.
  see(event) {
    const reason = event.resource_status_reason || "";
    const key = eventKey(event);
    const paused = reason.match(PAUSED);
    if (paused) {
      this.waiting.set(key, { key, hook: paused[1], event, stack: linkPath(event, "stack") });
      this.changed();
    } else if (CLEARED.test(reason) && this.waiting.has(key)) {
      this.waiting.delete(key);
      this.changed();
    }
  }

  changed() {
    if (this.timer) return;
    this.timer = requestAnimationFrame(() => {
      this.timer = null;
      this.render();
      this.onChange(this.waiting);
    });
  }

  render() {
    this.tab.textContent = this.waiting.size ? `Hooks (${this.waiting.size})` : "Hooks";
    if (!this.waiting.size) {
      this.panel.replaceChildren(el("p", { class: "empty" }, "No resource is waiting at a hook."));
      return;
    }
    const rows = [...this.waiting.values()].map((item) => {
      const status = el("span", { class: "hook-status", role: "status" });
      const button = el("button", { type: "button", class: "clear-hook", "data-key": item.key }, `Clear ${item.hook}`);
      button.addEventListener("click", async () => {
        button.disabled = true;
        status.textContent = "clearing…";
        try {
          await api(`${item.stack}/resources/${encodeURIComponent(item.event.resource_name)}/signal`, { method: "POST", body: { unset_hook: item.hook } });
          status.textContent = "cleared; the resource goes on";
        } catch (error) {
          button.disabled = false;
          status.textContent = error instanceof ApiError ? `Not cleared: ${error.message}` : `Not cleared: ${error}`;
          status.classList.add("error");
        }
      });
      return el("tr", { "data-key": item.key }, el("td", { class: "path" }, item.key), el("td", {}, item.hook), el("td", {}, formatTime(item.event.event_time)), el("td", {}, button, " ", status));
    });
    this.panel.replaceChildren(
      el("table", { class: "hooks" }, el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Resource"), el("th", { scope: "col" }, "Hook"), el("th", { scope: "col" }, "Paused at"), el("th", { scope: "col" }, ""))), el("tbody", {}, rows)),
    );
  }
}
