// What every page of the dashboard shares: the session (the user's token and project,
// kept in this tab's sessionStorage), calls to the Orchestration API with that token,
// the event stream reader, and small DOM builders that only ever set text (never HTML),
// so nothing a stack holds can run as script.

export const base = document.body.dataset.base;
export const authMode = document.body.dataset.authMode;
const KEY = "stoker.dashboard.session";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(KEY));
  } catch {
    return null;
  }
}

export function saveSession(value) {
  sessionStorage.setItem(KEY, JSON.stringify(value));
}

export function signOut() {
  sessionStorage.removeItem(KEY);
  location.assign(`${base}/login`);
}

// Off to the sign-in page, which comes back here afterwards.
function toLogin() {
  const back = location.pathname + location.search + location.hash;
  location.assign(`${base}/login?next=${encodeURIComponent(back)}`);
}

// The session; without one, off to the sign-in page, and a promise that never settles,
// so that a page awaiting it goes no further.
export function signedIn() {
  const current = session();
  if (current) return Promise.resolve(current);
  toLogin();
  return new Promise(() => {});
}

function headers(extra = {}) {
  const current = session();
  const result = { Accept: "application/json", ...extra };
  if (current && current.token) result["X-Auth-Token"] = current.token;
  return result;
}

// The API path of the project: /v1/<project><path>.
export function projectPath(path) {
  return `/v1/${encodeURIComponent(session().project_id)}${path}`;
}

// A link's href (an absolute URL the API made) as a path on this origin.
export function linkPath(item, rel) {
  const found = (item.links || []).find((link) => link.rel === rel);
  return found ? new URL(found.href, location.href).pathname : null;
}

async function faultMessage(response) {
  const text = await response.text();
  try {
    const body = JSON.parse(text);
    const error = body.error || {};
    return error.message || body.explanation || body.title || text;
  } catch {
    return text || `${response.status} ${response.statusText}`;
  }
}

// A call to the API; the body of its answer (parsed JSON), or ApiError with Heat's message.
export async function api(path, { method = "GET", body, raw = false } = {}) {
  const options = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) options.body = JSON.stringify(body);
  const response = await fetch(path.startsWith("/") ? path : projectPath(`/${path}`), options);
  if (response.status === 401) {
    sessionStorage.removeItem(KEY);
    toLogin();
  }
  if (!response.ok) throw new ApiError(response.status, await faultMessage(response));
  if (response.status === 204 || raw) return response;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

// Server-sent events read with fetch (an EventSource cannot send X-Auth-Token).
// Calls onMessage({event, id, data}) for each message; resolves when the stream ends.
export async function readStream(path, { signal, lastEventId, onMessage }) {
  const extra = { Accept: "text/event-stream" };
  if (lastEventId) extra["Last-Event-ID"] = lastEventId;
  const response = await fetch(path, { headers: headers(extra), signal });
  if (response.status === 401) {
    sessionStorage.removeItem(KEY);
    toLogin();
  }
  if (!response.ok) throw new ApiError(response.status, await faultMessage(response));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let message = { event: "message", id: null, data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, "");
      buffer = buffer.slice(end + 1);
      if (line === "") {
        if (message.data.length) onMessage({ event: message.event, id: message.id, data: message.data.join("\n") });
        message = { event: "message", id: null, data: [] };
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const content = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") message.data.push(content);
        else if (field === "event") message.event = content;
        else if (field === "id") message.id = content;
      }
    }
  }
}

// el("a", {href: "..", class: "x"}, "text", child): children are text or nodes.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The colour family of a status: IN_PROGRESS, FAILED, COMPLETE or other.
export function statusKind(status) {
  if (!status) return "other";
  if (status.endsWith("_IN_PROGRESS")) return "progress";
  if (status.endsWith("_FAILED")) return "failed";
  if (status.endsWith("_COMPLETE")) return "complete";
  return "other";
}

export function badge(status) {
  return el("span", { class: `badge st-${statusKind(status)}` }, status || "-");
}

export function formatTime(text) {
  if (!text) return "";
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`);
  return Number.isNaN(date.getTime()) ? text : date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function showMessage(text, kind = "error") {
  const box = document.getElementById("message");
  if (!box) return;
  box.className = `message ${text ? kind : ""}`;
  box.textContent = text || "";
}

// The header's "who is signed in" and its sign-out button.
export function showWho() {
  const current = session();
  const who = document.getElementById("who");
  if (!who || !current) return;
  const label = current.user_id ? `${current.user_id} in ${current.project_id}` : `project ${current.project_id}`;
  who.replaceChildren(el("span", { id: "who-label" }, label), el("button", { type: "button", id: "sign-out", class: "link", onclick: signOut }, "Sign out"));
}

// Pretty JSON for a <pre>.
export function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}
