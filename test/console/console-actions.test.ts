// The console's actions end to end in headless Chromium, against a real broker and a real console with
// two users from its config file (an admin and a read-only user, password hashes from
// `tributary console --hash-password`): visitors and the read-only user see no action buttons and are
// refused by the API (401/403); the admin creates a topic (with a config), adds partitions, edits a
// config, sends a test message, previews and executes an offset reset, deletes a group and a topic —
// each behind its confirmation (deletes need the name typed) and each checked on the cluster with the
// project's admin client — and a failing action shows its error; every one of them is in the audit log
// page with its user and outcome. Screenshots go to the printed folder.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin, tpKey } from "../../src/client/admin/group-admin.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { verifyPassword } from "../../src/console/auth/passwords.js";
import { BrokerHarness, runCommand, tributaryArgv, waitFor } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { ConsoleHarness, launchChromium, screenshotDir } from "./console-harness.js";

const skip = skipUnlessInstalled("chromium");
const TOPIC = "orders";
const GROUP = "billing";

let broker: BrokerHarness;
let admin: AdminClient;
let consoleProc: ConsoleHarness;
let browser: Browser;
let dir: string;
let shots: string;

async function hash(password: string): Promise<string> {
  const r = await runCommand(process.execPath, tributaryArgv(["console", "--hash-password"]), {
    input: `${password}\n`,
  });
  assert.equal(r.code, 0, r.stderr);
  const h = r.stdout.trim();
  assert.ok(await verifyPassword(password, h), "the printed hash verifies the password");
  assert.equal(await verifyPassword(`${password}x`, h), false);
  return h;
}

before(async () => {
  if (skip) return;
  broker = await BrokerHarness.start({ name: "console-actions" });
  admin = new AdminClient({ bootstrapServers: broker.bootstrap });
  await admin.createTopics([{ name: TOPIC, numPartitions: 2, replicationFactor: 1 }]);
  const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "0" });
  for (const partition of [0, 1])
    for (let i = 0; i < 5; i++) await producer.send({ topic: TOPIC, partition, value: `v${i}` });
  await producer.close();
  await new GroupAdmin(admin.cluster).alterConsumerGroupOffsets(GROUP, [
    { topic: TOPIC, partition: 0, offset: 3n },
    { topic: TOPIC, partition: 1, offset: 4n },
  ]);
  dir = mkdtempSync(join(tmpdir(), "console-actions-"));
  const config = join(dir, "console.properties");
  writeFileSync(
    config,
    [
      `console.cluster.alias=local`,
      `local.bootstrap.servers=${broker.bootstrap}`,
      `console.user.alice.role=admin`,
      `console.user.alice.password=${await hash("alice-secret")}`,
      `console.user.victor.role=read-only`,
      `console.user.victor.password=${await hash("victor-secret")}`,
    ].join("\n"),
  );
  consoleProc = await ConsoleHarness.startSampling(config, dir);
  shots = screenshotDir("tributary-console-actions-screenshots");
  console.log(`console screenshots: ${shots}`);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close().catch(() => {});
  await consoleProc?.stop();
  await admin?.close();
  await broker?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function session(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "UTC" });
  return { context, page: await context.newPage() };
}

async function login(page: Page, user: string, password: string): Promise<void> {
  await page.goto(`${consoleProc.url}/#/c/local/overview`);
  await page.locator("[data-testid=login-link]").click();
  await page.fill("input[name=user]", user);
  await page.fill("input[name=password]", password);
  await page.click("form.login button[type=submit]");
  await page.locator("[data-testid=whoami]").waitFor({ timeout: 15_000 });
}

/** POST from inside the page (with its cookie, as the front end sends it). */
function post(
  page: Page,
  path: string,
  body: unknown,
): Promise<{ status: number; body: { error?: string } }> {
  return page.evaluate(
    async ([p, b]) => {
      const r = await fetch(p as string, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(b),
      });
      return { status: r.status, body: await r.json() };
    },
    [path, body] as const,
  );
}

test("visitors and read-only users see no actions and are refused", { skip }, async () => {
  const { context, page } = await session();
  try {
    await page.goto(`${consoleProc.url}/#/c/local/topics/${TOPIC}`);
    await page.locator("tr[data-partition='1']").waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("button[name=delete-topic]").count(), 0);
    const anonymous = await post(page, `/api/clusters/local/topics/${TOPIC}/delete`, {});
    assert.deepEqual(anonymous, { status: 401, body: { error: "log in as an admin to act" } });
    assert.equal((await post(page, "/api/login", { user: "victor", password: "wrong" })).status, 401);

    await login(page, "victor", "victor-secret");
    assert.equal((await page.locator("[data-testid=whoami]").textContent())?.trim(), "victor (read-only)");
    await page.goto(`${consoleProc.url}/#/c/local/groups/${GROUP}`);
    await page.locator("[data-testid=total-lag]").waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("button[name=reset-offsets]").count(), 0);
    for (const [path, body] of [
      [`/api/clusters/local/topics/${TOPIC}/delete`, {}],
      [`/api/clusters/local/groups/${GROUP}/reset-offsets`, { scenario: "to-earliest" }],
      ["/api/clusters/local/topics", { name: "nope" }],
    ] as const) {
      const r = await post(page, path, body);
      assert.deepEqual(r, { status: 403, body: { error: "user 'victor' is read-only" } }, path);
    }
    const [t] = await admin.describeTopics([TOPIC]);
    assert.equal(t.error, undefined, "the topic is still there");
    // A cross-site form cannot post: only application/json is taken.
    const form = await page.evaluate(
      async () => (await fetch("/api/logout", { method: "POST", body: "x" })).status,
    );
    assert.equal(form, 415);
  } finally {
    await context.close();
  }
});

test("an admin's actions work, each behind its confirmation, and land in the audit log", {
  skip,
}, async () => {
  const { context, page } = await session();
  const confirm = () => page.click("form.dialog button[name=confirm]");
  const dialogGone = () => page.locator("form.dialog").waitFor({ state: "detached", timeout: 20_000 });
  try {
    await login(page, "alice", "alice-secret");

    // Create a topic with a config.
    await page.goto(`${consoleProc.url}/#/c/local/topics`);
    await page.click("button[name=create-topic]");
    await page.fill("form.dialog input[name=name]", "payments");
    await page.fill("form.dialog input[name=partitions]", "2");
    await page.fill("form.dialog textarea[name=configs]", "retention.ms=3600000");
    await confirm();
    await dialogGone();
    await page.locator("tr[data-topic=payments]").waitFor({ timeout: 15_000 });
    const [created] = await admin.describeTopics(["payments"]);
    assert.equal(created.partitions.length, 2);
    const retention = async () =>
      (await admin.describeConfigs([{ type: "topic", name: "payments" }]))[0].entries.find(
        (e) => e.name === "retention.ms",
      )?.value;
    assert.equal(await retention(), "3600000");

    // The same name again fails, and the dialog says why.
    await page.click("button[name=create-topic]");
    await page.fill("form.dialog input[name=name]", "payments");
    await confirm();
    await page.locator("[data-testid=action-error]").waitFor({ timeout: 15_000 });
    assert.match((await page.locator("[data-testid=action-error]").textContent()) ?? "", /already exists/);
    await page.click("form.dialog button[type=button]");

    // Add partitions, edit a config, send a test message.
    await page.goto(`${consoleProc.url}/#/c/local/topics/payments`);
    await page.click("button[name=add-partitions]");
    await page.fill("form.dialog input[name=totalCount]", "3");
    await confirm();
    await dialogGone();
    await page.locator("tr[data-partition='2']").waitFor({ timeout: 15_000 });
    assert.equal((await admin.describeTopics(["payments"]))[0].partitions.length, 3);

    await page.click("tr[data-config='retention.ms'] button");
    await page.fill("form.dialog input[name=config-value]", "7200000");
    await confirm();
    await dialogGone();
    await waitFor("the new value on the page", 15_000, async () =>
      (await page.locator("tr[data-config='retention.ms'] td.value").textContent()) === "7200000"
        ? true
        : undefined,
    );
    assert.equal(await retention(), "7200000");

    await page.click("button[name=send-message]");
    await page.fill("form.dialog input[name=partition]", "1");
    await page.fill("form.dialog input[name=key]", "k1");
    await page.fill("form.dialog textarea[name=value]", '{"amount":12}');
    await page.fill("form.dialog textarea[name=headers]", "source=console");
    await confirm();
    await dialogGone();
    const sent = await consoleProc.json<{
      records: Array<{ key: string; value: string; headers: Array<{ key: string; value: string }> }>;
    }>("/api/clusters/local/topics/payments/messages?partition=1&offset=0");
    assert.equal(sent.records.length, 1);
    assert.equal(Buffer.from(sent.records[0].key, "base64").toString(), "k1");
    assert.equal(Buffer.from(sent.records[0].value, "base64").toString(), '{"amount":12}');
    assert.deepEqual(sent.records[0].headers, [
      { key: "source", value: Buffer.from("console").toString("base64") },
    ]);

    // Reset offsets: the preview shows the plan, nothing changes until it is executed.
    await page.goto(`${consoleProc.url}/#/c/local/groups/${GROUP}`);
    await page.click("button[name=reset-offsets]");
    await page.selectOption("form.dialog select[name=scenario]", "shift-by");
    await page.fill("form.dialog input[name=value]", "-2");
    await page.click("form.dialog button[name=preview]");
    await page.locator("[data-testid=reset-plan] tr[data-partition='1']").waitFor({ timeout: 15_000 });
    assert.equal(
      await page.locator("[data-testid=reset-plan] tr[data-partition='0'] td.new-offset").textContent(),
      "1",
    );
    assert.equal(
      await page.locator("[data-testid=reset-plan] tr[data-partition='1'] td.new-offset").textContent(),
      "2",
    );
    await page.screenshot({ path: join(shots, "reset-offsets-preview.png"), fullPage: true });
    const committed = async () => {
      const m = await new GroupAdmin(admin.cluster).listConsumerGroupOffsets(GROUP);
      return [m.get(tpKey(TOPIC, 0))?.offset, m.get(tpKey(TOPIC, 1))?.offset];
    };
    assert.deepEqual(await committed(), [3n, 4n], "a dry run changes nothing");
    await confirm();
    await dialogGone();
    assert.deepEqual(await committed(), [1n, 2n]);
    await waitFor("lag 7 on the page", 15_000, async () =>
      (await page.locator("[data-testid=total-lag]").textContent()) === "7" ? true : undefined,
    );

    // Delete the group: the confirm button waits for the typed name.
    await page.click("button[name=delete-group]");
    assert.equal(await page.locator("form.dialog button[name=confirm]").isDisabled(), true);
    await page.fill("form.dialog input[name=confirm-name]", GROUP);
    await page.screenshot({ path: join(shots, "delete-group-confirm.png"), fullPage: true });
    await confirm();
    await dialogGone();
    await page.waitForURL(/#\/c\/local\/groups$/, { timeout: 15_000 });
    const groups = await new GroupAdmin(admin.cluster).listGroups();
    assert.equal(
      groups.find((g) => g.groupId === GROUP),
      undefined,
    );

    // Delete the topic.
    await page.goto(`${consoleProc.url}/#/c/local/topics/payments`);
    await page.click("button[name=delete-topic]");
    await page.fill("form.dialog input[name=confirm-name]", "payment");
    assert.equal(
      await page.locator("form.dialog button[name=confirm]").isDisabled(),
      true,
      "a wrong name does not confirm",
    );
    await page.fill("form.dialog input[name=confirm-name]", "payments");
    await confirm();
    await dialogGone();
    await page.waitForURL(/#\/c\/local\/topics$/, { timeout: 15_000 });
    await waitFor("topic deleted", 20_000, async () =>
      (await admin.describeTopics(["payments"]))[0].error ? true : undefined,
    );

    // The audit log page lists them all, newest first.
    await page.goto(`${consoleProc.url}/#/c/local/audit`);
    await page.locator("[data-testid=audit] tr[data-action]").first().waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(shots, "audit-log.png"), fullPage: true });
    const rows = await page.locator("[data-testid=audit] tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({
        user: tr.querySelector(".user")?.textContent,
        action: tr.querySelector(".action")?.textContent,
        target: tr.querySelector(".target")?.textContent,
        outcome: tr.querySelector(".outcome")?.textContent,
      })),
    );
    const mine = rows.filter((r) => r.user === "alice").reverse();
    assert.deepEqual(
      mine.map((r) => [r.action, r.target, r.outcome?.replace(/^error: .*/, "error")]),
      [
        ["login", "user alice", "ok"],
        ["create-topic", "topic payments", "ok"],
        ["create-topic", "topic payments", "error"],
        ["add-partitions", "topic payments", "ok"],
        ["alter-configs", "topic payments", "ok"],
        ["send-message", "topic payments", "ok"],
        ["reset-offsets", `group ${GROUP}`, "ok (dry run)"],
        ["reset-offsets", `group ${GROUP}`, "ok"],
        ["delete-group", `group ${GROUP}`, "ok"],
        ["delete-topic", "topic payments", "ok"],
      ],
    );
    assert.ok(rows.some((r) => r.user === "victor" && r.action === "login" && r.outcome === "ok"));
    assert.ok(
      rows.some((r) => r.user === "victor" && r.action === "login" && r.outcome?.startsWith("error")),
    );
    assert.ok(!rows.some((r) => r.user === "victor" && r.action !== "login"), "refused requests did not act");
  } finally {
    await context.close();
  }
});
