// Shared by the group coordinator's handlers (11-join-group, 14-sync-group, …): the client host string
// Kafka records for a member ("/127.0.0.1", InetAddress.toString of the connection's peer).

import type { RequestContext } from "../request-context.js";

export function clientHostOf(ctx: RequestContext): string {
  const a = ctx.clientAddress;
  const i = a.lastIndexOf(":");
  const host = i > 0 ? a.slice(0, i) : a;
  return `/${host.replace(/^::ffff:/, "")}`;
}
