// The console's front end: Preact + htm, routed by the URL's #hash
// (#/c/<cluster>/overview | topics | topics/<t> | messages/<t> | groups | groups/<g> | alerts | audit | zookeeper/<path>,
// #/login);
// bundled by esbuild into
// <build>/console-web/app.js at `npm run build`.

import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { useApi } from "./api.js";
import { Layout, Status } from "./components/layout.js";
import { html } from "./html.js";
import { AlertsPage } from "./pages/alerts.js";
import { AuditPage } from "./pages/audit.js";
import { GroupPage } from "./pages/group.js";
import { GroupsPage } from "./pages/groups.js";
import { LoginPage } from "./pages/login.js";
import { MessagesPage } from "./pages/messages.js";
import { OverviewPage } from "./pages/overview.js";
import { TopicPage } from "./pages/topic.js";
import { TopicsPage } from "./pages/topics.js";
import { ZooKeeperPage } from "./pages/zookeeper.js";

interface Route {
  cluster: string | undefined;
  page: string;
  name: string | undefined;
}

function parseHash(hash: string): Route {
  if (hash.startsWith("#/login")) {
    const back = new URLSearchParams(hash.slice(hash.indexOf("?") + 1)).get("back");
    return { cluster: undefined, page: "login", name: back?.startsWith("#/") ? back : "#/" };
  }
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] !== "c" || !parts[1]) return { cluster: undefined, page: "overview", name: undefined };
  return { cluster: parts[1], page: parts[2] || "overview", name: parts.slice(3).join("/") || undefined };
}

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return hash;
}

function App() {
  const route = parseHash(useHash());
  const clusters = useApi<Array<{ alias: string; zookeeper: string | null }>>("/api/clusters");
  if (!clusters.data) return html`<main><${Status} error=${clusters.error} loading=${true} /></main>`;
  const cluster = route.cluster ?? clusters.data[0]?.alias;
  if (cluster === undefined) return html`<main><p>No cluster configured.</p></main>`;
  let page: unknown;
  if (route.page === "login") page = html`<${LoginPage} back=${route.name ?? "#/"} />`;
  else if (route.page === "audit") page = html`<${AuditPage} cluster=${cluster} />`;
  else if (route.page === "alerts") page = html`<${AlertsPage} cluster=${cluster} />`;
  else if (route.page === "zookeeper")
    page = html`<${ZooKeeperPage} cluster=${cluster} path=${`/${route.name ?? ""}`} />`;
  else if (route.page === "topics" && route.name)
    page = html`<${TopicPage} key=${route.name} cluster=${cluster} topic=${route.name} />`;
  else if (route.page === "messages" && route.name)
    page = html`<${MessagesPage} key=${route.name} cluster=${cluster} topic=${route.name} />`;
  else if (route.page === "topics") page = html`<${TopicsPage} cluster=${cluster} />`;
  else if (route.page === "groups" && route.name)
    page = html`<${GroupPage} key=${route.name} cluster=${cluster} group=${route.name} />`;
  else if (route.page === "groups") page = html`<${GroupsPage} cluster=${cluster} />`;
  else page = html`<${OverviewPage} cluster=${cluster} />`;
  const section =
    route.page === "messages"
      ? "topics"
      : ["topics", "groups", "alerts", "audit", "zookeeper"].includes(route.page)
        ? route.page
        : "overview";
  return html`<${Layout} clusters=${clusters.data} cluster=${cluster} page=${section}>${page}<//>`;
}

const root = document.getElementById("app");
if (root) render(html`<${App} />`, root);
