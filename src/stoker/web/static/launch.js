// The launch wizard: 1. the user adds a parent template, the templates it may use and
// environments; 2. POST /template_capabilities lists each resource type with several
// implementations and the one the environments' `requires` chooses, and the user picks;
// 3. POST /validate?show_nested=true gives the parameters of the whole chosen tree,
// shown as a form (parameter_groups as sections, hidden ones as password fields, the
// constraints checked as the user types); 4. POST /stacks/preview, then POST /stacks,
// and on to the new stack's page. The choices travel as one more environment file,
// merged last, that maps each type to its chosen template (and gives the nested
// templates' values as parameter_defaults).
import { ApiError, api, base, el, pretty, signedIn, showMessage, showWho } from "./common.js";
import { checkValue, fieldFor, readValue } from "./launch_fields.js";

await signedIn();
showWho();

const CHOICES_FILE = "launch-choices.yaml";
const TEMPLATE_LINE = /^heat_template_version\s*:/m;
const ENVIRONMENT_LINE = /^(resource_registry|requires|parameters|parameter_defaults|encrypted_param_names|event_sinks|parameter_merge_strategies)\s*:/m;

// name -> {text, role: "parent" | "template" | "environment"}, in the order added.
const files = new Map();
let summary = null;
let chosen = {};

const list = document.querySelector("#file-list tbody");
const inspectButton = document.getElementById("inspect");

function guessRole(text) {
  if (TEMPLATE_LINE.test(text)) return "template";
  return ENVIRONMENT_LINE.test(text) ? "environment" : "template";
}

function parentName() {
  return [...files].find(([, file]) => file.role === "parent")?.[0];
}

// A parent unless the user chose one: the first template that declares no capabilities
// (an implementation of a type declares them).
function guessParent() {
  if (parentName()) return;
  const templates = [...files].filter(([, file]) => file.role === "template");
  const plain = templates.find(([, file]) => !/^capabilities\s*:/m.test(file.text)) || templates[0];
  if (plain) plain[1].role = "parent";
}

// A folder's files keep their paths below it; each upload is added sorted by name.
async function addFiles(fileList) {
  const named = [...fileList].map((file) => [file.webkitRelativePath ? file.webkitRelativePath.split("/").slice(1).join("/") : file.name, file]);
  named.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, file] of named) {
    const text = await file.text();
    files.set(name, { text, role: guessRole(text) });
  }
  guessParent();
  later();
  renderFiles();
}

function later() {
  for (const id of ["step-choices", "step-parameters", "step-preview"]) document.getElementById(id).hidden = true;
  showMessage("");
}

// Environments merge in the list's order: a later one wins.
function moveUp(name) {
  const entries = [...files];
  const at = entries.findIndex(([key]) => key === name);
  [entries[at - 1], entries[at]] = [entries[at], entries[at - 1]];
  files.clear();
  for (const [key, value] of entries) files.set(key, value);
  later();
  renderFiles();
}

function renderFiles() {
  list.replaceChildren(
    ...[...files].map(([name, file], index) => {
      const role = el(
        "select",
        {
          "aria-label": `Role of ${name}`,
          onchange: (event) => {
            if (event.target.value === "parent") for (const other of files.values()) if (other.role === "parent") other.role = "template";
            file.role = event.target.value;
            later();
            renderFiles();
          },
        },
        ["parent", "template", "environment"].map((value) => el("option", { value, selected: file.role === value }, value === "parent" ? "parent template" : value)),
      );
      const remove = el("button", { type: "button", class: "link remove", onclick: () => { files.delete(name); later(); renderFiles(); } }, "Remove");
      const up = index > 0 ? el("button", { type: "button", class: "link up", "aria-label": `Move ${name} up`, onclick: () => moveUp(name) }, "Move up") : null;
      return el("tr", { "data-file": name }, el("td", { class: "name" }, name), el("td", {}, role), el("td", { class: "actions" }, up, " ", remove));
    }),
  );
  inspectButton.disabled = !parentName();
}

function environmentNames() {
  return [...files].filter(([, file]) => file.role === "environment").map(([name]) => name);
}

function allFiles() {
  return Object.fromEntries([...files].map(([name, file]) => [name, file.text]));
}

function failed(error, what) {
  if (!(error instanceof ApiError)) throw error;
  showMessage(`${what}: ${error.message}`);
}

// Step 2: the types with several implementations, each with the one `requires` chooses.
async function inspect() {
  later();
  const body = { files: allFiles(), environment_files: environmentNames() };
  body.templates = [...files].filter(([, file]) => file.role !== "environment").map(([name]) => name);
  try {
    summary = await api("template_capabilities", { method: "POST", body });
  } catch (error) {
    failed(error, "The templates could not be inspected");
    return;
  }
  const resolutions = Object.fromEntries((summary.resolutions || []).map((item) => [item.resource_type, item]));
  const tags = Object.entries(summary.capabilities || {}).map(([key, values]) => `${key}: ${values.join(", ")}`);
  const requires = Object.entries(summary.requires || {}).map(([key, value]) => `${key}=${Array.isArray(value) ? value.join("|") : value}`);
  document.getElementById("capabilities").replaceChildren(
    el("p", {}, tags.length ? `Capabilities offered: ${tags.join("; ")}.` : "The templates declare no capability tags."),
    el("p", {}, requires.length ? `The environments require ${requires.join(", ")}.` : "The environments have no requires section."),
  );
  chosen = {};
  const sections = [];
  const single = [];
  for (const [type, candidates] of Object.entries(summary.resource_types || {})) {
    if (candidates.length < 2) {
      single.push(el("li", {}, el("code", {}, type), " → ", candidates[0]));
      continue;
    }
    const resolution = resolutions[type];
    const verdicts = Object.fromEntries((resolution?.candidates || []).map((item) => [item.template, item]));
    chosen[type] = resolution?.chosen || null;
    const options = candidates.map((template) => {
      const verdict = verdicts[template];
      const isChoice = resolution?.chosen === template;
      return el(
        "label",
        { class: "choice" },
        el("input", { type: "radio", name: `choice-${type}`, value: template, checked: isChoice, onchange: () => { chosen[type] = template; later(); document.getElementById("step-choices").hidden = false; } }),
        el("span", {}, template),
        isChoice ? el("span", { class: "badge st-complete" }, "requires chooses this") : null,
        verdict ? el("span", { class: "hint" }, verdict.reasons.join("; ")) : null,
      );
    });
    const note = resolution && !resolution.chosen ? el("p", { class: "hint" }, "The environments' requires choose none of these: pick one.") : null;
    sections.push(el("fieldset", { class: "choices", "data-type": type }, el("legend", {}, type), note, options));
  }
  const choices = document.getElementById("choices");
  choices.replaceChildren(
    ...(sections.length ? sections : [el("p", {}, "No resource type has more than one implementation here: nothing to choose.")]),
    single.length ? el("details", {}, el("summary", {}, `${single.length} types with one implementation`), el("ul", {}, single)) : "",
  );
  for (const item of summary.skipped || []) choices.append(el("p", { class: "hint" }, `Skipped ${item.template}: ${item.reason}`));
  document.getElementById("step-choices").hidden = false;
  document.getElementById("step-choices-title").scrollIntoView?.({ block: "start" });
}

// The request's template, files and environments, with the choices as the last environment.
// A nested template's values go in its parameter_defaults (a request's environment is
// ignored when it has environment files, as in Heat).
function stackBody(defaults = {}) {
  const registry = Object.fromEntries(Object.entries(chosen).filter(([, template]) => template));
  const choices = { resource_registry: registry };
  if (Object.keys(defaults).length) choices.parameter_defaults = defaults;
  return {
    template: files.get(parentName()).text,
    files: { ...allFiles(), [CHOICES_FILE]: JSON.stringify(choices, null, 2) },
    environment_files: [...environmentNames(), CHOICES_FILE],
  };
}

let fields = [];

// Step 3: the parameters of the whole tree; a nested stack's are optional (its parent
// may pass them), and given to it as parameter_defaults.
async function toParameters() {
  const missing = Object.entries(chosen).find(([, template]) => !template);
  if (missing) {
    showMessage(`Choose an implementation of ${missing[0]}`);
    return;
  }
  let validated;
  try {
    validated = await api("validate?show_nested=true", { method: "POST", body: stackBody() });
  } catch (error) {
    failed(error, "The chosen templates are not valid");
    return;
  }
  showMessage("");
  fields = [];
  const box = document.getElementById("parameter-fields");
  box.replaceChildren(...topSections(validated), ...nestedSections(validated.NestedParameters || {}, []));
  if (!fields.length) box.append(el("p", { class: "hint" }, "These templates take no parameters."));
  document.getElementById("step-parameters").hidden = false;
  document.getElementById("step-preview").hidden = true;
}

function addField(name, schema, scope) {
  const field = fieldFor(name, schema, scope);
  fields.push(field);
  return field.node;
}

function topSections(validated) {
  const parameters = validated.Parameters || {};
  const placed = new Set();
  const sections = (validated.ParameterGroups || []).map((group) => {
    const names = (group.parameters || []).filter((name) => name in parameters);
    names.forEach((name) => placed.add(name));
    return el(
      "fieldset",
      { class: "group", "data-group": group.label || "" },
      el("legend", {}, group.label || "Parameters"),
      group.description ? el("p", { class: "hint" }, group.description) : null,
      names.map((name) => addField(name, parameters[name], { nested: null })),
    );
  });
  const rest = Object.keys(parameters).filter((name) => !placed.has(name));
  if (rest.length) sections.push(el("fieldset", { class: "group", "data-group": "" }, el("legend", {}, sections.length ? "Other parameters" : "Parameters"), rest.map((name) => addField(name, parameters[name], { nested: null }))));
  return sections;
}

function nestedSections(nested, path) {
  const sections = [];
  for (const [resource, info] of Object.entries(nested)) {
    const here = [...path, resource];
    const parameters = info.Parameters || {};
    if (Object.keys(parameters).length) {
      sections.push(
        el(
          "fieldset",
          { class: "group nested", "data-nested": here.join(".") },
          el("legend", {}, `${here.join(" › ")} (${info.Type})`),
          info.Description && info.Description !== "No description" ? el("p", { class: "hint" }, info.Description) : null,
          Object.entries(parameters).map(([name, schema]) => addField(name, schema, { nested: here.join(".") })),
        ),
      );
    }
    sections.push(...nestedSections(info.NestedParameters || {}, here));
  }
  return sections;
}

// The form's values, or null (with the first problem focused) when one is not valid.
function formValues() {
  const name = document.getElementById("stack-name");
  if (!/^[a-zA-Z][a-zA-Z0-9_.-]*$/.test(name.value)) {
    showMessage("Name the stack: a letter, then letters, digits, '_', '-' or '.'");
    name.focus();
    return null;
  }
  const parameters = {};
  const defaults = {};
  for (const field of fields) {
    const problem = checkValue(field);
    if (problem) {
      showMessage(`${field.label}: ${problem}`);
      field.input.focus();
      return null;
    }
    const value = readValue(field);
    if (value === undefined) continue;
    if (field.scope.nested) defaults[field.name] = value;
    else parameters[field.name] = value;
  }
  showMessage("");
  return { stack_name: name.value, parameters, defaults };
}

let prepared = null;

// Step 4: what the stack would be, from POST /stacks/preview.
async function preview(event) {
  event.preventDefault();
  const values = formValues();
  if (!values) return;
  prepared = { ...stackBody(values.defaults), stack_name: values.stack_name, parameters: values.parameters };
  let answer;
  try {
    answer = await api("stacks/preview", { method: "POST", body: prepared });
  } catch (error) {
    failed(error, "The preview failed");
    return;
  }
  const stack = answer.stack || {};
  const rows = [];
  const walk = (items) => {
    for (const item of items) {
      if (Array.isArray(item)) walk(item);
      else rows.push(el("tr", {}, el("td", {}, item.stack_name), el("td", {}, item.resource_name), el("td", {}, item.resource_type), el("td", {}, item.parent_resource || "")));
    }
  };
  walk(stack.resources || []);
  const shown = Object.entries(stack.parameters || {}).filter(([key]) => !key.startsWith("OS::"));
  document.getElementById("preview-result").replaceChildren(
    el("p", {}, `Stack ${stack.stack_name}: ${rows.length} resources.`),
    el("div", { class: "table-wrap" }, el("table", { id: "preview-resources" }, el("thead", {}, el("tr", {}, ["Stack", "Resource", "Type", "In"].map((title) => el("th", { scope: "col" }, title)))), el("tbody", {}, rows))),
    shown.length ? el("h3", {}, "Parameters") : null,
    shown.length ? el("pre", { id: "preview-parameters" }, pretty(Object.fromEntries(shown))) : null,
  );
  document.getElementById("step-preview").hidden = false;
  document.getElementById("create").focus();
}

// Create, then on to the stack's live page.
async function create() {
  const button = document.getElementById("create");
  button.disabled = true;
  try {
    const answer = await api("stacks", { method: "POST", body: prepared });
    location.assign(`${base}/stacks/${encodeURIComponent(prepared.stack_name)}/${encodeURIComponent(answer.stack.id)}`);
  } catch (error) {
    button.disabled = false;
    failed(error, "The stack could not be created");
  }
}

document.getElementById("files").addEventListener("change", (event) => addFiles(event.target.files));
document.getElementById("folder").addEventListener("change", (event) => addFiles(event.target.files));
inspectButton.addEventListener("click", inspect);
document.getElementById("to-parameters").addEventListener("click", toParameters);
document.getElementById("parameters").addEventListener("submit", preview);
document.getElementById("create").addEventListener("click", create);
renderFiles();
