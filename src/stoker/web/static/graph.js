// The topology graph: a stack's resources as nodes (a type icon, the name, the type and
// the status colour), their dependencies as edges, drawn as SVG. Nested stacks and group
// members are expandable in place: an expanded node becomes a frame around its own graph.
//
// The layout is layered, left to right: a resource's column is one past the deepest of
// the resources it depends on (longest path, in linear time), ordered in its column by
// the mean row of those resources (one barycentre pass). A column taller than the
// graph's row limit wraps into several. Each connected group of resources is laid out
// on its own and the groups are packed in rows, so a stack of a thousand resources is a
// block of readable chains, not one line or one tangle. Status changes patch a node in place; only a change of the
// resources themselves lays the graph out again.

const SVG = "http://www.w3.org/2000/svg";
const NODE_W = 196;
const NODE_H = 56;
const GAP_X = 56;
const GAP_Y = 12;
const PAD = 12;
const HEAD = 34;

// The hue of a type's service (its namespace), for the icon.
const HUES = { Nova: 210, Neutron: 160, Cinder: 30, Glance: 300, Heat: 265, Keystone: 60, Swift: 190, Octavia: 100, Barbican: 340, Designate: 240, Zaqar: 320, Mistral: 130, Aodh: 15, Manila: 225 };

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function kind(status) {
  if (!status) return "other";
  if (status.endsWith("_IN_PROGRESS")) return "progress";
  if (status.endsWith("_FAILED")) return "failed";
  if (status.endsWith("_COMPLETE")) return "complete";
  return "other";
}

function clip(text, length) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

export function typeIcon(type) {
  const parts = (type || "").split("::");
  const service = parts.length > 2 ? parts[1] : parts[0];
  const last = parts[parts.length - 1] || "?";
  const letters = (last.match(/[A-Z0-9]/g) || [last[0] || "?"]).slice(0, 2).join("");
  const hue = service in HUES ? HUES[service] : [...service].reduce((sum, c) => sum + c.charCodeAt(0), 0) % 360;
  return { letters: letters.length === 1 ? last.slice(0, 2) : letters, hue };
}

// Positions of one level's nodes ({key, expanded, children}) and edges ([from, to]: to depends on from).
export function layout(level, rowLimit) {
  const nodes = level.nodes;
  for (const node of nodes) {
    if (node.expanded && node.children) {
      node.inner = layout(node.children, rowLimit);
      node.w = Math.max(NODE_W, node.inner.width + 2 * PAD);
      node.h = node.inner.height + HEAD + PAD;
    } else {
      node.inner = null;
      node.w = NODE_W;
      node.h = NODE_H;
    }
  }
  // Each group of connected resources is laid out on its own, and the groups are packed
  // in rows (largest first), so independent chains read as separate lines, not a tangle.
  const byKey = new Map(nodes.map((node) => [node.key, node]));
  const components = connected(nodes, level.edges, byKey);
  const laid = components.map((members) => {
    const keys = new Set(members.map((node) => node.key));
    return layered(members, level.edges.filter(([from, to]) => keys.has(from) && keys.has(to)), rowLimit);
  });
  const area = laid.reduce((sum, part) => sum + (part.width + GAP_X) * (part.height + GAP_Y * 3), 0);
  const widest = laid.reduce((most, part) => Math.max(most, part.width), 0);
  const rowWidth = Math.max(widest, Math.sqrt(area) * 1.6);
  const order = laid.map((part, index) => index).sort((a, b) => laid[b].height - laid[a].height || laid[b].width - laid[a].width);
  const positions = new Map();
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  let width = 0;
  for (const index of order) {
    const part = laid[index];
    if (x > 0 && x + part.width > rowWidth) {
      x = 0;
      y += rowHeight + GAP_Y * 3;
      rowHeight = 0;
    }
    for (const [key, at] of part.positions) positions.set(key, { x: x + at.x, y: y + at.y });
    x += part.width + GAP_X;
    width = Math.max(width, x - GAP_X);
    rowHeight = Math.max(rowHeight, part.height);
  }
  return { width, height: y + rowHeight, positions, nodes, byKey };
}

// The weakly connected groups of a level's nodes, each in the level's order.
function connected(nodes, edges, byKey) {
  const parent = new Map(nodes.map((node) => [node.key, node.key]));
  const find = (key) => {
    while (parent.get(key) !== key) {
      parent.set(key, parent.get(parent.get(key)));
      key = parent.get(key);
    }
    return key;
  };
  for (const [from, to] of edges) if (byKey.has(from) && byKey.has(to)) parent.set(find(from), find(to));
  const groups = new Map();
  for (const node of nodes) {
    const root = find(node.key);
    if (!groups.has(root)) groups.set(root, []);
    groups.get(root).push(node);
  }
  return [...groups.values()];
}

// One connected group, in columns: a node's column is one past its deepest dependency.
function layered(nodes, edges, rowLimit) {
  const byKey = new Map(nodes.map((node) => [node.key, node]));
  const predecessors = new Map(nodes.map((node) => [node.key, []]));
  const successors = new Map(nodes.map((node) => [node.key, []]));
  for (const [from, to] of edges) {
    if (byKey.has(from) && byKey.has(to) && from !== to) {
      predecessors.get(to).push(from);
      successors.get(from).push(to);
    }
  }
  // Longest path from the sources (Kahn's order); a node on a cycle stays in column 0.
  const column = new Map(nodes.map((node) => [node.key, 0]));
  const waiting = new Map(nodes.map((node) => [node.key, predecessors.get(node.key).length]));
  const ready = nodes.filter((node) => waiting.get(node.key) === 0).map((node) => node.key);
  for (let index = 0; index < ready.length; index++) {
    const key = ready[index];
    for (const next of successors.get(key)) {
      column.set(next, Math.max(column.get(next), column.get(key) + 1));
      waiting.set(next, waiting.get(next) - 1);
      if (waiting.get(next) === 0) ready.push(next);
    }
  }
  const columns = [];
  for (const node of nodes) {
    const at = column.get(node.key);
    (columns[at] ||= []).push(node);
  }
  const row = new Map();
  const maxHeight = rowLimit * (NODE_H + GAP_Y);
  const positions = new Map();
  let x = 0;
  let height = 0;
  for (const members of columns) {
    if (!members) continue;
    const weight = (node) => {
      const rows = predecessors.get(node.key).map((key) => row.get(key)).filter((value) => value !== undefined);
      return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : Number.POSITIVE_INFINITY;
    };
    members.sort((a, b) => weight(a) - weight(b) || a.name.localeCompare(b.name));
    let y = 0;
    let width = 0;
    members.forEach((node, index) => {
      if (y > 0 && y + node.h > maxHeight) {
        x += width + GAP_X / 2;
        y = 0;
        width = 0;
      }
      positions.set(node.key, { x, y });
      row.set(node.key, index);
      y += node.h + GAP_Y;
      width = Math.max(width, node.w);
      height = Math.max(height, y - GAP_Y);
    });
    x += width + GAP_X;
  }
  return { width: Math.max(x - GAP_X, 0), height, positions };
}

export class Topology {
  // onSelect(node) when a node is chosen, onToggle(node) when its expander is.
  constructor(container, { onSelect, onToggle }) {
    this.container = container;
    this.onSelect = onSelect;
    this.onToggle = onToggle;
    this.scale = 1;
    this.elements = new Map();
    this.root = null;
  }

  // Lays out and draws the whole graph again (resources came or went, a node was expanded);
  // with fit, scaled to the container's width. The width is read before the new picture
  // is in the document: read after, it would lay out a thousand nodes once for the
  // reading and again for the new scale.
  draw(root, fit = false) {
    const room = fit ? this.container.clientWidth : 0;
    this.root = root;
    const count = countNodes(root);
    const rowLimit = Math.max(8, Math.ceil(Math.sqrt(count * 2)));
    this.laidOut = layout(root, rowLimit);
    const width = this.laidOut.width + 2 * PAD;
    const height = this.laidOut.height + 2 * PAD;
    const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": `Topology: ${count} resources`, class: "topology" });
    const defs = svg("defs");
    picture.append(defs);
    const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
    defs.append(marker);
    this.elements = new Map();
    this.drawLevel(picture, this.laidOut, root, PAD, PAD);
    this.picture = picture;
    this.size = { width, height };
    if (room > 0) this.scale = this.fitScale(room);
    this.applyScale();
    this.container.replaceChildren(picture);
  }

  drawLevel(parent, laidOut, level, offsetX, offsetY) {
    const edges = svg("g", { class: "edges" });
    parent.append(edges);
    for (const [from, to] of level.edges) {
      const a = laidOut.positions.get(from);
      const b = laidOut.positions.get(to);
      if (!a || !b) continue;
      const source = laidOut.byKey.get(from);
      const x1 = offsetX + a.x + source.w;
      const y1 = offsetY + a.y + Math.min(source.h, NODE_H) / 2;
      const x2 = offsetX + b.x;
      const y2 = offsetY + b.y + NODE_H / 2;
      const bend = Math.max(24, (x2 - x1) / 2);
      edges.append(svg("path", { d: `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`, class: "edge", "marker-end": "url(#arrow)", "data-from": from, "data-to": to }));
    }
    for (const node of laidOut.nodes) {
      const at = laidOut.positions.get(node.key);
      const x = offsetX + at.x;
      const y = offsetY + at.y;
      const group = svg("g", { class: `node st-${kind(node.status)}${node.expanded ? " expanded" : ""}`, transform: `translate(${x} ${y})`, "data-key": node.key });
      const label = `${node.name}, ${node.type}, ${node.status || "no status"}`;
      const face = svg("g", { class: "face", tabindex: "0", role: "button", "aria-label": label });
      face.append(svg("title", {}, `${node.key}\n${node.type}\n${node.status}${node.reason ? `\n${node.reason}` : ""}`));
      face.append(svg("rect", { class: "box", width: node.w, height: node.h, rx: "7" }));
      const icon = typeIcon(node.type);
      const badge = svg("circle", { class: "icon", cx: "20", cy: "20", r: "12" });
      badge.style.fill = `hsl(${icon.hue} 55% 42%)`;
      face.append(badge, svg("text", { class: "icon-text", x: "20", y: "24", "text-anchor": "middle" }, icon.letters));
      face.append(svg("text", { class: "name", x: "38", y: "18" }, clip(node.name, 20)));
      face.append(svg("text", { class: "type", x: "38", y: "33" }, clip(node.type, 26)));
      face.append(svg("text", { class: "status", x: "38", y: "48" }, clip(node.status || "", 26)));
      const choose = (event) => {
        if (event.type === "click" || event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          this.onSelect(node);
        }
      };
      face.addEventListener("click", choose);
      face.addEventListener("keydown", choose);
      group.append(face);
      if (node.expandable) {
        const toggle = svg("g", { class: "expander", tabindex: "0", role: "button", "aria-expanded": String(Boolean(node.expanded)), "aria-label": `${node.expanded ? "Collapse" : "Expand"} ${node.name}` });
        toggle.append(svg("rect", { x: String(node.w - 26), y: "4", width: "22", height: "22", rx: "4" }), svg("text", { x: String(node.w - 15), y: "20", "text-anchor": "middle" }, node.expanded ? "−" : "+"));
        const flip = (event) => {
          if (event.type === "click" || event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            event.stopPropagation();
            this.onToggle(node);
          }
        };
        toggle.addEventListener("click", flip);
        toggle.addEventListener("keydown", flip);
        group.append(toggle);
      }
      parent.append(group);
      this.elements.set(node.key, group);
      if (node.inner) this.drawLevel(parent, node.inner, node.children, x + PAD, y + HEAD);
    }
  }

  // A node's new status, drawn without a new layout; false when the node is not drawn.
  setStatus(key, status, reason) {
    const group = this.elements.get(key);
    if (!group) return false;
    const node = findNode(this.root, key);
    if (node) {
      node.status = status;
      node.reason = reason;
    }
    group.setAttribute("class", `node st-${kind(status)}${node && node.expanded ? " expanded" : ""}`);
    group.querySelector(".status").textContent = clip(status, 26);
    group.querySelector(".face").setAttribute("aria-label", `${node ? node.name : key}, ${node ? node.type : ""}, ${status}`);
    return true;
  }

  zoom(factor) {
    this.scale = factor === "fit" ? this.fitScale(this.container.clientWidth) : Math.min(3, Math.max(0.1, this.scale * factor));
    this.applyScale();
  }

  fitScale(room) {
    return Math.min(1, (room - 4) / this.size.width);
  }

  applyScale() {
    if (!this.picture) return;
    this.picture.setAttribute("width", String(Math.round(this.size.width * this.scale)));
    this.picture.setAttribute("height", String(Math.round(this.size.height * this.scale)));
  }

  focus(key) {
    const group = this.elements.get(key);
    if (group) group.querySelector(".face").focus();
  }
}

function countNodes(level) {
  return level.nodes.reduce((sum, node) => sum + 1 + (node.expanded && node.children ? countNodes(node.children) : 0), 0);
}

export function findNode(level, key) {
  if (!level) return null;
  for (const node of level.nodes) {
    if (node.key === key) return node;
    if (node.children && key.startsWith(`${node.key}.`)) {
      const found = findNode(node.children, key);
      if (found) return found;
    }
  }
  return null;
}
