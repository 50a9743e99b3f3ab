// Opens the history store a URL names (sqlite:<file> or mysql://…) and brings its schema up to date.
// A database that cannot be reached or migrated is one line naming the URL (without its password).

import { ConfigError } from "../console-config.js";
import type { HistoryStore } from "./history-store.js";

export async function openHistory(url: string): Promise<HistoryStore> {
  let store: HistoryStore;
  if (url.startsWith("mysql://") || url.startsWith("mariadb://")) {
    const { MysqlHistory } = await import("./mysql-history.js");
    store = new MysqlHistory(url.replace(/^mariadb:/, "mysql:"));
  } else {
    const { SqliteHistory } = await import("./sqlite-history.js");
    try {
      store = new SqliteHistory(url.slice("sqlite:".length));
    } catch (e) {
      throw new ConfigError(`console.history.url: cannot open ${url}: ${(e as Error).message}`);
    }
  }
  try {
    await store.migrate();
  } catch (e) {
    await store.close().catch(() => {});
    throw new ConfigError(
      `console.history.url: ${store.description}: ${(e as Error).message.split("\n")[0]}`,
    );
  }
  return store;
}
