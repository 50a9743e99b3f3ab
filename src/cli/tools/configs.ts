// `tributary configs` (kafka-configs.sh, Kafka's ConfigCommand with --bootstrap-server) for topics,
// brokers (one broker or --entity-default, the cluster-wide default) and broker-loggers (users and
// clients: configs-quotas.ts): --describe
// [--all] prints `Dynamic configs for topic t are:` then `  k=v sensitive=false synonyms={SOURCE:k=v, …}`
// lines; --alter --add-config k=v,k2=[a,b] / --add-config-file / --delete-config k sends
// IncrementalAlterConfigs and prints `Completed updating config for topic t.`. Users and clients go to
// configs-quotas.ts (quota keys; users' SCRAM credential keys through configs-scram.ts).

import type { AdminClient } from "../../client/admin/admin-client.js";
import {
  type AlterConfigOp,
  CONFIG_SOURCE_NAMES,
  type ConfigEntry,
  type ConfigResource,
  throwFirstError,
} from "../../client/admin/admin-types.js";
import { loadPropertiesFile } from "../../client/producer/properties-file.js";
import { checkInvalid, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption, commandConfigOption, withAdminClient } from "../tool-options.js";

const SUPPORTED_TYPES = ["topics", "clients", "users", "brokers", "broker-loggers"];
/** ConfigEntry.ConfigSource ids that --describe (without --all) shows per entity kind. */
const DYNAMIC_TOPIC_CONFIG = 1;
const DYNAMIC_BROKER_CONFIG = 2;
const DYNAMIC_DEFAULT_BROKER_CONFIG = 3;

export const CONFIGS_SPEC: ToolSpec = {
  name: "configs",
  description:
    "This tool helps to manipulate and describe entity config for a topic, client, user, broker or ip",
  options: [
    {
      name: "add-config",
      description:
        "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.",
      arg: { type: "String", describedAs: "String" },
    },
    {
      name: "add-config-file",
      description:
        "Path to a properties file with configs to add. See add-config for a list of valid configurations.",
      arg: { type: "String", describedAs: "String" },
    },
    {
      name: "all",
      description:
        "List all configs for the given topic, broker, or broker-logger entity (includes static configuration when the entity type is brokers)",
    },
    { name: "alter", description: "Alter the configuration for the entity." },
    bootstrapServerOption(
      "The Kafka server to connect to. This is required for describing and altering broker configs.",
    ),
    { name: "broker", description: "The broker's ID.", arg: { type: "String", describedAs: "String" } },
    { name: "broker-defaults", description: "The config defaults for all brokers." },
    {
      name: "broker-logger",
      description: "The broker's ID for its logger config.",
      arg: { type: "String", describedAs: "String" },
    },
    commandConfigOption(
      "command config property file",
      "Property file containing configs to be passed to Admin Client. This is used only with --bootstrap-server option for describing and altering broker configs.",
    ),
    {
      name: "delete-config",
      description: "config keys to remove 'k1,k2'",
      arg: { type: "String", describedAs: "String" },
    },
    { name: "describe", description: "List configs for the given entity." },
    {
      name: "entity-default",
      description:
        "Default entity name for clients/users/brokers/ips (applies to corresponding entity type in command line)",
    },
    {
      name: "entity-name",
      description: "Name of entity (topic name/client id/user principal name/broker id/ip)",
      arg: { type: "String", describedAs: "String" },
    },
    {
      name: "entity-type",
      description: "Type of entity (topics/clients/users/brokers/broker-loggers/ips)",
      arg: { type: "String", describedAs: "String" },
    },
    { name: "force", description: "Suppress console prompts" },
    { name: "topic", description: "The topic's name.", arg: { type: "String", describedAs: "String" } },
  ],
};

export function runConfigs(argv: string[]): Promise<number> {
  return runTool(CONFIGS_SPEC, argv, (args) => configsCommand(args, argv), {
    errorPrefix: `Error while executing config command with args '${argv.join(" ")}': `,
  });
}

interface Entity {
  readonly type: string;
  /** "" for the default entity. */
  readonly name: string | undefined;
}

/** ConfigCommandOptions.entityTypes / entityNames / checkArgs for the entity types served here. */
function parseEntity(args: ParsedArgs): Entity {
  const flags: Array<[string, string]> = [
    ["topic", "topics"],
    ["broker", "brokers"],
    ["broker-logger", "broker-loggers"],
  ];
  const types = [
    ...args.values("entity-type"),
    ...flags.filter(([f]) => args.has(f)).map(([, t]) => t),
    ...(args.has("broker-defaults") ? ["brokers"] : []),
  ];
  const dup = types.filter((t, i) => types.indexOf(t) !== i);
  if (dup.length > 0)
    throw new UsageError(`Duplicate entity type(s) specified: ${[...new Set(dup)].join(",")}`);
  for (const t of types)
    if (!SUPPORTED_TYPES.includes(t))
      throw new UsageError(
        `Invalid entity type ${t}, the entity type must be one of ${SUPPORTED_TYPES.join(",")} with the --bootstrap-server argument`,
      );
  if (types.length === 0) throw new UsageError("At least one entity type must be specified");
  if (types.length > 1)
    throw new UsageError("Only 'users' and 'clients' entity types may be specified together");
  const generic = args.has("entity-name") || args.has("entity-type") || args.has("entity-default");
  const specific = flags.some(([f]) => args.has(f)) || args.has("broker-defaults");
  if (generic && specific)
    throw new UsageError(
      "--entity-{type,name,default} should not be used in conjunction with specific entity flags",
    );
  const names = [
    ...args.values("entity-name"),
    ...(args.has("entity-default") || args.has("broker-defaults") ? [""] : []),
    ...flags.filter(([f]) => args.has(f)).map(([f]) => args.value(f)!),
  ];
  if (names.length > 1) throw new UsageError("More entity names specified than entity types");
  const type = types[0];
  const name = names[0];
  if ((type === "brokers" || type === "broker-loggers") && name && !/^[+-]?\d+$/.test(name))
    throw new UsageError(`The entity name for ${type} must be a valid integer broker id, but it is: ${name}`);
  return { type, name };
}

function checkArgs(args: ParsedArgs): Entity {
  const actions = ["alter", "describe"].filter((a) => args.has(a));
  if (actions.length !== 1)
    throw new UsageError("Command must include exactly one action: --describe, --alter");
  checkInvalid(args, "describe", ["alter", "add-config", "add-config-file", "delete-config"]);
  const entity = parseEntity(args);
  if (!args.has("bootstrap-server")) throw new UsageError("--bootstrap-server must be specified");
  if (args.has("describe") && entity.type === "broker-loggers" && !entity.name)
    throw new UsageError(`an entity name must be specified with --describe of ${entity.type}`);
  if (args.has("alter")) {
    if (entity.type === "brokers" || entity.type === "users") {
      if (entity.name === undefined)
        throw new UsageError(
          "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips",
        );
    } else if (!entity.name)
      throw new UsageError(`an entity name must be specified with --alter of ${entity.type}`);
    if (args.has("add-config") && args.has("add-config-file"))
      throw new UsageError("Only one of --add-config or --add-config-file must be specified");
    if (!args.has("add-config") && !args.has("add-config-file") && !args.has("delete-config"))
      throw new UsageError(
        "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter",
      );
  }
  return entity;
}

/** ConfigCommand.parseConfigsToBeAdded: commas split pairs except inside [...]; brackets are dropped. */
export function parseConfigsToBeAdded(text: string): Array<[string, string]> {
  const pairs: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "[") depth++;
    else if (c === "]") depth = Math.max(0, depth - 1);
    else if (c === "," && depth === 0) {
      pairs.push(text.slice(start, i));
      start = i + 1;
    }
  }
  pairs.push(text.slice(start));
  return pairs.map((p) => {
    const eq = [...p.matchAll(/\s*=\s*/g)].filter((m) => {
      const before = p.slice(0, m.index);
      return before.lastIndexOf("[") <= before.lastIndexOf("]");
    });
    if (eq.length !== 1)
      throw new UsageError(
        'requirement failed: Invalid entity config: all configs to be added must be in the format "key=val".',
      );
    const m = eq[0];
    const key = p.slice(0, m.index).trim();
    const value = p
      .slice((m.index ?? 0) + m[0].length)
      .replace(/[[\]]/g, "")
      .trim();
    return [key, value] as [string, string];
  });
}

function resource(entity: Entity, name: string): ConfigResource {
  return {
    type: entity.type === "topics" ? "topic" : entity.type === "brokers" ? "broker" : "broker-logger",
    name,
  };
}

function entryLine(e: ConfigEntry): string {
  const synonyms = e.synonyms.map(
    (s) => `${CONFIG_SOURCE_NAMES[s.source] ?? "UNKNOWN"}:${s.name}=${s.value}`,
  );
  return `  ${e.name}=${e.value} sensitive=${e.isSensitive} synonyms={${synonyms.join(", ")}}`;
}

async function configsCommand(args: ParsedArgs, argv: readonly string[]): Promise<number> {
  // users / clients: client quotas (configs-quotas.ts; loaded lazily, it uses this module's parsers).
  if (args.values("entity-type").some((t) => t === "users" || t === "clients")) {
    const { clientQuotaConfigsCommand } = await import("./configs-quotas.js");
    return clientQuotaConfigsCommand(args, argv);
  }
  const entity = checkArgs(args);
  await withAdminClient(args, async (admin) => {
    if (args.has("alter")) await alter(admin, args, entity);
    else await describe(admin, args, entity);
  });
  return 0;
}

/** Entries --describe shows: every entry with --all, else those of the entity's dynamic source. */
async function entriesOf(
  admin: AdminClient,
  entity: Entity,
  name: string,
  all: boolean,
): Promise<ConfigEntry[]> {
  const [result] = await admin.describeConfigs([resource(entity, name)], { includeSynonyms: true });
  throwFirstError([result]);
  const source =
    entity.type === "topics"
      ? DYNAMIC_TOPIC_CONFIG
      : entity.type === "brokers"
        ? name === ""
          ? DYNAMIC_DEFAULT_BROKER_CONFIG
          : DYNAMIC_BROKER_CONFIG
        : undefined;
  return result.entries.filter((e) => all || source === undefined || e.source === source);
}

async function describe(admin: AdminClient, args: ParsedArgs, entity: Entity): Promise<void> {
  const all = args.has("all");
  let names: string[];
  if (entity.name !== undefined) names = [entity.name];
  else if (entity.type === "topics")
    names = (await admin.listTopics({ listInternal: true })).map((t) => t.name);
  else names = [...(await admin.describeCluster()).brokers.map((b) => String(b.id)), ""];
  for (const name of names) {
    const entries = await entriesOf(admin, entity, name, all);
    const out =
      name === ""
        ? [`Default configs for ${entity.type} in the cluster are:`]
        : [`${all ? "All" : "Dynamic"} configs for ${entity.type.slice(0, -1)} ${name} are:`];
    for (const e of entries) out.push(entryLine(e));
    process.stdout.write(`${out.join("\n")}\n`);
  }
}

/** --alter's configs to set (--add-config, --add-config-file) and to delete (--delete-config). */
export function configsToAlter(args: ParsedArgs): { toAdd: Map<string, string>; toDelete: string[] } {
  const toAdd = new Map<string, string>();
  const addText = args.value("add-config");
  if (addText !== undefined) for (const [k, v] of parseConfigsToBeAdded(addText)) toAdd.set(k, v);
  const addFile = args.value("add-config-file");
  if (addFile !== undefined)
    for (const [k, v] of Object.entries(loadPropertiesFile(addFile))) toAdd.set(k, v);
  const toDelete = args
    .values("delete-config")
    .flatMap((v) => v.split(","))
    .map((k) => k.trim());
  return { toAdd, toDelete };
}

async function alter(admin: AdminClient, args: ParsedArgs, entity: Entity): Promise<void> {
  const name = entity.name ?? "";
  const { toAdd, toDelete } = configsToAlter(args);
  await alterResourceConfigs(admin, entity, name, toAdd, toDelete);
  process.stdout.write(
    name !== ""
      ? `Completed updating config for ${entity.type.slice(0, -1)} ${name}.\n`
      : `Completed updating default config for ${entity.type} in the cluster.\n`,
  );
}

/** IncrementalAlterConfigs of a topic, broker or broker-logger. */
async function alterResourceConfigs(
  admin: AdminClient,
  entity: Entity,
  name: string,
  toAdd: ReadonlyMap<string, string>,
  toDelete: readonly string[],
): Promise<void> {
  if (toDelete.length > 0) {
    const current = await entriesOf(admin, entity, name, false);
    const invalid = toDelete.filter((k) => !current.some((e) => e.name === k));
    if (invalid.length > 0) throw new UsageError(`Invalid config(s): ${invalid.join(",")}`);
  }
  const ops: AlterConfigOp[] = [
    ...[...toAdd].map(([k, v]): AlterConfigOp => ({ name: k, op: "SET", value: v })),
    ...toDelete.map((k): AlterConfigOp => ({ name: k, op: "DELETE" })),
  ];
  const [result] = await admin.incrementalAlterConfigs([{ resource: resource(entity, name), ops }]);
  throwFirstError([result]);
}
