// One parameter of the launch wizard's form: its input (by the parameter's type; a
// hidden parameter is a password field, allowed values a list), its constraints checked
// as the user types (Heat's: allowed values, pattern, length, range, step), and its value
// as the API takes it. A custom constraint (a flavor, an image, ...) is named, its values
// read from the cloud are offered, and the server checks it when the stack is previewed
// or created.
import { api, el, projectPath } from "./common.js";

let counter = 0;

function given(schema) {
  if (schema.Value !== undefined && schema.Value !== null) return schema.Value;
  return schema.Default;
}

function asText(value, type) {
  if (value === undefined || value === null) return "";
  if (type === "Json") return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  if (Array.isArray(value)) return value.join(",");
  return String(value);
}

function inputFor(id, schema, current, describedBy) {
  const type = schema.Type;
  const common = { id, "aria-describedby": describedBy, autocomplete: "off" };
  if (schema.AllowedValues) {
    const values = schema.AllowedValues.map(String);
    return el(
      "select",
      common,
      el("option", { value: "" }, current === "" ? "(choose)" : "(default)"),
      values.map((value) => el("option", { value, selected: value === current }, value)),
    );
  }
  if (type === "Boolean") {
    return el("select", common, el("option", { value: "" }, "(default)"), ["true", "false"].map((value) => el("option", { value, selected: value === current.toLowerCase() }, value)));
  }
  if (type === "Json") return el("textarea", { ...common, rows: 3, spellcheck: "false" }, current);
  const kind = schema.NoEcho === "true" ? "password" : type === "Number" ? "text" : "text";
  return el("input", { ...common, type: kind, value: current, inputmode: type === "Number" ? "decimal" : null, spellcheck: "false" });
}

// {name, label, scope, schema, input, node}: node is the field's whole block.
export function fieldFor(name, schema, scope) {
  counter += 1;
  const id = `param-${counter}`;
  const current = asText(given(schema), schema.Type);
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const input = inputFor(id, schema, schema.NoEcho === "true" ? "" : current, `${hintId} ${errorId}`);
  const optional = scope.nested !== null || given(schema) !== undefined;
  // A value its parent passes wins over any default: shown, not editable.
  if (scope.nested !== null && schema.Value !== undefined) input.disabled = true;
  const facts = [schema.Type];
  if (schema.NoEcho === "true") facts.push("hidden");
  if (schema.MinLength !== undefined || schema.MaxLength !== undefined) facts.push(`length ${schema.MinLength ?? 0}..${schema.MaxLength ?? "∞"}`);
  if (schema.MinValue !== undefined || schema.MaxValue !== undefined) facts.push(`range ${schema.MinValue ?? "-∞"}..${schema.MaxValue ?? "∞"}`);
  if (schema.AllowedPattern) facts.push(`pattern ${schema.AllowedPattern}`);
  if (schema.CustomConstraint) facts.push(`checked by the cloud as ${schema.CustomConstraint}`);
  if (scope.nested !== null) facts.push(schema.Value !== undefined ? "given by its parent, from the defaults" : "its parent may give it");
  else if (!optional) facts.push("required");
  const label = schema.Label && schema.Label !== name ? `${schema.Label} (${name})` : name;
  const error = el("span", { class: "field-error", id: errorId, "aria-live": "polite" });
  const node = el(
    "div",
    { class: "field", "data-param": name, "data-scope": scope.nested || "" },
    el("label", { for: id }, label),
    input,
    el("span", { class: "hint", id: hintId }, [schema.Description, facts.join(", ")].filter(Boolean).join(" — ")),
    error,
  );
  if (schema.CustomConstraint && input.tagName === "INPUT" && schema.NoEcho !== "true") offerValues(input, schema.CustomConstraint, node);
  const field = { name, label: scope.nested ? `${scope.nested}.${name}` : name, scope, schema, input, node, error, optional, original: current, hidden: schema.NoEcho === "true" };
  input.addEventListener("input", () => show(field));
  input.addEventListener("change", () => show(field));
  return field;
}

// The values a custom constraint accepts in the cloud (GET .../custom_constraints/NAME/values),
// offered as the input's suggestions: the user may still type any value (the server
// checks it at preview). When they cannot be listed, the field says so and stays free text.
async function offerValues(input, constraint, node) {
  const list = el("datalist", { id: `${input.id}-values` });
  node.append(list);
  input.setAttribute("list", list.id);
  const note = el("span", { class: "hint constraint-values", "aria-live": "polite" }, `Listing ${constraint}…`);
  node.append(note);
  try {
    const found = await api(projectPath(`/custom_constraints/${encodeURIComponent(constraint)}/values`));
    list.replaceChildren(...found.values.map((item) => el("option", { value: item.value }, item.label)));
    node.dataset.values = String(found.values.length);
    note.textContent = `${found.values.length} ${constraint} value${found.values.length === 1 ? "" : "s"} in the cloud${found.truncated ? " (the first ones)" : ""}: type or pick one.`;
  } catch (problem) {
    node.dataset.values = "none";
    note.textContent = `The cloud's ${constraint} values could not be listed (${problem.message}): type the value.`;
  }
}

function show(field) {
  const problem = checkValue(field);
  field.error.textContent = problem;
  field.input.setAttribute("aria-invalid", problem ? "true" : "false");
  field.node.classList.toggle("invalid", Boolean(problem));
}

function typed(field) {
  const text = field.input.value;
  switch (field.schema.Type) {
    case "Number": {
      const number = Number(text.trim());
      if (text.trim() === "" || Number.isNaN(number)) throw new Error("must be a number");
      return number;
    }
    case "Json":
      try {
        return JSON.parse(text);
      } catch {
        throw new Error("must be JSON (an object or a list)");
      }
    case "CommaDelimitedList":
      return text.split(",").map((item) => item.trim());
    case "Boolean":
      if (!["true", "false"].includes(text)) throw new Error("must be true or false");
      return text === "true";
    default:
      return text;
  }
}

// Whether the user left this field for the templates to fill (its default, its parent).
function untouched(field) {
  const text = field.input.value;
  if (text === "") return true;
  return field.scope.nested !== null && text === field.original;
}

// The problem with the field's value ("" when none): what the server would refuse.
export function checkValue(field) {
  const { schema } = field;
  if (untouched(field)) return field.optional ? "" : "is required";
  let value;
  try {
    value = typed(field);
  } catch (error) {
    return error.message;
  }
  const why = schema.ConstraintDescription ? ` (${schema.ConstraintDescription})` : "";
  if (schema.AllowedValues && !schema.AllowedValues.map(String).includes(field.input.value)) return `must be one of ${schema.AllowedValues.join(", ")}${why}`;
  const size = typeof value === "string" ? [...value].length : Array.isArray(value) ? value.length : value && typeof value === "object" ? Object.keys(value).length : null;
  if (size !== null && schema.MinLength !== undefined && size < schema.MinLength) return `must be at least ${schema.MinLength} long${why}`;
  if (size !== null && schema.MaxLength !== undefined && size > schema.MaxLength) return `must be at most ${schema.MaxLength} long${why}`;
  if (typeof value === "number") {
    if (schema.MinValue !== undefined && value < schema.MinValue) return `must be at least ${schema.MinValue}${why}`;
    if (schema.MaxValue !== undefined && value > schema.MaxValue) return `must be at most ${schema.MaxValue}${why}`;
    if (schema.Step !== undefined && (value - (schema.Offset || 0)) % schema.Step !== 0) return `must be ${schema.Offset || 0} plus a multiple of ${schema.Step}${why}`;
  }
  if (schema.AllowedPattern && typeof value === "string") {
    let pattern = null;
    try {
      pattern = new RegExp(`^(?:${schema.AllowedPattern})$`, "u");
    } catch {
      pattern = null; // a Python-only pattern: the server checks it
    }
    if (pattern && !pattern.test(value)) return `must match ${schema.AllowedPattern}${why}`;
  }
  return "";
}

// The value to send, or undefined to leave the parameter to its default or its parent.
export function readValue(field) {
  if (untouched(field)) return undefined;
  const value = typed(field);
  return field.schema.Type === "CommaDelimitedList" ? field.input.value : value;
}
