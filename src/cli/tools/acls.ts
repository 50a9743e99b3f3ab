// `tributary acls` (kafka-acls.sh, Kafka's AclCommand): --add, --remove and --list ACLs through the Admin
// API (CreateAcls, DeleteAcls, DescribeAcls) of --bootstrap-server. Resources: --topic, --group,
// --transactional-id (repeatable), --cluster, with --resource-pattern-type LITERAL (default) or PREFIXED
// (and ANY / MATCH as filters for --list and --remove). Entries: --allow-principal / --deny-principal
// with --allow-host / --deny-host (default *) and --operation (default All); or the conveniences
// --producer (WRITE, DESCRIBE, CREATE on topics; WRITE, DESCRIBE on transactional ids; IDEMPOTENT_WRITE on
// the cluster with --idempotent) and --consumer (READ, DESCRIBE on topics; READ on groups). Prints Kafka's
// lines: "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`:",
// "Current ACLs for resource `…`:" with one "\t(principal=User:alice, host=*, operation=READ,
// permissionType=ALLOW)" per entry; --remove asks "(y/n)" on stdin unless --force.

import { createInterface } from "node:readline";
import { AclAdmin, ANY_BINDING_FILTER } from "../../client/admin/acl-admin.js";
import { KafkaClientError, kafkaExceptionClass } from "../../client/errors.js";
import {
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
  CLUSTER_NAME,
  camelName,
  entryKey,
  entryToString,
  Operation,
  operationName,
  PatternType,
  Permission,
  parseOperation,
  parsePatternType,
  parsePrincipal,
  patternKey,
  patternToString,
  type ResourcePattern,
  type ResourcePatternFilter,
  ResourceType,
  resourceTypeName,
  SUPPORTED_OPERATIONS,
  WILDCARD_HOST,
} from "../../common/acl-binding.js";
import { checkInvalid, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption, commandConfigOption, withAdminClient } from "../tool-options.js";

const NL = "\n";

export const ACLS_SPEC: ToolSpec = {
  name: "acls",
  description: "This tool helps to manage acls on kafka.",
  options: [
    bootstrapServerOption(
      "A list of host/port pairs to use for establishing the connection to the Kafka cluster. This list should be in the form host1:port1,host2:port2,... This config is required for acl management using admin client API.",
      "server to connect to",
    ),
    commandConfigOption("command-config", "A property file containing configs to be passed to Admin Client."),
    {
      name: "topic",
      description:
        "topic to which ACLs should be added or removed. A value of '*' indicates ACL should apply to all topics.",
      arg: { type: "String", describedAs: "topic" },
    },
    { name: "cluster", description: "Add/Remove cluster ACLs." },
    {
      name: "group",
      description:
        "Consumer Group to which the ACLs should be added or removed. A value of '*' indicates the ACLs should apply to all groups.",
      arg: { type: "String", describedAs: "group" },
    },
    {
      name: "transactional-id",
      description:
        "The transactionalId to which ACLs should be added or removed. A value of '*' indicates the ACLs should apply to all transactionalIds.",
      arg: { type: "String", describedAs: "transactional-id" },
    },
    {
      name: "idempotent",
      description:
        "Enable idempotence for the producer. This should be used in combination with the --producer option. Note that idempotence is enabled automatically if the producer is authorized to a particular transactional-id.",
    },
    {
      name: "resource-pattern-type",
      description:
        "The type of the resource pattern or pattern filter. When adding acls, this should be a specific pattern type, e.g. 'literal' or 'prefixed'. When listing or removing acls, a specific pattern type can be used to list or remove acls from specific resource patterns, or use the filter values of 'any' or 'match', where 'any' will match any pattern type, but will match the resource name exactly, where as 'match' will perform pattern matching to list or remove all acls that affect the supplied resource(s). WARNING: 'match', when used in combination with the '--remove' switch, should be used with care.",
      arg: { type: "String", describedAs: "ANY|MATCH|LITERAL|PREFIXED" },
      defaultValue: "LITERAL",
    },
    { name: "add", description: "Indicates you are trying to add ACLs." },
    { name: "remove", description: "Indicates you are trying to remove ACLs." },
    {
      name: "list",
      description:
        "List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to specify a resource.",
    },
    {
      name: "operation",
      description: `Operation that is being allowed or denied. Valid operation names are: ${[2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14].map((o) => camelName(operationName(o))).join(", ")}`,
      arg: { type: "String", describedAs: "operation" },
      defaultValue: "All",
    },
    {
      name: "allow-principal",
      description:
        "principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. For example, User:'*' is the wild card indicating all users.",
      arg: { type: "String", describedAs: "allow-principal" },
    },
    {
      name: "deny-principal",
      description:
        "principal is in principalType:name format. By default anyone not added through --allow-principal is denied access. You only need to use this option as negation to already allowed set. Note that principalType must be supported by the Authorizer being used. For example if you wanted to allow access to all users in the system but not test-user you can define an ACL that allows access to User:'*' and specify --deny-principal=User:test@EXAMPLE.COM. AND PLEASE REMEMBER DENY RULES TAKES PRECEDENCE OVER ALLOW RULES.",
      arg: { type: "String", describedAs: "deny-principal" },
    },
    {
      name: "principal",
      description:
        "List ACLs for the specified principal. principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. Multiple --principal option can be passed.",
      arg: { type: "String", describedAs: "principal" },
    },
    {
      name: "allow-host",
      description:
        "Host from which principals listed in --allow-principal will have access. If you have specified --allow-principal then the default for this option will be set to '*' which allows access from all hosts.",
      arg: { type: "String", describedAs: "allow-host" },
    },
    {
      name: "deny-host",
      description:
        "Host from which principals listed in --deny-principal will be denied access. If you have specified --deny-principal then the default for this option will be set to '*' which denies access from all hosts.",
      arg: { type: "String", describedAs: "deny-host" },
    },
    {
      name: "producer",
      description:
        "Convenience option to add/remove ACLs for producer role. This will generate ACLs that allows WRITE,DESCRIBE and CREATE on topic.",
    },
    {
      name: "consumer",
      description:
        "Convenience option to add/remove ACLs for consumer role. This will generate ACLs that allows READ,DESCRIBE on topic and READ on group.",
    },
    { name: "force", description: "Assume Yes to all queries and do not prompt." },
  ],
};

export function runAcls(argv: string[]): Promise<number> {
  return runTool(ACLS_SPEC, argv, acls, { errorPrefix: "Error while executing ACL command: " });
}

function checkArgs(args: ParsedArgs): void {
  if (!args.has("bootstrap-server"))
    throw new UsageError("One of --bootstrap-server or --bootstrap-controller must be specified");
  const actions = ["add", "remove", "list"].filter((a) => args.has(a)).length;
  if (actions !== 1)
    throw new UsageError("Command must include exactly one action: --list, --add, --remove. ");
  checkInvalid(args, "list", [
    "producer",
    "consumer",
    "allow-host",
    "allow-principal",
    "deny-host",
    "deny-principal",
  ]);
  checkInvalid(args, "producer", ["operation", "deny-principal", "deny-host"]);
  checkInvalid(args, "consumer", ["operation", "deny-principal", "deny-host"]);
  if (args.has("producer") && !args.has("topic") && !args.has("transactional-id"))
    throw new UsageError("With --producer you must specify a --topic or --transactional-id");
  if (args.has("idempotent") && !args.has("producer"))
    throw new UsageError("The --idempotent option is only available if --producer is set");
  if (
    args.has("consumer") &&
    (!args.has("topic") ||
      !args.has("group") ||
      (!args.has("producer") && (args.has("cluster") || args.has("transactional-id"))))
  )
    throw new UsageError(
      "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.",
    );
}

function patternTypeOf(args: ParsedArgs): number {
  const raw = args.value("resource-pattern-type") ?? "LITERAL";
  const t = parsePatternType(raw);
  if (t === undefined || t === PatternType.UNKNOWN)
    throw new UsageError(
      `Cannot parse option --resource-pattern-type value ${raw}: expected one of ANY, MATCH, LITERAL, PREFIXED`,
    );
  return t;
}

/** The resource filters of --topic/--group/--transactional-id/--cluster (Kafka's getResourceFilter). */
function resourceFilters(args: ParsedArgs, dieIfNone: boolean): ResourcePatternFilter[] {
  const patternType = patternTypeOf(args);
  const out = new Map<string, ResourcePatternFilter>();
  const add = (resourceType: number, name: string, pt = patternType): void => {
    out.set(`${resourceType}\u0000${pt}\u0000${name}`, { resourceType, name, patternType: pt });
  };
  for (const t of args.values("topic")) add(ResourceType.TOPIC, t.trim());
  if (patternType === PatternType.LITERAL && (args.has("cluster") || args.has("idempotent")))
    add(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL);
  for (const g of args.values("group")) add(ResourceType.GROUP, g.trim());
  for (const id of args.values("transactional-id")) add(ResourceType.TRANSACTIONAL_ID, id);
  if (out.size === 0 && dieIfNone)
    throw new UsageError(
      "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>",
    );
  return [...out.values()];
}

function principals(args: ParsedArgs, option: string): string[] {
  return [
    ...new Set(
      args.values(option).map((s) => {
        const p = s.trim();
        if (parsePrincipal(p) === undefined)
          throw new UsageError(`expected a string in format principalType:principalName but got ${p}`);
        return p;
      }),
    ),
  ];
}

function hosts(args: ParsedArgs, hostOption: string, principalOption: string): string[] {
  if (args.has(hostOption)) return [...new Set(args.values(hostOption).map((h) => h.trim()))];
  return args.has(principalOption) ? [WILDCARD_HOST] : [];
}

function entriesFor(args: ParsedArgs, operations: readonly number[]): AccessControlEntry[] {
  const out = new Map<string, AccessControlEntry>();
  const add = (ps: string[], permissionType: number, hs: string[]): void => {
    for (const principal of ps)
      for (const operation of operations)
        for (const host of hs) {
          const e = { principal, host, operation, permissionType };
          out.set(entryKey(e), e);
        }
  };
  const allowHosts = hosts(args, "allow-host", "allow-principal");
  const denyHosts = hosts(args, "deny-host", "deny-principal");
  add(principals(args, "allow-principal"), Permission.ALLOW, allowHosts);
  add(principals(args, "deny-principal"), Permission.DENY, denyHosts);
  return [...out.values()];
}

function cliOperations(args: ParsedArgs): number[] {
  const given = args.values("operation");
  const names = given.length > 0 ? given : ["All"];
  return [...new Set(names.map((n) => parseOperation(n.trim()) ?? Operation.UNKNOWN))];
}

/** Kafka's getResourceFilterToAcls: each resource filter with the entries to add or remove. */
function filterToAcls(
  args: ParsedArgs,
): Map<string, { filter: ResourcePatternFilter; entries: AccessControlEntry[] }> {
  const out = new Map<string, { filter: ResourcePatternFilter; entries: AccessControlEntry[] }>();
  const key = (f: ResourcePatternFilter): string => `${f.resourceType}\u0000${f.patternType}\u0000${f.name}`;
  const put = (f: ResourcePatternFilter, entries: AccessControlEntry[], merge: boolean): void => {
    const prev = out.get(key(f));
    const all = new Map((merge && prev ? prev.entries : []).map((e) => [entryKey(e), e]));
    for (const e of entries) all.set(entryKey(e), e);
    out.set(key(f), { filter: f, entries: [...all.values()] });
  };
  const filters = resourceFilters(args, true);
  if (!args.has("producer") && !args.has("consumer")) {
    const entries = entriesFor(args, cliOperations(args));
    for (const f of filters) put(f, entries, false);
  }
  if (args.has("producer")) {
    for (const f of filters) {
      if (f.resourceType === ResourceType.TOPIC)
        put(f, entriesFor(args, [Operation.WRITE, Operation.DESCRIBE, Operation.CREATE]), false);
      if (f.resourceType === ResourceType.TRANSACTIONAL_ID)
        put(f, entriesFor(args, [Operation.WRITE, Operation.DESCRIBE]), false);
    }
    if (args.has("idempotent"))
      put(
        { resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, patternType: PatternType.LITERAL },
        entriesFor(args, [Operation.IDEMPOTENT_WRITE]),
        false,
      );
  }
  if (args.has("consumer")) {
    for (const f of filters) {
      if (f.resourceType === ResourceType.TOPIC)
        put(f, entriesFor(args, [Operation.READ, Operation.DESCRIBE]), true);
      if (f.resourceType === ResourceType.GROUP) put(f, entriesFor(args, [Operation.READ]), true);
    }
  }
  for (const { filter, entries } of out.values()) {
    const valid = [...(SUPPORTED_OPERATIONS.get(filter.resourceType) ?? []), Operation.ALL];
    if (entries.some((e) => !valid.includes(e.operation)))
      throw new UsageError(
        `ResourceType ${resourceTypeName(filter.resourceType)} only supports operations ${valid.map(operationName).join(", ")}`,
      );
  }
  return out;
}

function confirm(args: ParsedArgs, message: string): Promise<boolean> {
  if (args.has("force")) return Promise.resolve(true);
  process.stdout.write(`${message}\n`);
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin });
    let answered = false;
    rl.once("line", (line) => {
      answered = true;
      rl.close();
      resolve(line.trim().toLowerCase() === "y");
    });
    rl.once("close", () => {
      if (!answered) resolve(false);
    });
  });
}

function sortedBindings(
  bindings: AclBinding[],
): Map<string, { pattern: ResourcePattern; entries: AccessControlEntry[] }> {
  const byPattern = new Map<string, { pattern: ResourcePattern; entries: AccessControlEntry[] }>();
  const sorted = [...bindings].sort(
    (a, b) =>
      a.pattern.resourceType - b.pattern.resourceType ||
      a.pattern.patternType - b.pattern.patternType ||
      (a.pattern.name < b.pattern.name ? -1 : a.pattern.name > b.pattern.name ? 1 : 0),
  );
  for (const b of sorted) {
    const k = patternKey(b.pattern);
    let g = byPattern.get(k);
    if (g === undefined) {
      g = { pattern: b.pattern, entries: [] };
      byPattern.set(k, g);
    }
    if (!g.entries.some((e) => entryKey(e) === entryKey(b.entry))) g.entries.push(b.entry);
  }
  return byPattern;
}

function printResourceAcls(
  groups: Iterable<{ pattern: ResourcePattern; entries: AccessControlEntry[] }>,
): void {
  for (const { pattern, entries } of groups)
    process.stdout.write(
      `Current ACLs for resource \`${patternToString(pattern)}\`:${NL}${entries.map((e) => `\t${entryToString(e)}`).join(NL)}${NL}${NL}`,
    );
}

function bindingToString(b: AclBinding): string {
  return `(pattern=${patternToString(b.pattern)}, entry=${entryToString(b.entry)})`;
}

async function acls(args: ParsedArgs): Promise<number> {
  checkArgs(args);
  const patternType = patternTypeOf(args);
  if (args.has("add") && patternType !== PatternType.LITERAL && patternType !== PatternType.PREFIXED)
    throw new UsageError(
      `A '--resource-pattern-type' value of '${["UNKNOWN", "ANY", "MATCH"][patternType]}' is not valid when adding acls.`,
    );
  try {
    return await manage(args);
  } catch (e) {
    // As AclCommand prints the failed future's cause: the Kafka exception's class and message.
    if (e instanceof KafkaClientError) throw new Error(`${kafkaExceptionClass(e)}: ${e.message}`);
    throw e;
  }
}

function manage(args: ParsedArgs): Promise<number> {
  return withAdminClient(args, async (admin) => {
    const aclAdmin = new AclAdmin(admin.cluster);
    if (args.has("add")) {
      for (const { filter, entries } of filterToAcls(args).values()) {
        if (entries.length === 0)
          throw new UsageError(
            "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.",
          );
        const pattern = {
          resourceType: filter.resourceType,
          name: filter.name as string,
          patternType: filter.patternType,
        };
        const existing = new Set(
          (await aclAdmin.describeAcls({ pattern: filter, entry: ANY_BINDING_FILTER.entry })).map(
            (b) => `${patternKey(b.pattern)}\u0000${entryKey(b.entry)}`,
          ),
        );
        const toAdd: AclBinding[] = [];
        for (const entry of entries) {
          const binding = { pattern, entry };
          if (existing.has(`${patternKey(pattern)}\u0000${entryKey(entry)}`))
            process.stdout.write(`Acl ${bindingToString(binding)} already exists.${NL}`);
          else toAdd.push(binding);
        }
        if (toAdd.length > 0) {
          process.stdout.write(
            `Adding ACLs for resource \`${patternToString(pattern)}\`: ${NL} ${toAdd.map((b) => `\t${entryToString(b.entry)}`).join(NL)}${NL}${NL}`,
          );
          await aclAdmin.createAcls(toAdd);
        }
      }
      return 0;
    }
    if (args.has("remove")) {
      for (const { filter, entries } of filterToAcls(args).values()) {
        const message =
          entries.length === 0
            ? `Are you sure you want to delete all ACLs for resource filter \`${patternToString(filter)}\`? (y/n)`
            : `Are you sure you want to remove ACLs: ${NL} ${entries.map((e) => `\t${entryToString(e)}`).join(NL)}${NL} from resource filter \`${patternToString(filter)}\`? (y/n)`;
        if (!(await confirm(args, message))) continue;
        const filters: AclBindingFilter[] =
          entries.length === 0
            ? [{ pattern: filter, entry: ANY_BINDING_FILTER.entry }]
            : entries.map((e) => ({ pattern: filter, entry: { ...e } }));
        await aclAdmin.deleteAcls(filters);
      }
      return 0;
    }
    const filters = resourceFilters(args, false);
    const bindings =
      filters.length === 0
        ? await aclAdmin.describeAcls(ANY_BINDING_FILTER)
        : (
            await Promise.all(
              filters.map((f) => aclAdmin.describeAcls({ pattern: f, entry: ANY_BINDING_FILTER.entry })),
            )
          ).flat();
    const listPrincipals = args.values("principal").map((p) => p.trim());
    if (listPrincipals.length === 0) printResourceAcls(sortedBindings(bindings).values());
    else
      for (const principal of new Set(listPrincipals)) {
        process.stdout.write(`ACLs for principal \`${principal}\`${NL}`);
        printResourceAcls(sortedBindings(bindings.filter((b) => b.entry.principal === principal)).values());
      }
    return 0;
  });
}
