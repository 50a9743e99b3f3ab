// `tributary configs` for users and clients (Kafka's ConfigCommand with --bootstrap-server): client quota
// configs through AlterClientQuotas / DescribeClientQuotas.
//   --alter --add-config 'producer_byte_rate=1048576,consumer_byte_rate=2097152' --entity-type users
//     --entity-name alice [--entity-type clients --entity-name app]   (or --entity-default for a name)
//     → `Completed updating config for user alice.` / `Completed updating default config for users in the cluster.`
//   --alter --delete-config producer_byte_rate …   (a key the entity does not have: `Invalid config(s): k`)
//   --describe --entity-type users|clients [--entity-name n | --entity-default] [--entity-type clients …]
//     → `Quota configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1048576.0`
// SCRAM credential keys of users (SCRAM-SHA-256 / SCRAM-SHA-512) go to configs-scram.ts
// (AlterUserScramCredentials), and --describe of users adds their SCRAM lines after the quota lines, as
// Kafka's describeClientQuotaAndUserScramCredentialConfigs does.

import type { AdminClient } from "../../client/admin/admin-client.js";
import {
  type ClientQuotaEntity,
  type ClientQuotaFilterComponent,
  ClientQuotasAdmin,
} from "../../client/admin/client-quotas-admin.js";
import { javaDoubleToString } from "../../common/java-double.js";
import { type ParsedArgs, UsageError } from "../args.js";
import { withAdminClient } from "../tool-options.js";
import { configsToAlter } from "./configs.js";
import { alterUserScramCredentialConfigs, describeUserScramCredentialConfigs } from "./configs-scram.js";

const QUOTA_KEYS = new Set([
  "producer_byte_rate",
  "consumer_byte_rate",
  "request_percentage",
  "controller_mutation_rate",
]);
const SCRAM_KEYS = new Set(["SCRAM-SHA-256", "SCRAM-SHA-512"]);
const ENTITY_TYPE: Readonly<Record<string, string>> = { users: "user", clients: "client-id" };
const DESCRIPTION: Readonly<Record<string, string>> = { user: "user-principal", "client-id": "client-id" };

/** --entity-name values and --entity-default ("") in command-line order (ConfigCommandOptions.entityNames). */
function entityNames(argv: readonly string[]): string[] {
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--entity-default") names.push("");
    else if (a === "--entity-name" && i + 1 < argv.length) names.push(argv[++i]);
    else if (a.startsWith("--entity-name=")) names.push(a.slice("--entity-name=".length));
  }
  return names;
}

interface Entities {
  readonly types: string[];
  readonly names: string[];
}

function parseEntities(args: ParsedArgs, argv: readonly string[]): Entities {
  const types = args.values("entity-type");
  for (const t of types)
    if (!(t in ENTITY_TYPE))
      throw new UsageError("Only 'users' and 'clients' entity types may be specified together");
  if (new Set(types).size !== types.length)
    throw new UsageError(`Duplicate entity type(s) specified: ${types[0]}`);
  const names = entityNames(argv);
  if (names.length > types.length) throw new UsageError("More entity names specified than entity types");
  if (!args.has("bootstrap-server")) throw new UsageError("--bootstrap-server must be specified");
  const actions = ["alter", "describe"].filter((a) => args.has(a));
  if (actions.length !== 1)
    throw new UsageError("Command must include exactly one action: --describe, --alter");
  if (args.has("alter")) {
    if (names.length === 0)
      throw new UsageError(
        "An entity-name or default entity must be specified with --alter of users, clients, brokers or ips",
      );
    if (names.length !== types.length)
      throw new UsageError(
        "--entity-name or --entity-default must be specified with each --entity-type for --alter",
      );
    if (args.has("add-config") && args.has("add-config-file"))
      throw new UsageError("Only one of --add-config or --add-config-file must be specified");
    if (!args.has("add-config") && !args.has("add-config-file") && !args.has("delete-config"))
      throw new UsageError(
        "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter",
      );
  }
  return { types, names };
}

/** ConfigCommand for --entity-type users / clients. */
export async function clientQuotaConfigsCommand(args: ParsedArgs, argv: readonly string[]): Promise<number> {
  const entities = parseEntities(args, argv);
  await withAdminClient(args, async (admin) => {
    if (args.has("alter")) await alter(admin, args, entities);
    else await describe(admin, entities);
  });
  return 0;
}

function components(e: Entities): ClientQuotaFilterComponent[] {
  return e.types.map((t, i) => {
    const entityType = ENTITY_TYPE[t];
    const name = e.names[i];
    return name === undefined ? { entityType } : { entityType, match: name === "" ? null : name };
  });
}

async function describeQuotas(admin: AdminClient, e: Entities) {
  return new ClientQuotasAdmin(admin.cluster).describeClientQuotas(components(e), true);
}

function entityText(entity: ClientQuotaEntity): string {
  return ["user", "client-id"]
    .filter((t) => t in entity)
    .map((t) => (entity[t] === null ? `the default ${DESCRIPTION[t]}` : `${DESCRIPTION[t]} '${entity[t]}'`))
    .join(", ");
}

async function describe(admin: AdminClient, e: Entities): Promise<void> {
  const found = await describeQuotas(admin, e);
  const lines = found.map((q) => {
    const values = [...q.values]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${javaDoubleToString(v)}`)
      .join(", ");
    return `Quota configs for ${entityText(q.entity)} are ${values}`;
  });
  // Users alone and not the default entity: their SCRAM credentials too (all users without a name).
  if (e.types.length === 1 && e.types[0] === "users" && !e.names.includes(""))
    lines.push(...(await describeUserScramCredentialConfigs(admin.cluster, e.names)));
  if (lines.length > 0) process.stdout.write(`${lines.join("\n")}\n`);
}

async function alter(admin: AdminClient, args: ParsedArgs, e: Entities): Promise<void> {
  const { toAdd, toDelete } = configsToAlter(args);
  const head = e.types[0];
  const unknownAdd = [...toAdd.keys()].filter((k) => !QUOTA_KEYS.has(k) && !SCRAM_KEYS.has(k));
  const unknownDelete = toDelete.filter((k) => !QUOTA_KEYS.has(k) && !SCRAM_KEYS.has(k));
  const scramAdd = [...toAdd.keys()].filter((k) => SCRAM_KEYS.has(k));
  const scramDelete = toDelete.filter((k) => SCRAM_KEYS.has(k));
  const hasQuota = [...toAdd.keys(), ...toDelete].some((k) => QUOTA_KEYS.has(k));
  if (head === "clients" || e.types.length === 2) {
    if (unknownAdd.length > 0 || scramAdd.length > 0)
      throw new UsageError(
        `Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: Set(${[...unknownAdd, ...scramAdd].join(", ")})`,
      );
    if (unknownDelete.length > 0 || scramDelete.length > 0)
      throw new UsageError(
        `Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: List(${[...unknownDelete, ...scramDelete].join(", ")})`,
      );
  } else {
    if (unknownAdd.length > 0)
      throw new UsageError(
        `Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: Set(${unknownAdd.join(", ")})`,
      );
    if (unknownDelete.length > 0)
      throw new UsageError(
        `Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: List(${unknownDelete.join(", ")})`,
      );
    if (scramAdd.length > 0 || scramDelete.length > 0) {
      if (e.names.includes(""))
        throw new UsageError(
          "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.",
        );
      if (hasQuota)
        throw new UsageError(
          "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.",
        );
      await alterUserScramCredentialConfigs(admin.cluster, e.names[0], toAdd, toDelete);
      process.stdout.write(`Completed updating config for user ${e.names[0]}.\n`);
      return;
    }
  }

  // ConfigCommand.alterQuotaConfigs: keys to delete must be set; values must be numbers.
  const [current] = await describeQuotas(admin, e);
  const invalid = toDelete.filter((k) => !current?.values.has(k));
  if (invalid.length > 0) throw new UsageError(`Invalid config(s): ${invalid.join(",")}`);
  const ops = [
    ...[...toAdd].map(([key, text]) => {
      const value = text.trim() === "" ? Number.NaN : Number(text);
      if (Number.isNaN(value))
        throw new UsageError(`Cannot parse quota configuration value for ${key}: ${text}`);
      return { key, value };
    }),
    ...toDelete.map((key) => ({ key, value: null })),
  ];
  const entity: Record<string, string | null> = {};
  e.types.forEach((t, i) => {
    entity[ENTITY_TYPE[t]] = e.names[i] === "" ? null : e.names[i];
  });
  const [result] = await new ClientQuotasAdmin(admin.cluster).alterClientQuotas([{ entity, ops }]);
  if (result.error) throw result.error;
  const name = e.names[0];
  process.stdout.write(
    name !== ""
      ? `Completed updating config for ${head.slice(0, -1)} ${name}.\n`
      : `Completed updating default config for ${head} in the cluster.\n`,
  );
}
