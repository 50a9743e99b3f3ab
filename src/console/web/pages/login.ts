// Login page: user name and password; on success the session cookie is set by the server and the
// page goes back to where it came from (or the overview).

import { useState } from "preact/hooks";
import { type Me, postJson, setMe } from "../api.js";
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
  return html`<section>
    <h1>Log in</h1>
    <form class="login" onSubmit=${submit}>
      <label>User <input name="user" autocomplete="username" value=${user} onInput=${(e: Event) => setUser((e.target as HTMLInputElement).value)} /></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" value=${password} onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} /></label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <button type="submit" class="primary">Log in</button>
    </form>
  </section>`;
}
