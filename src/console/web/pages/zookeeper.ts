// ZooKeeper browser page (read-only, clusters in ZooKeeper mode): a znode's path as links up to the
// root, its children as links, its data (pretty JSON, text or hex) and its stat.

import { enc, useApi } from "../api.js";
import { BytesView } from "../components/bytes-view.js";
import { Status } from "../components/layout.js";
import { html } from "../html.js";

interface ZNode {
  path: string;
  children: string[];
  data: string | null;
  stat: {
    version: number;
    cversion: number;
    dataLength: number;
    numChildren: number;
    ctime: number;
    mtime: number;
    ephemeralOwner: string | null;
  };
}

export function ZooKeeperPage(props: { cluster: string; path: string }) {
  const { data, error, version } = useApi<ZNode>(
    `/api/clusters/${enc(props.cluster)}/zookeeper?path=${enc(props.path)}`,
  );
  const link = (path: string) => `#/c/${enc(props.cluster)}/zookeeper${path === "/" ? "" : path}`;
  const parts = props.path.split("/").filter((p) => p !== "");
  const join = (base: string, child: string) => (base === "/" ? `/${child}` : `${base}/${child}`);
  return html`<section data-version=${version}>
    <h1>ZooKeeper</h1>
    <p class="crumbs" data-testid="zk-path"><a href=${link("/")}>/</a>${parts.map(
      (p, i) =>
        html`<a href=${link(`/${parts.slice(0, i + 1).join("/")}`)}>${p}</a>${i < parts.length - 1 ? "/" : ""}`,
    )}</p>
    <${Status} error=${error} loading=${!data && !error} />
    ${
      data &&
      html`<h2>Children (${data.children.length})</h2>
      <ul class="znodes" data-testid="zk-children">${data.children.map(
        (c) => html`<li data-child=${c}><a href=${link(join(data.path, c))}>${c}</a></li>`,
      )}</ul>
      <h2>Data</h2>
      <${BytesView} value=${data.data} format="auto" testid="zk-data" />
      <h2>Stat</h2>
      <div class="table-wrap"><table data-testid="zk-stat"><tbody>
        <tr><th>version</th><td>${data.stat.version}</td></tr>
        <tr><th>cversion</th><td>${data.stat.cversion}</td></tr>
        <tr><th>dataLength</th><td>${data.stat.dataLength}</td></tr>
        <tr><th>numChildren</th><td>${data.stat.numChildren}</td></tr>
        <tr><th>ctime</th><td>${new Date(data.stat.ctime).toISOString()}</td></tr>
        <tr><th>mtime</th><td>${new Date(data.stat.mtime).toISOString()}</td></tr>
        <tr><th>ephemeralOwner</th><td class="mono owner">${data.stat.ephemeralOwner === null ? "persistent" : `0x${data.stat.ephemeralOwner}`}</td></tr>
      </tbody></table></div>`
    }
  </section>`;
}
