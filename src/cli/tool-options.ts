// The options and set-up the admin-based tools share: the --bootstrap-server and --command-config option
// definitions (each tool keeps Kafka's own wording for them) and one AdminClient built from them, closed
// when the tool's work is done.

import { AdminClient, type AdminClientOptions } from "../client/admin/admin-client.js";
import { adminClientOptions, type OptionDef, type ParsedArgs } from "./args.js";

/** `--bootstrap-server <String: describedAs>`; the defaults are the wording most Kafka tools use. */
export function bootstrapServerOption(
  description = "REQUIRED: The server(s) to connect to.",
  describedAs = "server to connect to",
): OptionDef {
  return { name: "bootstrap-server", description, arg: { type: "String", describedAs } };
}

/** `--command-config <String: describedAs>`: the admin client's properties file. */
export function commandConfigOption(
  describedAs: string,
  description = "Property file containing configs to be passed to Admin Client.",
): OptionDef {
  return { name: "command-config", description, arg: { type: "String", describedAs } };
}

/**
 * Runs `body` with an AdminClient configured from --bootstrap-server and --command-config (or the tool's
 * own name for that option, e.g. leader-election's --admin.config; `adjust` may change those options, e.g.
 * the tool's client.id), and closes the client afterwards.
 */
export async function withAdminClient<T>(
  args: ParsedArgs,
  body: (admin: AdminClient) => Promise<T>,
  adjust: (options: AdminClientOptions) => AdminClientOptions = (o) => o,
  configOption = "command-config",
): Promise<T> {
  const admin = new AdminClient(
    adjust(adminClientOptions(args.value("bootstrap-server"), args.value(configOption))),
  );
  try {
    return await body(admin);
  } finally {
    await admin.close();
  }
}
