// Login page: user name and password; on success the session cookie is set by the server and the
// page goes back to where it came from (or the overview). It also says how users are added (a hash
// from `tributary console --hash-password` in the config or the users file) and where the first-run
// admin's password was shown; with no users configured it says only that.

import { useState } from "preact/hooks";
import { type Me, postJson, setMe, useMe } from "../api.js";
import { html } from "../html.js";

export function LoginPage(props: { back: string }) {
  const [user, setUser] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await postJson<{ user: string; role: Me["role"] }>("/api/login", { user, password });
      setMe({ usersConfigured: true, user: r.user, role: r.role });
      location.hash = props.back;
    } catch (x) {
      setError((x as Error).message);
    }
  };
  const me = useMe();
  const howTo = html`<div class="muted how-to" data-testid="add-user-help">
    <p>To add a user, hash a password and add two lines to the console's config file (or its users file,
      <code>console-users.properties</code> beside it), then restart the console:</p>
    <pre>printf '%s' 'a-password' | tributary console --hash-password
console.user.alice.password=scrypt$…   # the line it printed
console.user.alice.role=admin           # or read-only</pre>
    <p>When no user is configured at all, the console creates user <code>admin</code> on its first start and
      prints its password once, in its output ("First run: …").</p>
  </div>`;
  if (me && !me.usersConfigured)
    return html`<section>
      <h1>Log in</h1>
      <p data-testid="no-users-note">No console users are configured (none in the config file, none in the users file), so
        nobody can log in or act: every page can be looked at, and actions answer 403.</p>
      ${howTo}
    </section>`;
  return html`<section>
    <h1>Log in</h1>
    <form class="login" onSubmit=${submit}>
      <label>User <input name="user" autocomplete="username" value=${user} onInput=${(e: Event) => setUser((e.target as HTMLInputElement).value)} /></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" value=${password} onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} /></label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <button type="submit" class="primary">Log in</button>
    </form>
    ${howTo}
  </section>`;
}
