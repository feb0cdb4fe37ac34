// The sign-in page: asks the server who the token is (GET /dashboard/session), keeps the
// answer in this tab's session, and goes back to the page that sent the user here.
import { authMode, base, saveSession, session, showMessage } from "./common.js";

const form = document.getElementById("login");
const project = document.getElementById("project");
const previous = session();
// In auth mode none the CLI works in the project "default" unless told otherwise.
if (previous && previous.project_id) project.value = previous.project_id;
else if (authMode === "none") project.value = "default";

function next() {
  const target = new URLSearchParams(location.search).get("next") || "";
  // Only a path of the dashboard itself: never another origin.
  return target.startsWith(`${base}/`) && !target.startsWith("//") ? target : `${base}/`;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  showMessage("");
  const token = authMode === "none" ? null : document.getElementById("token").value.trim();
  const wanted = project.value.trim();
  const query = wanted ? `?project=${encodeURIComponent(wanted)}` : "";
  const headers = { Accept: "application/json" };
  if (token) headers["X-Auth-Token"] = token;
  try {
    const response = await fetch(`${base}/session${query}`, { headers });
    const body = await response.json();
    if (!response.ok) {
      showMessage(body.error ? body.error.message : `Sign-in failed (${response.status})`);
      return;
    }
    // The project to work in: the one asked for (a cloud admin may name another), else the token's.
    saveSession({ ...body, token, project_id: wanted || body.project_id });
    location.assign(next());
  } catch (error) {
    showMessage(`The server did not answer: ${error.message}`);
  }
});
// Keystone mode: a user name and password, which the server takes to Keystone. A user
// with several projects is asked to choose one, and the form is sent again with it.
const passwordForm = document.getElementById("password-login");
if (passwordForm) {
  const choice = document.getElementById("project-choice");
  passwordForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    showMessage("");
    const body = {
      username: document.getElementById("username").value,
      password: document.getElementById("password").value,
      user_domain: document.getElementById("user-domain").value,
      project_name: document.getElementById("project-name").value,
    };
    if (!choice.parentElement.hidden && choice.value) body.project_id = choice.value;
    try {
      const response = await fetch(`${base}/session`, { method: "POST", headers: { Accept: "application/json", "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const answer = await response.json();
      if (!response.ok) {
        showMessage(answer.error ? answer.error.message : `Sign-in failed (${response.status})`);
        return;
      }
      if (answer.projects) {
        choice.replaceChildren(...answer.projects.map((item) => new Option(item.name, item.id)));
        choice.parentElement.hidden = false;
        choice.focus();
        showMessage("You have roles in several projects: choose one and sign in again.", "info");
        return;
      }
      saveSession(answer);
      location.assign(next());
    } catch (error) {
      showMessage(`The server did not answer: ${error.message}`);
    }
  });
}
(authMode === "none" ? project : passwordForm ? document.getElementById("username") : document.getElementById("token")).focus();
