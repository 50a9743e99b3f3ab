// The page frame: a header with the cluster switcher, the navigation links and who is logged in (with
// log in / log out; with no users configured, a link to how to add one), then the page. Pages render errors and loading states through Status.

import type { ComponentChildren } from "preact";
import { type Me, postJson, setMe, useMe } from "../api.js";
import { html } from "../html.js";

function Account() {
  const me = useMe();
  if (!me) return null;
  // No users: nobody can act; the login page says how to add one.
  if (!me.usersConfigured)
    return html`<a class="account" href=${`#/login?back=${encodeURIComponent(location.hash)}`} data-testid="no-users"
      title="No console users are configured: nobody can act. How to add one…">Read-only · add a user</a>`;
  const logout = async () => {
    await postJson("/api/logout", {}).catch(() => {});
    setMe({ usersConfigured: true, user: null, role: null } satisfies Me);
  };
  if (me.user === null)
    return html`<a class="account" href=${`#/login?back=${encodeURIComponent(location.hash)}`} data-testid="login-link">Log in</a>`;
  return html`<span class="account"><span data-testid="whoami">${me.user} (${me.role})</span>
    <button type="button" class="link" name="logout" onClick=${logout}>Log out</button></span>`;
}

export function Layout(props: {
  clusters: ReadonlyArray<{ alias: string; zookeeper: string | null }>;
  cluster: string;
  page: string;
  children: ComponentChildren;
}) {
  const base = `#/c/${encodeURIComponent(props.cluster)}`;
  const link = (page: string, label: string) =>
    html`<a href=${`${base}/${page}`} class=${props.page === page ? "active" : ""}>${label}</a>`;
  const onChange = (e: Event) => {
    location.hash = `#/c/${encodeURIComponent((e.target as HTMLSelectElement).value)}/${props.page}`;
  };
  return html`
    <header>
      <span class="brand">Tributary console</span>
      <select aria-label="cluster" value=${props.cluster} onChange=${onChange}>
        ${props.clusters.map((c) => html`<option value=${c.alias}>${c.alias}</option>`)}
      </select>
      <nav>${link("overview", "Overview")} ${link("topics", "Topics")} ${link("groups", "Consumer groups")} ${link("alerts", "Alerts")} ${link("audit", "Audit log")}
        ${props.clusters.find((c) => c.alias === props.cluster)?.zookeeper ? link("zookeeper", "ZooKeeper") : ""}</nav>
      <${Account} />
    </header>
    <main>${props.children}</main>
  `;
}

export function Status(props: { error: string | undefined; loading: boolean }) {
  if (props.error) return html`<p class="error" role="alert">${props.error}</p>`;
  if (props.loading) return html`<p class="muted">Loading…</p>`;
  return null;
}
